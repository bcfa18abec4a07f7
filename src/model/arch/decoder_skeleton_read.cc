// The reading half of the DecoderSpec builder (decoder_skeleton_read.h): the keys each spec
// names, with the config classes' defaults, read and checked once before decoder_skeleton.cc
// emits a tensor.

#include "model/arch/decoder_skeleton_read.h"

#include <fmt/format.h>

#include "model/arch/decoder_kit.h"

namespace memfit::arch {

SlidingRule::SlidingRule(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s,
                         uint64_t layers)
    : kind_(s.sliding), layers_(layers) {
  switch (kind_) {
    case SlidingRuleKind::kNone:
      return;
    case SlidingRuleKind::kNoneCheckTypes:
      types_ = LayerTypesOrEmpty(b, c, layers);
      return;
    case SlidingRuleKind::kAll:
      window_ = Get(b, c.UintOr(s.window_key, s.window_default));
      return;
    case SlidingRuleKind::kAfterMaxWindow:
      window_ = Get(b, c.BoolOr("use_sliding_window", false))
                    ? Get(b, c.UintOr(s.window_key, s.window_default)) : 0;
      every_ = Get(b, c.UintOr("max_window_layers", 0));
      return;
    case SlidingRuleKind::kExaone4: {  // absent -> window_default, null -> no sliding layers
      const auto it = c.raw().find(s.window_key);
      window_ = it != c.raw().end() && it->is_null()
                    ? 0 : Get(b, c.UintOr(s.window_key, s.window_default));
      break;
    }
    default:
      window_ = Get(b, c.UintOr(s.window_key, s.window_default));
      break;
  }
  if (kind_ == SlidingRuleKind::kPattern || kind_ == SlidingRuleKind::kCohere2Moe) {
    every_ = s.pattern_key.empty() ? s.pattern_default
                                   : Get(b, c.UintOr(s.pattern_key, s.pattern_default));
    if (!b.failed() && every_ == 0) {
      b.Fail(MakeError("{}: field \"{}\" must not be zero", c.where(), s.pattern_key));
    }
  }
  if (b.failed()) return;
  types_ = LayerTypesOrEmpty(b, c, layers);
  if (kind_ == SlidingRuleKind::kSmolLm3) ReadSmolLm3(b, c, layers);
  if (kind_ == SlidingRuleKind::kExaone4) ReadExaone4(b, c);
  if (kind_ == SlidingRuleKind::kCohere2Moe) ReadCohere2Moe(b, c);
}

bool SlidingRule::operator()(uint64_t i) const {
  if (window_ == 0) return false;
  switch (kind_) {
    case SlidingRuleKind::kAll: return true;
    case SlidingRuleKind::kAfterMaxWindow: return i >= every_;
    default: break;
  }
  if (!types_.empty()) return types_[i];
  switch (kind_) {
    case SlidingRuleKind::kEven: return i % 2 == 0;  // Gemma2Attention: even layers slide
    case SlidingRuleKind::kPattern: return (i + 1) % every_ != 0;
    case SlidingRuleKind::kCohere2Moe:
      return i < prefix_ ? (i + 1) % prefix_every_ != 0 : (i - prefix_ + 1) % every_ != 0;
    case SlidingRuleKind::kSmolLm3: {
      const bool rope = no_rope_ ? (*no_rope_)[i] != 0 : (i + 1) % every_ != 0;
      return use_sliding_ && !rope;
    }
    case SlidingRuleKind::kExaone4:
      if (letters_.empty()) return (i + 1) % every_ != 0;
      return i + 1 != layers_ && letters_[i % letters_.size()] == 'L';
    default: return false;
  }
}

void SlidingRule::ReadSmolLm3(ModelBuilder& b, const HfConfig& c, uint64_t layers) {
  use_sliding_ = Get(b, c.BoolOr("use_sliding_window", false));
  every_ = Get(b, c.UintOr("no_rope_layer_interval", 4));
  if (!b.failed() && every_ == 0) {
    b.Fail(MakeError("{}: field \"no_rope_layer_interval\" must not be zero", c.where()));
  }
  const auto it = c.raw().find("no_rope_layers");
  if (it == c.raw().end() || it->is_null() || b.failed()) return;
  if (!it->is_array() || it->size() < layers) {
    b.Fail(MakeError("{}: \"no_rope_layers\" must list one 0/1 per layer ({} layers)",
                     c.where(), layers));
    return;
  }
  no_rope_ = &*it;
}

void SlidingRule::ReadExaone4(ModelBuilder& b, const HfConfig& c) {
  every_ = 4;
  const auto it = c.raw().find("sliding_window_pattern");
  if (it == c.raw().end() || it->is_null()) return;
  if (it->is_string()) {
    letters_ = it->get<std::string>();
    if (letters_.empty() || letters_.find_first_not_of("LG") != std::string::npos) {
      b.Fail(MakeError("{}: field \"sliding_window_pattern\" must be an integer or a string "
                       "of 'L' and 'G'", c.where()));
    }
    return;
  }
  every_ = Get(b, c.Uint("sliding_window_pattern"));
  if (!b.failed() && every_ == 0) {
    b.Fail(MakeError("{}: field \"sliding_window_pattern\" must not be zero", c.where()));
  }
}

void SlidingRule::ReadCohere2Moe(ModelBuilder& b, const HfConfig& c) {
  prefix_ = Get(b, c.UintOr("first_k_dense_replace", 0));
  prefix_every_ = Get(b, c.UintOr("prefix_dense_sliding_window_pattern", 1));
  if (!b.failed() && prefix_every_ == 0) {
    b.Fail(MakeError("{}: field \"prefix_dense_sliding_window_pattern\" must not be zero",
                     c.where()));
  }
}

// kLlama: LlamaConfig's reading (an explicit head_dim needs no divisibility: Qwen2.5-Omni's
// talker is 896 wide with 12 heads of 128).
void ReadLlamaBasics(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s) {
  ReadDecoderFields(b, c, DecoderDefaults{.tie = s.tie_default,
                                          .act_key = s.act_key,
                                          .act_default = s.act_default,
                                          .need_intermediate = false});
  auto& hp = b.model().hp;
  if (b.failed()) return;
  const bool explicit_head_dim = c.Has("head_dim") && !c.raw()["head_dim"].is_null();
  const uint64_t default_head_dim =
      explicit_head_dim ? 0
                        : DivideExact(b, c, hp.hidden_size, "hidden_size", hp.num_attention_heads,
                                      "num_attention_heads");
  hp.head_dim = Get(b, c.UintOr("head_dim", s.head_dim_default > 0 ? s.head_dim_default
                                                                     : default_head_dim));
  if (hp.num_kv_heads == 0 || hp.num_attention_heads % hp.num_kv_heads != 0) {
    b.Fail(MakeError("{}: \"num_attention_heads\" = {} is not a multiple of "
                     "\"num_key_value_heads\" = {}",
                     c.where(), hp.num_attention_heads, hp.num_kv_heads));
  }
}

namespace {

void ReadMoe(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, SkeletonConfig& r) {
  auto& hp = b.model().hp;
  switch (s.moe) {
    case MoeLayout::kNone:
      return;
    case MoeLayout::kMixtral:
    case MoeLayout::kGraniteFused:
      hp.num_experts = Get(b, c.Uint("num_local_experts"));
      hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
      if (s.moe == MoeLayout::kGraniteFused) hp.moe_intermediate_size = hp.intermediate_size;
      break;
    case MoeLayout::kLaguna:
    case MoeLayout::kQwen:
      hp.num_experts = Get(b, c.Uint("num_experts"));
      hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
      hp.moe_intermediate_size = Get(b, c.Uint("moe_intermediate_size"));
      if (s.moe == MoeLayout::kLaguna) break;  // "mlp_layer_types" (LayerKinds)
      r.sparse_step = Get(b, c.UintOr("decoder_sparse_step", 1));
      if (auto it = c.raw().find("mlp_only_layers"); it != c.raw().end() && it->is_array()) {
        for (const auto& v : *it) {
          if (!v.is_number_integer() || v.get<int64_t>() < 0) {
            b.Fail(MakeError("{}: \"mlp_only_layers\" must hold layer indices", c.where()));
            break;
          }
          r.mlp_only.insert(static_cast<uint64_t>(v.get<int64_t>()));
        }
      }
      break;
    case MoeLayout::kRouted:
      ReadRoutedMoe(b, c, s, hp.num_layers, r.routed);
      break;
  }
  if (!s.shared_expert_key.empty()) {
    r.shared = Get(b, c.UintOr(s.shared_expert_key, 0));
    hp.num_shared_experts = r.shared > 0 ? 1 : 0;
    hp.shared_expert_intermediate_size = r.shared;  // the estimators' width of the shared MLP
  }
  if (!s.routing_bias_key.empty()) r.routing_bias = Get(b, c.BoolOr(s.routing_bias_key, true));
}

void ReadMtp(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, SkeletonConfig& r) {
  auto& hp = b.model().hp;
  if (s.mtp == Mtp::kMiMo || s.mtp == Mtp::kExaoneMoe || s.mtp == Mtp::kHyV3) {
    const uint64_t fallback = s.mtp == Mtp::kExaoneMoe ? 1 : 0;
    r.mtp_layers = Get(b, c.UintOr("num_nextn_predict_layers", fallback));
    if (!b.failed() && r.mtp_layers > hp.num_layers) {
      b.Fail(MakeError("{}: \"num_nextn_predict_layers\" = {} exceeds \"num_hidden_layers\" = {}",
                       c.where(), r.mtp_layers, hp.num_layers));
    }
    hp.num_mtp_layers = r.mtp_layers;
  } else if (s.mtp == Mtp::kMiniMaxNote) {
    const uint64_t mtp = Get(b, c.UintOr("num_mtp_modules", 0));
    if (Get(b, c.BoolOr("use_mtp", false)) && mtp > 0) {
      b.model().assumptions.push_back(fmt::format(
          "{} multi-token-prediction module(s) (num_mtp_modules) not counted: "
          "MiniMaxM2ForCausalLM builds none, and the card's 230B total leaves them out", mtp));
    }
  }
}

void ReadSwitches(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, SkeletonConfig& r) {
  const bool bias = Get(b, c.BoolOr(s.bias_key, s.bias_default));
  r.qkv_bias = bias || s.qkv_bias;
  r.o_bias = bias && !s.qkv_bias && s.o_bias;
  if (!s.o_bias_key.empty()) r.o_bias = Get(b, c.BoolOr(s.o_bias_key, false));
  if (!s.mlp_bias_key.empty()) r.mlp_bias = Get(b, c.BoolOr(s.mlp_bias_key, false));
  if (s.qk_norm == QkNorm::kPerHead || s.qk_norm == QkNorm::kWhole) r.qk_norm = true;
  if (s.qk_norm == QkNorm::kCohere) r.qk_norm = Get(b, c.BoolOr("use_qk_norm", false));
  if (s.qk_norm == QkNorm::kMiniMaxM2) {
    r.qk_norm = Get(b, c.BoolOr("use_qk_norm", true));
    const std::string type = Get(b, c.StringOr("qk_norm_type", "per_layer"));
    if (type != "per_layer" && type != "per_head") {
      b.Fail(MakeError("{}: \"qk_norm_type\" = \"{}\": expected per_layer or per_head", c.where(),
                       type));
    }
    r.qk_per_head = type == "per_head";
  }
}

}  // namespace

void ReadSkeletonConfig(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s,
                        SkeletonConfig& r) {
  ReadSwitches(b, c, s, r);
  ReadMoe(b, c, s, r);
  ReadMtp(b, c, s, r);
  if (!b.failed()) r.kinds.Read(b, c, s);
}

}  // namespace memfit::arch
