// The one builder of every DecoderSpec family (decoder_spec.h): reads the hyperparameters from
// the keys the spec names, then emits embed_tokens, the layers, model.norm, the MTP layers, the
// rotary buffers and the task head, as transformers' modeling_<family>.py registers them.

#include <optional>
#include <unordered_set>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/decoder_layer_kinds.h"
#include "model/arch/decoder_spec.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"
#include "model/arch/routed_moe.h"

namespace memfit::arch {
namespace {

// SmolLM3Config.__post_init__: without "layer_types", a layer slides when use_sliding_window and
// sliding_window are set and the layer is a NoPE layer ("no_rope_layers"[i] == 0, by default
// every "no_rope_layer_interval"-th layer). Exaone4Config: "layer_types" when present, else
// "sliding_window_pattern": an integer N (every N-th layer global, default 4) or a string of 'L'
// (local) and 'G' (global) repeated from layer 0, whose last layer is global. Both are asked per
// layer: the loop that asks stops at the builder's tensor cap, so a hostile layer count allocates
// nothing here.
class SlidingRule {
 public:
  SlidingRule(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, uint64_t layers)
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

  uint64_t window() const { return window_; }

  bool operator()(uint64_t i) const {
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

 private:
  void ReadSmolLm3(ModelBuilder& b, const HfConfig& c, uint64_t layers) {
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

  void ReadExaone4(ModelBuilder& b, const HfConfig& c) {
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

  void ReadCohere2Moe(ModelBuilder& b, const HfConfig& c) {
    prefix_ = Get(b, c.UintOr("first_k_dense_replace", 0));
    prefix_every_ = Get(b, c.UintOr("prefix_dense_sliding_window_pattern", 1));
    if (!b.failed() && prefix_every_ == 0) {
      b.Fail(MakeError("{}: field \"prefix_dense_sliding_window_pattern\" must not be zero",
                       c.where()));
    }
  }

  SlidingRuleKind kind_;
  uint64_t layers_;
  uint64_t prefix_ = 0, prefix_every_ = 1;  // kCohere2Moe's dense prefix
  uint64_t window_ = 0;
  uint64_t every_ = 1;  // the pattern, NoPE interval or max_window_layers
  bool use_sliding_ = false;
  std::vector<bool> types_;
  std::string letters_;
  const nlohmann::json* no_rope_ = nullptr;
};

// kLlama: LlamaConfig's reading (an explicit head_dim needs no divisibility: Qwen2.5-Omni's
// talker is 896 wide with 12 heads of 128).
void ReadLlamaBasics(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s) {
  auto& hp = b.model().hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.Uint("num_hidden_layers"));
  hp.num_attention_heads = Get(b, c.Uint("num_attention_heads"));
  hp.num_kv_heads = Get(b, c.UintOr("num_key_value_heads", hp.num_attention_heads));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 0));
  hp.intermediate_size = Get(b, c.UintOr("intermediate_size", 0));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", s.tie_default));
  hp.activation = Get(b, c.StringOr(s.act_key, std::string(s.act_default)));
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

// The config's switches and widths that shape tensors beyond Hyperparameters.
struct Read {
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  bool qk_norm = false, qk_per_head = false, routing_bias = false;
  uint64_t shared = 0, sparse_step = 1, mtp_layers = 0;
  std::unordered_set<uint64_t> mlp_only;
  RoutedMoe routed{};
  LayerKinds kinds;  // the per-layer lists (decoder_layer_kinds.h)
};

void ReadMoe(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, Read& r) {
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
  }
  if (!s.routing_bias_key.empty()) r.routing_bias = Get(b, c.BoolOr(s.routing_bias_key, true));
}

void ReadMtp(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, Read& r) {
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

void ReadSwitches(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, Read& r) {
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

bool PerLayerRope(const DecoderSpec& s, const BuildOptions& o) {
  return o.buffers == BufferConvention::kTransformers442 &&
         (s.rope == Rope::kPerLayer442 || s.rope == Rope::kPerLayerCached442);
}

void RotaryBuffers(ModelBuilder& b, const std::string& module, uint64_t head_dim, bool cached) {
  b.Buffer(module + ".inv_freq", {head_dim / 2}, Dtype::kF32, false);
  if (!cached) return;
  const uint64_t positions = b.model().hp.max_position_embeddings;
  b.Buffer(module + ".cos_cached", {positions, head_dim}, Dtype::kF32, false);
  b.Buffer(module + ".sin_cached", {positions, head_dim}, Dtype::kF32, false);
}

// The model-level and the 4.42 after-the-layers rotary buffers.
void ModelRotary(ModelBuilder& b, const HfConfig& c, const BuildOptions& o, const DecoderSpec& s,
                 const Read& r) {
  const auto& hp = b.model().hp;
  const uint64_t hd = r.kinds.rotary_dim;  // head_dim unless the spec names a rotary width
  const bool llama = s.rope == Rope::kLlama442 || s.rope == Rope::kLlamaCached442;
  if (s.rope == Rope::kPerLayerType) return PerLayerTypeRotary(b, c, hp.head_dim);
  if (s.rope == Rope::kModelLevelIfTheta) {
    const auto rope = c.raw().find("rope_parameters");
    const bool theta = (rope != c.raw().end() && rope->is_object() && rope->contains("rope_theta") &&
                        !(*rope)["rope_theta"].is_null()) ||
                       c.Has("rope_theta");
    if (theta) b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
    return;
  }
  if (o.buffers == BufferConvention::kCurrent || s.rope == Rope::kModelLevel) {
    const uint64_t rotary = s.rotary_factor > 0 ? RotaryDim(b, c, hd, s.rotary_factor) : hd;
    b.Buffer("model.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
    if (s.rope_local) b.Buffer("model.rotary_emb_local.inv_freq", {hd / 2}, Dtype::kF32, false);
    return;
  }
  if (!llama) return;  // inside the layers
  const bool cached = s.rope == Rope::kLlamaCached442;
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    if (r.kinds.IsLightning(i)) continue;  // no rotary in a lightning module
    RotaryBuffers(b, Layer("model.layers", i) + ".self_attn.rotary_emb", hd, cached);
  }
  if (!cached && c.Has("rope_scaling") && c.raw()["rope_scaling"].is_object()) {
    b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  }
}

class Skeleton {
 public:
  Skeleton(ModelBuilder& b, const BuildOptions& o, const DecoderSpec& s, const Read& r,
           const Quantization& q)
      : b_(b), o_(o), s_(s), r_(r), q_(q), hp_(b.model().hp) {
    h_ = hp_.hidden_size;
    hd_ = hp_.head_dim;
    q_width_ = MulDims(b, hp_.num_attention_heads, hd_, "num_attention_heads x head_dim");
    kv_width_ = MulDims(b, hp_.num_kv_heads, hd_, "num_key_value_heads x head_dim");
  }

  // Self-attention with `heads` query heads (LayerKinds::Heads); `sliding` for the sinks.
  void Attention(const std::string& l, uint64_t heads, bool sliding = false) {
    const uint64_t q_width =
        heads == hp_.num_attention_heads ? q_width_ : MulDims(b_, heads, hd_, "heads x head_dim");
    if (!s_.input_norm.empty()) b_.RmsNorm(l + "." + std::string(s_.input_norm), h_);
    QLinear(b_, q_, l + ".self_attn.q_proj", h_, q_width, r_.qkv_bias);
    QLinear(b_, q_, l + ".self_attn.k_proj", h_, kv_width_, r_.qkv_bias);
    QLinear(b_, q_, l + ".self_attn.v_proj", h_, kv_width_, r_.qkv_bias);
    QLinear(b_, q_, l + ".self_attn.o_proj", q_width, h_, r_.o_bias);
    if (r_.qk_norm) {
      const std::string qn = l + ".self_attn." + std::string(s_.q_norm_name);
      const std::string kn = l + ".self_attn." + std::string(s_.k_norm_name);
      switch (s_.qk_norm) {
        case QkNorm::kPerHead:
          b_.RmsNorm(qn, hd_);
          b_.RmsNorm(kn, hd_);
          break;
        case QkNorm::kCohere:
          b_.Param(qn + ".weight", {hp_.num_attention_heads, hd_});
          b_.Param(kn + ".weight", {hp_.num_kv_heads, hd_});
          break;
        default:  // kWhole, kMiniMaxM2
          b_.RmsNorm(qn, r_.qk_per_head ? hd_ : q_width);
          b_.RmsNorm(kn, r_.qk_per_head ? hd_ : kv_width_);
          break;
      }
    }
    if (s_.attn_gate == AttnGate::kAfmoe) {
      QLinear(b_, q_, l + ".self_attn.gate_proj", h_, q_width, false);
    }
    if (s_.attn_gate == AttnGate::kLaguna) {
      const uint64_t gates = r_.kinds.gate_per_head;
      if (gates > 0) {
        QLinear(b_, q_, l + ".self_attn.g_proj", h_, MulDims(b_, heads, gates, "gate width"), false);
      }
      if (sliding && r_.kinds.sinks) b_.Param(l + ".self_attn.sink", {heads});
    }
    if (PerLayerRope(s_, o_)) {
      RotaryBuffers(b_, l + ".self_attn.rotary_emb", hd_, s_.rope == Rope::kPerLayerCached442);
    }
  }

  uint64_t DenseWidth() const {
    return s_.moe == MoeLayout::kRouted ? r_.routed.dense_width : hp_.intermediate_size;
  }

  void DenseMlp(const std::string& l) {
    const uint64_t inter = DenseWidth();
    const std::string p = l + ".mlp.";
    if (s_.mlp == MlpForm::kFusedGateUp) {
      QLinear(b_, q_, p + "gate_up_proj", h_, MulDims(b_, 2, inter, "2 x intermediate_size"),
              r_.mlp_bias);
    } else {
      if (s_.mlp == MlpForm::kGated) QLinear(b_, q_, p + "gate_proj", h_, inter, r_.mlp_bias);
      QLinear(b_, q_, p + "up_proj", h_, inter, r_.mlp_bias);
    }
    QLinear(b_, q_, p + "down_proj", inter, h_, r_.mlp_bias);
    if (hp_.activation == "xielu") {
      // xIELU (apertus): learnable alpha_p/alpha_n [1] and persistent scalar buffers beta/eps,
      // in the config's dtype (transformers activations.py XIELUActivation).
      b_.Param(p + "act_fn.alpha_p", {1});
      b_.Param(p + "act_fn.alpha_n", {1});
      b_.Buffer(p + "act_fn.beta", {}, b_.dtype(), true);
      b_.Buffer(p + "act_fn.eps", {}, b_.dtype(), true);
    }
  }

  bool MoeLayer(uint64_t i) const {
    if (s_.moe == MoeLayout::kRouted) {
      return hp_.num_experts > 0 && RoutedSparseLayer(s_, r_.routed, i);
    }
    if (s_.moe == MoeLayout::kLaguna) return r_.kinds.Sparse(i);
    if (s_.moe != MoeLayout::kQwen) return s_.moe != MoeLayout::kNone;
    return r_.mlp_only.count(i) == 0 && hp_.num_experts > 0 && r_.sparse_step > 0 &&
           (i + 1) % r_.sparse_step == 0;
  }

  void Moe(const std::string& l) {
    const uint64_t e = hp_.num_experts;
    if (s_.moe == MoeLayout::kMixtral) {
      const uint64_t inter = hp_.intermediate_size;
      if (s_.router_f32) {
        b_.ParamAs(l + ".block_sparse_moe.gate.weight", {e, h_}, Dtype::kF32);
      } else {
        b_.Linear(l + ".block_sparse_moe.gate", h_, e, false);
      }
      if (r_.routing_bias) {
        b_.Buffer(l + ".block_sparse_moe.e_score_correction_bias", {e}, Dtype::kF32, true);
      }
      RepeatedModules(b_, q_, l + ".block_sparse_moe.experts", e, [&](const std::string& x) {
        QLinear(b_, q_, x + ".w1", h_, inter, false);
        QLinear(b_, q_, x + ".w2", inter, h_, false);
        QLinear(b_, q_, x + ".w3", h_, inter, false);
      });
    } else if (s_.moe == MoeLayout::kLaguna) {
      LagunaMoe(l);
    } else if (s_.moe == MoeLayout::kQwen) {
      const uint64_t inter = hp_.moe_intermediate_size;
      b_.Linear(l + ".mlp.gate", h_, e, false);
      RepeatedModules(b_, q_, l + ".mlp.experts", e, [&](const std::string& x) {
        QLinear(b_, q_, x + ".gate_proj", h_, inter, false);
        QLinear(b_, q_, x + ".up_proj", h_, inter, false);
        QLinear(b_, q_, x + ".down_proj", inter, h_, false);
      });
      if (r_.shared > 0) {
        QLinear(b_, q_, l + ".mlp.shared_expert.gate_proj", h_, r_.shared, false);
        QLinear(b_, q_, l + ".mlp.shared_expert.up_proj", h_, r_.shared, false);
        QLinear(b_, q_, l + ".mlp.shared_expert.down_proj", r_.shared, h_, false);
        b_.Linear(l + ".mlp.shared_expert_gate", h_, 1, false);
      }
    } else if (s_.moe == MoeLayout::kRouted) {
      EmitRoutedMoe(b_, q_, l, s_, r_.routed, e, r_.mlp_bias);
    } else {  // kGraniteFused: GraniteMoeParallelExperts keep all experts in one [E, out, in]
      const uint64_t inter = hp_.intermediate_size;
      b_.Param(l + ".block_sparse_moe.input_linear.weight", {e, 2 * inter, h_});
      b_.Param(l + ".block_sparse_moe.output_linear.weight", {e, h_, inter});
      b_.Linear(l + ".block_sparse_moe.router.layer", h_, e, false);
      if (r_.shared > 0) {
        b_.Linear(l + ".shared_mlp.input_linear", h_, 2 * r_.shared, false);
        b_.Linear(l + ".shared_mlp.output_linear", r_.shared, h_, false);
      }
    }
  }

  // MoeLayout::kLaguna, with the checkpoint's names (vLLM models/laguna.py loads them as stored;
  // transformers renames shared_expert and the bias on load).
  void LagunaMoe(const std::string& l) {
    const uint64_t e = hp_.num_experts, inter = hp_.moe_intermediate_size;
    b_.Linear(l + ".mlp.gate", h_, e, false);
    b_.Param(l + ".mlp.experts.e_score_correction_bias", {e});
    RepeatedModules(b_, q_, l + ".mlp.experts", e, [&](const std::string& x) {
      QLinear(b_, q_, x + ".gate_proj", h_, inter, false);
      QLinear(b_, q_, x + ".up_proj", h_, inter, false);
      QLinear(b_, q_, x + ".down_proj", inter, h_, false);
    });
    if (r_.shared == 0) return;
    QLinear(b_, q_, l + ".mlp.shared_expert.gate_proj", h_, r_.shared, false);
    QLinear(b_, q_, l + ".mlp.shared_expert.up_proj", h_, r_.shared, false);
    QLinear(b_, q_, l + ".mlp.shared_expert.down_proj", r_.shared, h_, false);
  }

  void Layers(const SlidingRule& sliding) {
    for (uint64_t i = 0; i < hp_.num_layers && !b_.failed(); ++i) {
      const std::string l = Layer("model.layers", i);
      LayerInfo info;
      const bool delta = r_.kinds.IsDeltaNet(i);
      if (r_.kinds.IsLightning(i)) {
        b_.RmsNorm(l + "." + std::string(s_.input_norm), h_);
        info = EmitLightning(b_, q_, l, s_.lightning, r_.kinds);
      } else if (delta) {
        b_.RmsNorm(l + ".input_layernorm", h_);  // a LlamaDecoderLayer
        info = EmitDeltaNet(b_, q_, l, r_.kinds);
      } else {
        info = AttentionInfo(hp_, sliding(i), sliding.window());
        info.num_heads = r_.kinds.Heads(i);
        Attention(l, info.num_heads, info.attention == AttentionKind::kSliding);
      }
      info.moe = MoeLayer(i);
      if (info.moe) {
        Moe(l);
      } else {
        DenseMlp(l);
        info.intermediate_size = DenseWidth();
      }
      for (std::string_view norm : s_.after_mlp_norms) {
        if (delta) {  // a LlamaDecoderLayer's second norm only (DeltaNet)
          b_.RmsNorm(l + ".post_attention_layernorm", h_);
          break;
        }
        if (!norm.empty()) b_.RmsNorm(l + "." + std::string(norm), h_);
      }
      if (r_.kinds.shared_m1 > 0) {  // MiniMaxM1DecoderLayer: MiniMaxM1MLP(config) and its coefficient
        QLinear(b_, q_, l + ".shared_mlp.gate_proj", h_, hp_.intermediate_size, false);
        QLinear(b_, q_, l + ".shared_mlp.up_proj", h_, hp_.intermediate_size, false);
        QLinear(b_, q_, l + ".shared_mlp.down_proj", hp_.intermediate_size, h_, false);
        b_.Linear(l + ".coefficient", h_, 1, false);
      }
      hp_.layers.push_back(info);
    }
  }

  // A decoder layer: attention, the MLP (sparse or dense), the norms after it.
  void Body(const std::string& l, bool moe) {
    Attention(l, hp_.num_attention_heads);
    if (moe) {
      Moe(l);
    } else {
      DenseMlp(l);
    }
    for (std::string_view norm : s_.after_mlp_norms) {
      if (!norm.empty()) b_.RmsNorm(l + "." + std::string(norm), h_);
    }
  }

  // MiMoMTPLayers (remote code modeling_mimo.py); the stored-only ones of kExaoneMoe / kHyV3.
  void MtpLayers() {
    if (s_.mtp == Mtp::kExaoneMoe || s_.mtp == Mtp::kHyV3) return StoredMtpLayers();
    for (uint64_t i = 0; i < r_.mtp_layers && !b_.failed(); ++i) {
      const std::string l = Layer("model.mtp_layers", i);
      b_.RmsNorm(l + ".token_layernorm", h_);
      b_.RmsNorm(l + ".hidden_layernorm", h_);
      QLinear(b_, q_, l + ".input_proj", MulDims(b_, 2, h_, "2 x hidden_size"), h_, false);
      Attention(l, hp_.num_attention_heads);
      DenseMlp(l);
      b_.RmsNorm(l + ".post_attention_layernorm", h_);
      b_.RmsNorm(l + ".final_layernorm", h_);
    }
  }

  // vLLM exaone_moe_mtp.py (mtp.*) and the model.layers.{L + k} NextN layers of Hy3 (as
  // DeepSeek-V3 stores them): in the checkpoint, not loaded by transformers.
  void StoredMtpLayers() {
    if (r_.mtp_layers == 0) return;
    Model& m = b_.model();
    const size_t begin = m.tensors.size();
    const uint64_t h2 = MulDims(b_, 2, h_, "2 x hidden_size");
    const bool exaone = s_.mtp == Mtp::kExaoneMoe;
    if (exaone) b_.Linear("mtp.fc", h2, h_, false);
    for (uint64_t k = 0; k < r_.mtp_layers && !b_.failed(); ++k) {
      if (exaone) {
        Body(Layer("mtp.layers", k), false);
        continue;
      }
      const std::string l = Layer("model.layers", hp_.num_layers + k);
      Body(l, hp_.num_experts > 0);
      b_.RmsNorm(l + ".enorm", h_);
      b_.RmsNorm(l + ".hnorm", h_);
      b_.Linear(l + ".eh_proj", h2, h_, false);
      b_.RmsNorm(l + ".final_layernorm", h_);
    }
    if (exaone) {
      b_.RmsNorm("mtp.norm", h_);
      b_.RmsNorm("mtp.pre_fc_norm_hidden", h_);
      b_.RmsNorm("mtp.pre_fc_norm_embedding", h_);
    }
    if (b_.failed()) return;
    const uint64_t bytes = MarkStoredOnly(m, begin);
    m.notes.push_back(fmt::format(
        "{} multi-token-prediction layer(s) ({} bytes) are stored in the checkpoint but not "
        "loaded by transformers", r_.mtp_layers, bytes));
  }

 private:
  ModelBuilder& b_;
  const BuildOptions& o_;
  const DecoderSpec& s_;
  const Read& r_;
  const Quantization& q_;
  Hyperparameters& hp_;
  uint64_t h_ = 0, hd_ = 0, q_width_ = 0, kv_width_ = 0;
};

}  // namespace

Result<Model> BuildDecoder(const HfConfig& c, const BuildOptions& o, const DecoderSpec& s) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  if (s.basics == DecoderBasics::kLlama) {
    ReadLlamaBasics(b, c, s);
  } else {
    ReadDecoderBasics(b, c, {.tie = s.tie_default, .act_key = s.act_key,
                             .act_default = s.act_default, .need_intermediate = true});
  }
  hp.norm = s.hp_norm;
  hp.gated_mlp = s.mlp != MlpForm::kPlain;
  if (b.failed()) return b.Finish();
  Read r;
  ReadSwitches(b, c, s, r);
  ReadMoe(b, c, s, r);
  ReadMtp(b, c, s, r);
  if (!b.failed()) r.kinds.Read(b, c, s);
  std::optional<SlidingRule> sliding;
  if (!b.failed()) sliding.emplace(b, c, s, hp.num_layers);
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();

  Skeleton skeleton(b, o, s, r, q);
  b.Embedding("model.embed_tokens", hp.vocab_size, hp.hidden_size);
  if (s.embed_scale) b.Buffer("model.embed_tokens.embed_scale", {}, Dtype::kF32, false);
  skeleton.Layers(*sliding);
  if (s.final_norm) b.RmsNorm("model.norm", hp.hidden_size);
  skeleton.MtpLayers();
  ModelRotary(b, c, o, s, r);
  if (!s.note.empty()) m.notes.emplace_back(s.note);
  return FinishDecoder(b, c, o, q);
}

}  // namespace memfit::arch
