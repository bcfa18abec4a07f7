// The reading half of the DecoderSpec builder (decoder_skeleton_read.h): the keys each spec
// names, with the config classes' defaults, read and checked once before decoder_skeleton.cc
// emits a tensor.

#include "model/arch/decoder_skeleton_read.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "model/arch/config_defaults.h"
#include "model/arch/decoder_kit.h"

namespace memfit::arch {

namespace {

// The positive integer at `key` ("": always `fallback`); zero fails naming the key.
uint64_t PositiveOr(ModelBuilder& b, const HfConfig& c, std::string_view key, uint64_t fallback) {
  const uint64_t v = key.empty() ? fallback : Get(b, c.UintOr(key, fallback));
  CheckNonZero(b, c, {{v, key}});
  return v;
}

// `key` as PerLayerCount (`fallback` when absent); the errors name the key.
PerLayerCount ReadPerLayer(ModelBuilder& b, const HfConfig& c, std::string_view key,
                           uint64_t layers, uint64_t fallback) {
  if (Absent(c, key)) return {.value = fallback};
  const auto& v = c.raw()[std::string(key)];
  if (v.is_number_integer()) {
    if (v.get<int64_t>() < 0) {
      b.Fail(MakeError("{}: \"{}\" must not be negative", c.where(), key));
      return {};
    }
    return {.value = Get(b, c.Uint(key))};
  }
  if (!v.is_array() || v.size() < layers) {
    b.Fail(MakeError("{}: \"{}\" must be an integer or list one per layer ({} layers)", c.where(),
                     key, layers));
    return {};
  }
  for (uint64_t i = 0; i < layers; ++i) {  // the list holds at least this many
    const auto& x = v[i];
    if (!x.is_number_integer() || x.get<int64_t>() < 0 ||
        static_cast<uint64_t>(x.get<int64_t>()) > kMaxConfigDimension) {
      b.Fail(MakeError("{}: \"{}\"[{}] must be a non-negative integer", c.where(), key, i));
      return {};
    }
  }
  return {.list = &v};
}

// MoeLayout::kHunYuan: HunYuanMoEV1Config's per-layer MoE keys. transformers' HunYuanMoEV1MLP
// sizes the experts and the shared MLP with intermediate_size; Tencent's code (hunyuan.py of
// Hunyuan-A13B) the experts with "moe_intermediate_size" and the shared MLP with
// intermediate_size x "num_shared_expert". Released configs make both equal; memfit follows the
// per-layer keys, as the checkpoint stores them, and says so when that differs.
void ReadHunYuanMoe(ModelBuilder& b, const HfConfig& c, SkeletonConfig& r) {
  constexpr std::string_view kClass = "HunYuanMoEV1Config";
  auto& hp = b.model().hp;
  NoteTieDefault(b, c, hp.tie_word_embeddings, kClass);
  for (std::string_view key : {"num_experts", "moe_topk"}) {
    if (Absent(c, key)) NoteDefault(b, key, 1, kClass);
  }
  const uint64_t n = hp.num_layers;
  r.experts = ReadPerLayer(b, c, "num_experts", n, 1);
  const PerLayerCount topk = ReadPerLayer(b, c, "moe_topk", n, 1);
  r.widths = ReadPerLayer(b, c, "moe_intermediate_size", n, hp.intermediate_size);
  r.shared_count = ReadPerLayer(b, c, "num_shared_expert", n, 1);
  if (b.failed()) return;
  bool differs = false;
  // One pass when no key is a list; else bounded by the lists, which hold at least n entries.
  const bool lists = r.widths.list || r.shared_count.list;
  for (uint64_t i = 0; i < (lists ? n : std::min<uint64_t>(n, 1)); ++i) {
    if (r.shared_count[i] == 0) {
      b.Fail(
          MakeError("{}: \"num_shared_expert\"[{}] is 0: HunYuanMoEV1ForCausalLM always "
                    "builds the shared MLP",
                    c.where(), i));
      return;
    }
    differs |= r.widths[i] != hp.intermediate_size || r.shared_count[i] != 1;
  }
  if (differs) {
    b.model().assumptions.push_back(
        "experts sized by \"moe_intermediate_size\" and the shared MLP by intermediate_size x "
        "\"num_shared_expert\", as Tencent's code and checkpoints do (transformers' "
        "HunYuanMoEV1ForCausalLM would use intermediate_size for both)");
  }
  if (n == 0) return;
  hp.num_experts = r.experts[0];
  hp.experts_per_token = topk[0];
  hp.moe_intermediate_size = r.widths[0];
  hp.num_shared_experts = 1;
  hp.shared_expert_intermediate_size =
      MulDims(b, hp.intermediate_size, r.shared_count[0], "intermediate_size x num_shared_expert");
}

// A layer index that may be written as -1 ("moe_layer_end_index": the last layer), the class
// default printed when absent.
int64_t SignedIndex(ModelBuilder& b, const HfConfig& c, std::string_view key, int64_t fallback,
                    std::string_view cls) {
  if (Absent(c, key)) {
    NoteDefault(b, key, fallback, cls);
    return fallback;
  }
  const auto& v = c.raw()[std::string(key)];
  if (!v.is_number_integer() || v.get<int64_t>() < -1) {
    b.Fail(MakeError("{}: \"{}\" must be a layer index (or -1)", c.where(), key));
    return 0;
  }
  return v.get<int64_t>();
}

// MoeLayout::kErnie: Ernie4_5_MoeConfig's keys, each absent one printed with the class default.
// bias_key ("use_bias") is read by the switches; here only its absence is printed.
void ReadErnieMoe(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, SkeletonConfig& r) {
  constexpr std::string_view kClass = "Ernie4_5_MoeConfig";
  auto& hp = b.model().hp;
  NoteTieDefault(b, c, hp.tie_word_embeddings, kClass);
  BoolDefault(b, c, s.bias_key, s.bias_default, kClass);
  hp.num_experts = UintDefault(b, c, "moe_num_experts", 64, kClass);
  hp.experts_per_token = UintDefault(b, c, "moe_k", 6, kClass);
  hp.moe_intermediate_size = UintDefault(b, c, "moe_intermediate_size", 1536, kClass);
  const uint64_t shared = UintDefault(b, c, "moe_num_shared_experts", 2, kClass);
  r.sparse_step = UintDefault(b, c, "moe_layer_interval", 1, kClass);
  r.moe_first = SignedIndex(b, c, "moe_layer_start_index", 1, kClass);
  r.moe_last = SignedIndex(b, c, "moe_layer_end_index", -1, kClass);
  if (!b.failed() && r.sparse_step == 0) {
    b.Fail(MakeError("{}: field \"moe_layer_interval\" must not be zero", c.where()));
  }
  if (b.failed()) return;
  if (r.moe_last == -1) r.moe_last = static_cast<int64_t>(hp.num_layers) - 1;
  r.shared = MulDims(b, hp.moe_intermediate_size, shared,
                     "moe_intermediate_size x moe_num_shared_experts");
  hp.num_shared_experts = shared;
  hp.shared_expert_intermediate_size = r.shared;
}

// "moe_layers_enum" ("3,4,...,44") into r.moe_layers; else the first "first_k_dense_replace"
// layers dense (r.routed.first_dense; Step3p5Model's default: all but the first).
void ReadStepLayers(ModelBuilder& b, const HfConfig& c, uint64_t layers, SkeletonConfig& r) {
  const std::string list = Get(b, c.StringOr("moe_layers_enum", ""));
  if (b.failed()) return;
  if (list.empty()) {
    r.routed.first_dense = Get(b, c.UintOr("first_k_dense_replace", 1));
    return;
  }
  for (size_t pos = 0; pos <= list.size();) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    uint64_t index = 0;
    const auto [end, error] = std::from_chars(list.data() + pos, list.data() + comma, index);
    if (error != std::errc() || end != list.data() + comma || index >= layers) {
      b.Fail(
          MakeError("{}: \"moe_layers_enum\" must list layer indices below {}", c.where(), layers));
      return;
    }
    r.moe_layers.insert(index);
    pos = comma + 1;
  }
}

// MoeLayout::kStep: Step3p5's keys, or the normalized ones.
void ReadStepMoe(ModelBuilder& b, const HfConfig& c, SkeletonConfig& r) {
  auto& hp = b.model().hp;
  hp.num_experts =
      Get(b, c.Has("moe_num_experts") ? c.Uint("moe_num_experts") : c.Uint("num_experts"));
  hp.experts_per_token =
      Get(b, c.Has("moe_top_k") ? c.Uint("moe_top_k") : c.Uint("num_experts_per_tok"));
  hp.moe_intermediate_size = Get(b, c.Uint("moe_intermediate_size"));
  r.shared = Get(b, c.UintOr("share_expert_dim", 0));
  if (b.failed()) return;
  if (hp.num_experts == 0 || hp.moe_intermediate_size == 0 || hp.experts_per_token == 0 ||
      hp.num_kv_heads == 0 || r.sliding_heads == 0) {
    b.Fail(
        MakeError("{}: the expert count, \"moe_intermediate_size\", the experts per token, "
                  "the KV heads and the attention heads must be positive",
                  c.where()));
    return;
  }
  hp.num_shared_experts = r.shared > 0 ? 1 : 0;
  hp.shared_expert_intermediate_size = r.shared;
  ReadStepLayers(b, c, hp.num_layers, r);
}

void ReadMoe(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, SkeletonConfig& r) {
  auto& hp = b.model().hp;
  switch (s.moe) {
    case MoeLayout::kNone:
      return;
    case MoeLayout::kMixtral:
    case MoeLayout::kGraniteFused:
      hp.num_experts = Get(b, c.Uint("num_local_experts"));
      hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
      if (s.moe == MoeLayout::kGraniteFused || s.moe_width_in_hp) {
        hp.moe_intermediate_size = hp.intermediate_size;
      }
      break;
    case MoeLayout::kGptOss: {
      hp.num_experts = Get(b, c.Uint("num_local_experts"));
      const uint64_t top_k = Get(b, c.UintOr("experts_per_token", 4));  // OpenAI's own key
      hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", top_k));
      hp.moe_intermediate_size = hp.intermediate_size;
      break;
    }
    case MoeLayout::kLaguna:
    case MoeLayout::kQwen:
      hp.num_experts = Get(b, c.Uint("num_experts"));
      hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
      hp.moe_intermediate_size = Get(b, c.Uint("moe_intermediate_size"));
      if (s.moe == MoeLayout::kLaguna) break;  // "mlp_layer_types" (LayerKinds)
      r.sparse_step = Get(b, c.UintOr("decoder_sparse_step", 1));
      r.mlp_only = MlpOnlyLayers(b, c);
      break;
    case MoeLayout::kRouted:
      ReadRoutedMoe(b, c, s, hp.num_layers, r.routed);
      break;
    case MoeLayout::kErnie:
      ReadErnieMoe(b, c, s, r);
      break;
    case MoeLayout::kHunYuan:
      ReadHunYuanMoe(b, c, r);
      break;
    case MoeLayout::kStep:
      ReadStepMoe(b, c, r);
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
  if (s.mtp == Mtp::kNone) return;
  if (s.mtp == Mtp::kMiniMaxNote) {
    const uint64_t mtp = Get(b, c.UintOr("num_mtp_modules", 0));
    if (Get(b, c.BoolOr("use_mtp", false)) && mtp > 0) {
      b.model().assumptions.push_back(
          fmt::format("{} multi-token-prediction module(s) (num_mtp_modules) not counted: "
                      "MiniMaxM2ForCausalLM builds none, and the card's 230B total leaves them out",
                      mtp));
    }
    return;
  }
  r.mtp_layers = Get(b, c.UintOr("num_nextn_predict_layers", s.mtp == Mtp::kExaoneMoe ? 1 : 0));
  const bool step = s.mtp == Mtp::kStep;  // at most 64 MTP layers, else at most the layers
  if (!b.failed() && r.mtp_layers > (step ? 64 : hp.num_layers)) {
    b.Fail(MakeError("{}: \"num_nextn_predict_layers\" = {} exceeds {}", c.where(), r.mtp_layers,
                     step ? "64" : fmt::format("\"num_hidden_layers\" = {}", hp.num_layers)));
  }
  hp.num_mtp_layers = r.mtp_layers;
}

void ReadSwitches(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, SkeletonConfig& r) {
  auto& hp = b.model().hp;
  if (!s.kv_heads_key.empty() && c.Has(s.kv_heads_key)) {
    hp.num_kv_heads = Get(b, c.Uint(s.kv_heads_key));
  }
  if (s.attn_gate == AttnGate::kHeadWise) {
    r.head_gate = Get(b, c.BoolOr("use_head_wise_attn_gate", false));
    r.has_head_gate_key = c.Has("use_head_wise_attn_gate");
  }
  if (!s.sliding_heads_key.empty()) {
    r.sliding_heads = Get(b, c.UintOr(s.sliding_heads_key, hp.num_attention_heads));
    r.has_sliding_heads_key = c.Has(s.sliding_heads_key) || c.Has("attention_other_setting");
    if (auto other = c.OptionalSub("attention_other_setting")) {
      r.sliding_heads = Get(b, other->UintOr("num_attention_heads", r.sliding_heads));
    }
  }
  const bool bias = Get(b, c.BoolOr(s.bias_key, s.bias_default));
  r.qkv_bias = bias || s.qkv_bias;
  r.o_bias = bias && !s.qkv_bias && s.o_bias;
  if (!s.o_bias_key.empty()) r.o_bias = Get(b, c.BoolOr(s.o_bias_key, false));
  if (!s.mlp_bias_key.empty()) r.mlp_bias = Get(b, c.BoolOr(s.mlp_bias_key, false));
  if (!s.lm_bias_key.empty()) r.lm_bias = Get(b, c.BoolOr(s.lm_bias_key, false));
  r.qk_norm = s.qk_norm != QkNorm::kNone &&
              (s.qk_norm_key.empty() || Get(b, c.BoolOr(s.qk_norm_key, s.qk_norm_default)));
  if (s.cla && Get(b, c.BoolOr("use_cla", false))) {
    r.cla_factor = PositiveOr(b, c, "cla_share_factor", 1);
  }
  if (s.qk_norm == QkNorm::kMiniMaxM2) {
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

void ReadFusedExperts(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s,
                      const Quantization& q, SkeletonConfig& r) {
  if (s.moe != MoeLayout::kGptOss) return;
  const auto& hp = b.model().hp;
  r.mxfp4 = q.method == QuantMethod::kMxfp4 && !SkipsModule(q, "model.layers.0.mlp.experts");
  if (!r.mxfp4) return;
  if (hp.hidden_size % 32 != 0 || hp.intermediate_size % 32 != 0) {
    b.Fail(
        MakeError("{}: mxfp4 experts need \"hidden_size\" ({}) and \"intermediate_size\" ({}) "
                  "divisible by 32",
                  c.where(), hp.hidden_size, hp.intermediate_size));
    return;
  }
  b.model().notes.push_back(
      "mxfp4: expert weights stored as uint8 blocks (two fp4 values per byte) and uint8 E8M0 "
      "scales per 32 values; parameters are logical (the experts' e x out x in), bytes as stored");
}

SlidingRule::SlidingRule(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, uint64_t layers)
    : kind_(s.sliding), layers_(layers) {
  if (kind_ == SlidingRuleKind::kNone) return;
  if (kind_ == SlidingRuleKind::kNoneCheckTypes) {
    types_ = LayerTypesOrEmpty(b, c, layers);
    return;
  }
  if (kind_ == SlidingRuleKind::kAfterMaxWindow) {
    window_ = Get(b, c.BoolOr("use_sliding_window", false))
                  ? Get(b, c.UintOr(s.window_key, s.window_default))
                  : 0;
    every_ = Get(b, c.UintOr("max_window_layers", 0));
    return;
  }
  // kExaone4: absent -> window_default, null -> no sliding layers.
  const auto it = c.raw().find(s.window_key);
  const bool null_window =
      kind_ == SlidingRuleKind::kExaone4 && it != c.raw().end() && it->is_null();
  window_ = null_window ? 0 : Get(b, c.UintOr(s.window_key, s.window_default));
  if (kind_ == SlidingRuleKind::kAll) {
    const uint64_t context = b.model().hp.max_position_embeddings;
    if (s.window_below_context && context > 0 && window_ >= context) window_ = 0;
    return;
  }
  if (kind_ == SlidingRuleKind::kPattern) {
    every_ = PositiveOr(b, c, s.pattern_key, s.pattern_default);
    if (!s.prefix_key.empty()) {
      prefix_ = Get(b, c.UintOr(s.prefix_key, 0));
      prefix_every_ = PositiveOr(b, c, s.prefix_pattern_key, 1);
    }
  }
  if (b.failed()) return;
  types_ = LayerTypesOrEmpty(b, c, layers);
  if (kind_ == SlidingRuleKind::kSmolLm3) ReadSmolLm3(b, c, layers);
  if (kind_ == SlidingRuleKind::kExaone4) ReadExaone4(b, c);
}

bool SlidingRule::operator()(uint64_t i) const {
  if (window_ == 0) return false;
  if (kind_ == SlidingRuleKind::kAll) return true;
  if (kind_ == SlidingRuleKind::kAfterMaxWindow) return i >= every_;
  if (!types_.empty()) return types_[i];
  switch (kind_) {
    case SlidingRuleKind::kPattern:
      return i < prefix_ ? (i + 1) % prefix_every_ != 0 : (i - prefix_ + 1) % every_ != 0;
    case SlidingRuleKind::kSmolLm3: {
      const bool rope = no_rope_ ? (*no_rope_)[i] != 0 : (i + 1) % every_ != 0;
      return use_sliding_ && !rope;
    }
    case SlidingRuleKind::kExaone4:
      if (letters_.empty()) return (i + 1) % every_ != 0;
      return i + 1 != layers_ && letters_[i % letters_.size()] == 'L';
    default:
      return false;
  }
}

// SmolLM3Config.__post_init__: NoPE layers are "no_rope_layers"[i] == 0, by default every
// "no_rope_layer_interval"-th layer.
void SlidingRule::ReadSmolLm3(ModelBuilder& b, const HfConfig& c, uint64_t layers) {
  use_sliding_ = Get(b, c.BoolOr("use_sliding_window", false));
  every_ = PositiveOr(b, c, "no_rope_layer_interval", 4);
  const auto it = c.raw().find("no_rope_layers");
  if (it == c.raw().end() || it->is_null() || b.failed()) return;
  if (!it->is_array() || it->size() < layers) {
    b.Fail(MakeError("{}: \"no_rope_layers\" must list one 0/1 per layer ({} layers)", c.where(),
                     layers));
    return;
  }
  no_rope_ = &*it;
}

void SlidingRule::ReadExaone4(ModelBuilder& b, const HfConfig& c) {
  const auto it = c.raw().find("sliding_window_pattern");
  if (it == c.raw().end() || !it->is_string()) {
    every_ = PositiveOr(b, c, "sliding_window_pattern", 4);
    return;
  }
  letters_ = it->get<std::string>();
  if (letters_.empty() || letters_.find_first_not_of("LG") != std::string::npos) {
    b.Fail(
        MakeError("{}: field \"sliding_window_pattern\" must be an integer or a string "
                  "of 'L' and 'G'",
                  c.where()));
  }
}

}  // namespace memfit::arch
