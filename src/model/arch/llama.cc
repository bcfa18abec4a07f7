// Llama-style decoders: llama, mistral, qwen2, qwen3, mixtral (and their MoE variants), smollm3
// (llama tensors; NoPE layers from "no_rope_layers" change no tensor; tied by default), mimo
// (qwen2 plus "num_nextn_predict_layers" MTP layers model.mtp_layers.N: token_layernorm,
// hidden_layernorm, input_proj [H, 2H], a qwen2 decoder layer, final_layernorm; remote code
// modeling_mimo.py MiMoMTPLayers, loaded by MiMoForCausalLM); glm4, seed_oss, apertus, ernie4_5,
// hunyuan_v1_dense and internlm (v1 remote code) as LlamaSpec fields: bias flags, fused or
// non-gated MLPs, renamed norms, xIELU parameters (transformers models/<family>/modular_*.py).
// Tensor names and shapes follow transformers' modeling_<family>.py (LlamaForCausalLM and
// siblings): embed_tokens, layers.N.{input_layernorm, self_attn.{q,k,v,o}_proj, mlp.{gate,up,
// down}_proj | block_sparse_moe, post_attention_layernorm}, norm, lm_head.

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

struct LlamaSpec {
  bool qkv_bias = false;       // qwen2: q, k and v projections have biases
  bool qk_norm = false;        // qwen3: per-head RMSNorm on q and k
  bool mixtral_moe = false;    // mixtral: block_sparse_moe with w1/w2/w3 experts
  bool qwen_moe = false;       // qwen3_moe / qwen2_moe: mlp.gate + mlp.experts.N.{gate,up,down}
  bool tie_default = false;    // tie_word_embeddings default of the config class
  bool sliding_default = false;  // mistral: sliding_window applies to every layer when set
  // smollm3: "layer_types", else sliding on NoPE layers when "use_sliding_window" (SmolLM3Config);
  // one model-level rotary buffer in both buffer conventions (the family postdates 4.42).
  bool smollm3 = false;
  // minimax_m2 (MiniMaxM2ForCausalLM, remote code modeling_minimax_m2.py; vLLM minimax_m2.py):
  // mixtral's block_sparse_moe (w1/w2/w3 experts, gate) plus "use_qk_norm" RMSNorms over the
  // whole q and k projections ("qk_norm_type" per_layer; per_head: head_dim) and, with
  // "use_routing_bias", a float32 block_sparse_moe.e_score_correction_bias [E].
  bool minimax_m2 = false;
  bool mimo_mtp = false;       // mimo: qwen2 + model.mtp_layers (MiMoModel builds and loads them)
  // glm4, seed_oss, apertus, ernie4_5, hunyuan_v1_dense, internlm: where they differ from
  // LlamaDecoderLayer.
  bool modern = false;         // after 4.42: one model-level inv_freq in both buffer conventions
  std::string_view bias_key = "attention_bias";  // q/k/v (and o) bias flag
  bool bias_default = false;   // its default in the config class
  bool o_bias = true;          // o_proj follows bias_key (glm4: never biased)
  std::string_view o_bias_key = "";  // seed_oss: o_proj's own flag "attention_out_bias"
  std::string_view mlp_bias_key = "mlp_bias";
  enum class Mlp : uint8_t { kGated, kFusedGateUp, kPlain } mlp = Mlp::kGated;
  // Per-head q/k RMSNorms [head_dim] under these names (qk_norm uses q_norm/k_norm).
  std::string_view q_norm = "", k_norm = "";
  std::string_view input_norm = "input_layernorm", post_norm = "post_attention_layernorm";
  bool glm4_norms = false;     // post_self_attn_layernorm + post_mlp_layernorm
  uint64_t head_dim_default = 0;  // the config class's "head_dim" default; 0: hidden / heads
  double rotary_factor = 0;    // "partial_rotary_factor" default when it shapes inv_freq; 0: none
  std::string_view act_default = "silu";  // "hidden_act" default of the config class
};

// SmolLM3Config.__post_init__: without "layer_types", a layer slides when use_sliding_window and
// sliding_window are set and the layer is a NoPE layer ("no_rope_layers"[i] == 0, by default
// every "no_rope_layer_interval"-th layer). Computed per layer: the loop that asks stops at the
// builder's tensor cap, so a hostile layer count allocates nothing here.
class SmolLm3Sliding {
 public:
  SmolLm3Sliding(ModelBuilder& b, const HfConfig& c, uint64_t layers, uint64_t window) {
    types_ = LayerTypesOrEmpty(b, c, layers);
    use_sliding_ = Get(b, c.BoolOr("use_sliding_window", false)) && window > 0;
    interval_ = Get(b, c.UintOr("no_rope_layer_interval", 4));
    if (!b.failed() && interval_ == 0) {
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
  bool operator()(uint64_t i) const {
    if (!types_.empty()) return types_[i];
    const bool rope = no_rope_ ? (*no_rope_)[i] != 0 : (i + 1) % interval_ != 0;
    return use_sliding_ && !rope;
  }

 private:
  std::vector<bool> types_;
  bool use_sliding_ = false;
  uint64_t interval_ = 4;
  const nlohmann::json* no_rope_ = nullptr;
};

Result<Model> BuildLlamaLike(const HfConfig& c, const BuildOptions& options, const LlamaSpec& spec) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.Uint("num_hidden_layers"));
  hp.num_attention_heads = Get(b, c.Uint("num_attention_heads"));
  hp.num_kv_heads = Get(b, c.UintOr("num_key_value_heads", hp.num_attention_heads));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 0));
  hp.intermediate_size = Get(b, c.UintOr("intermediate_size", 0));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", spec.tie_default));
  hp.activation = Get(b, c.StringOr("hidden_act", std::string(spec.act_default)));
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  if (b.failed()) return b.Finish();
  // An explicit head_dim needs no divisibility (Qwen2.5-Omni's talker: 896 wide, 12 heads of 128).
  const bool explicit_head_dim = c.Has("head_dim") && !c.raw()["head_dim"].is_null();
  uint64_t default_head_dim =
      explicit_head_dim ? 0
                        : DivideExact(b, c, hp.hidden_size, "hidden_size", hp.num_attention_heads,
                                      "num_attention_heads");
  hp.head_dim = Get(b, c.UintOr("head_dim", spec.head_dim_default > 0 ? spec.head_dim_default
                                                                        : default_head_dim));
  if (hp.num_kv_heads == 0 || hp.num_attention_heads % hp.num_kv_heads != 0) {
    b.Fail(MakeError("{}: \"num_attention_heads\" = {} is not a multiple of \"num_key_value_heads\" = {}",
                     c.where(), hp.num_attention_heads, hp.num_kv_heads));
  }
  const bool attention_bias = Get(b, c.BoolOr(spec.bias_key, spec.bias_default));
  const bool mlp_bias = Get(b, c.BoolOr(spec.mlp_bias_key, false));
  // Qwen2Attention: q/k/v always biased, o_proj never ("attention_bias" is not read).
  bool o_bias = attention_bias && !spec.qkv_bias && spec.o_bias;
  if (!spec.o_bias_key.empty()) o_bias = Get(b, c.BoolOr(spec.o_bias_key, false));
  // xIELU (apertus): learnable alpha_p/alpha_n [1] and persistent scalar buffers beta/eps, in the
  // config's dtype (transformers activations.py XIELUActivation).
  const bool xielu = hp.activation == "xielu";
  if (spec.mlp == LlamaSpec::Mlp::kPlain) hp.gated_mlp = false;
  uint64_t sliding_window = 0;
  if (spec.sliding_default || spec.smollm3) sliding_window = Get(b, c.UintOr("sliding_window", 0));
  std::optional<SmolLm3Sliding> smollm3_sliding;
  if (spec.smollm3 && !b.failed()) smollm3_sliding.emplace(b, c, hp.num_layers, sliding_window);
  if (spec.mixtral_moe) {
    hp.num_experts = Get(b, c.Uint("num_local_experts"));
    hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
  }
  uint64_t decoder_sparse_step = 1;
  std::unordered_set<uint64_t> mlp_only_layers;
  if (spec.qwen_moe) {
    hp.num_experts = Get(b, c.Uint("num_experts"));
    hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
    hp.moe_intermediate_size = Get(b, c.Uint("moe_intermediate_size"));
    decoder_sparse_step = Get(b, c.UintOr("decoder_sparse_step", 1));
    if (const auto it = c.raw().find("mlp_only_layers"); it != c.raw().end() && it->is_array()) {
      for (const auto& v : *it) {
        if (v.is_number_unsigned()) mlp_only_layers.insert(v.get<uint64_t>());
      }
    }
  }
  bool minimax_qk_norm = false, minimax_per_head = false, minimax_routing_bias = false;
  if (spec.minimax_m2) {
    minimax_qk_norm = Get(b, c.BoolOr("use_qk_norm", true));
    const std::string type = Get(b, c.StringOr("qk_norm_type", "per_layer"));
    if (type != "per_layer" && type != "per_head") {
      b.Fail(MakeError("{}: \"qk_norm_type\" = \"{}\": expected per_layer or per_head", c.where(),
                       type));
    }
    minimax_per_head = type == "per_head";
    minimax_routing_bias = Get(b, c.BoolOr("use_routing_bias", true));
    const uint64_t mtp = Get(b, c.UintOr("num_mtp_modules", 0));
    if (Get(b, c.BoolOr("use_mtp", false)) && mtp > 0) {
      m.assumptions.push_back(fmt::format(
          "{} multi-token-prediction module(s) (num_mtp_modules) not counted: "
          "MiniMaxM2ForCausalLM builds none, and the card's 230B total leaves them out", mtp));
    }
  }
  uint64_t mtp_layers = 0;
  if (spec.mimo_mtp) {
    mtp_layers = Get(b, c.UintOr("num_nextn_predict_layers", 0));
    if (!b.failed() && mtp_layers > hp.num_layers) {
      b.Fail(MakeError("{}: \"num_nextn_predict_layers\" = {} exceeds \"num_hidden_layers\" = {}",
                       c.where(), mtp_layers, hp.num_layers));
    }
    hp.num_mtp_layers = mtp_layers;
  }
  Quantization q = ReadQuantization(b, c, options);
  if (b.failed()) return b.Finish();

  const uint64_t h = hp.hidden_size, hd = hp.head_dim, nh = hp.num_attention_heads,
                 nkv = hp.num_kv_heads, inter = hp.intermediate_size;
  const uint64_t q_width = MulDims(b, nh, hd, "num_attention_heads x head_dim");
  const uint64_t kv_width = MulDims(b, nkv, hd, "num_key_value_heads x head_dim");
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  const auto attention = [&](const std::string& l) {
    b.RmsNorm(l + "." + std::string(spec.input_norm), h);
    QLinear(b, q, l + ".self_attn.q_proj", h, q_width, attention_bias || spec.qkv_bias);
    QLinear(b, q, l + ".self_attn.k_proj", h, kv_width, attention_bias || spec.qkv_bias);
    QLinear(b, q, l + ".self_attn.v_proj", h, kv_width, attention_bias || spec.qkv_bias);
    QLinear(b, q, l + ".self_attn.o_proj", q_width, h, o_bias);
    if (spec.qk_norm || !spec.q_norm.empty()) {
      b.RmsNorm(l + ".self_attn." + std::string(spec.qk_norm ? "q_norm" : spec.q_norm), hd);
      b.RmsNorm(l + ".self_attn." + std::string(spec.qk_norm ? "k_norm" : spec.k_norm), hd);
    }
    if (minimax_qk_norm) {
      b.RmsNorm(l + ".self_attn.q_norm", minimax_per_head ? hd : q_width);
      b.RmsNorm(l + ".self_attn.k_norm", minimax_per_head ? hd : kv_width);
    }
  };
  const auto dense_mlp = [&](const std::string& l) {
    if (spec.mlp == LlamaSpec::Mlp::kFusedGateUp) {
      QLinear(b, q, l + ".mlp.gate_up_proj", h, MulDims(b, 2, inter, "2 x intermediate_size"),
              mlp_bias);
    } else {
      if (spec.mlp == LlamaSpec::Mlp::kGated) QLinear(b, q, l + ".mlp.gate_proj", h, inter, mlp_bias);
      QLinear(b, q, l + ".mlp.up_proj", h, inter, mlp_bias);
    }
    QLinear(b, q, l + ".mlp.down_proj", inter, h, mlp_bias);
    if (xielu) {
      b.Param(l + ".mlp.act_fn.alpha_p", {1});
      b.Param(l + ".mlp.act_fn.alpha_n", {1});
      b.Buffer(l + ".mlp.act_fn.beta", {}, b.dtype(), true);
      b.Buffer(l + ".mlp.act_fn.eps", {}, b.dtype(), true);
    }
  };
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    attention(l);
    LayerInfo info{.num_heads = nh, .num_kv_heads = nkv, .head_dim_k = hd, .head_dim_v = hd};
    if (sliding_window > 0 && (!smollm3_sliding || (*smollm3_sliding)(i))) {
      info.attention = AttentionKind::kSliding;
      info.window_tokens = sliding_window;
    }
    bool moe_layer = spec.mixtral_moe;
    if (spec.qwen_moe) {
      bool dense = mlp_only_layers.count(i) > 0;
      moe_layer = !dense && hp.num_experts > 0 && decoder_sparse_step > 0 &&
                  (i + 1) % decoder_sparse_step == 0;
    }
    if (spec.mixtral_moe) {
      b.Linear(l + ".block_sparse_moe.gate", h, hp.num_experts, false);
      if (minimax_routing_bias) {
        b.Buffer(l + ".block_sparse_moe.e_score_correction_bias", {hp.num_experts}, Dtype::kF32,
                 true);
      }
      RepeatedModules(b, q, l + ".block_sparse_moe.experts", hp.num_experts,
                      [&](const std::string& x) {
                        QLinear(b, q, x + ".w1", h, inter, false);
                        QLinear(b, q, x + ".w2", inter, h, false);
                        QLinear(b, q, x + ".w3", h, inter, false);
                      });
    } else if (moe_layer) {
      b.Linear(l + ".mlp.gate", h, hp.num_experts, false);
      RepeatedModules(b, q, l + ".mlp.experts", hp.num_experts, [&](const std::string& x) {
        QLinear(b, q, x + ".gate_proj", h, hp.moe_intermediate_size, false);
        QLinear(b, q, x + ".up_proj", h, hp.moe_intermediate_size, false);
        QLinear(b, q, x + ".down_proj", hp.moe_intermediate_size, h, false);
      });
    } else {
      dense_mlp(l);
      info.intermediate_size = inter;
    }
    info.moe = moe_layer;
    b.RmsNorm(l + "." + std::string(spec.post_norm), h);
    if (spec.glm4_norms) {
      b.RmsNorm(l + ".post_self_attn_layernorm", h);
      b.RmsNorm(l + ".post_mlp_layernorm", h);
    }
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.norm", h);
  for (uint64_t i = 0; i < mtp_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.mtp_layers", i);
    b.RmsNorm(l + ".token_layernorm", h);
    b.RmsNorm(l + ".hidden_layernorm", h);
    QLinear(b, q, l + ".input_proj", MulDims(b, 2, h, "2 x hidden_size"), h, false);
    attention(l);
    dense_mlp(l);
    b.RmsNorm(l + ".post_attention_layernorm", h);
    b.RmsNorm(l + ".final_layernorm", h);
  }
  // Rotary embedding buffers (all non-persistent, float32):
  // - transformers >= 4.48: one `inv_freq` [head_dim / 2] in model.rotary_emb;
  // - 4.42: one `inv_freq` per attention module; Qwen2 and Mixtral also cache cos and sin
  //   [max_position_embeddings, head_dim] per layer; with "rope_scaling" set, LlamaModel holds one
  //   more model-level rotary_emb. (Calibrated against accelerate_reference.jsonl.)
  if (options.buffers == BufferConvention::kCurrent || spec.smollm3 || spec.modern) {
    const uint64_t rotary = spec.rotary_factor > 0 ? RotaryDim(b, c, hd, spec.rotary_factor) : hd;
    b.Buffer("model.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
  } else {
    for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
      const std::string rotary = Layer("model.layers", i) + ".self_attn.rotary_emb";
      b.Buffer(rotary + ".inv_freq", {hd / 2}, Dtype::kF32, false);
      if (spec.qkv_bias || spec.mixtral_moe) {
        b.Buffer(rotary + ".cos_cached", {hp.max_position_embeddings, hd}, Dtype::kF32, false);
        b.Buffer(rotary + ".sin_cached", {hp.max_position_embeddings, hd}, Dtype::kF32, false);
      }
    }
    if (c.Has("rope_scaling") && c.raw()["rope_scaling"].is_object() && !spec.qkv_bias &&
        !spec.mixtral_moe) {
      b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
    }
  }
  TaskHead(b, c, options, "model.embed_tokens");
  NoteQuantization(b, q);
  m.no_split_patterns = {"model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace

Result<Model> BuildLlama(const HfConfig& c, const BuildOptions& o) { return BuildLlamaLike(c, o, {}); }
Result<Model> BuildMistral(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.sliding_default = true});
}
Result<Model> BuildQwen2(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.qkv_bias = true});
}
Result<Model> BuildQwen3(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.qk_norm = true});
}
Result<Model> BuildMixtral(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.mixtral_moe = true, .sliding_default = true});
}
Result<Model> BuildSmolLm3(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.tie_default = true, .smollm3 = true});
}
Result<Model> BuildQwen3Moe(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.qk_norm = true, .qwen_moe = true});
}
Result<Model> BuildMiMo(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.qkv_bias = true, .mimo_mtp = true});
}
Result<Model> BuildMiniMaxM2(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.mixtral_moe = true, .minimax_m2 = true});
}
Result<Model> BuildGlm4(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.modern = true, .bias_default = true, .o_bias = false,
                               .mlp = LlamaSpec::Mlp::kFusedGateUp, .glm4_norms = true,
                               .head_dim_default = 128, .rotary_factor = 0.5});
}
Result<Model> BuildSeedOss(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.modern = true, .bias_default = true,
                               .o_bias_key = "attention_out_bias", .head_dim_default = 128});
}
Result<Model> BuildApertus(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.modern = true, .mlp = LlamaSpec::Mlp::kPlain, .q_norm = "q_norm",
                               .k_norm = "k_norm", .input_norm = "attention_layernorm",
                               .post_norm = "feedforward_layernorm", .act_default = "xielu"});
}
Result<Model> BuildErnie45(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.tie_default = true, .modern = true, .bias_key = "use_bias",
                               .mlp_bias_key = "use_bias"});
}
Result<Model> BuildHunYuanDense(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.modern = true, .q_norm = "query_layernorm",
                               .k_norm = "key_layernorm", .head_dim_default = 128});
}
Result<Model> BuildInternLm(const HfConfig& c, const BuildOptions& o) {
  return BuildLlamaLike(c, o, {.bias_key = "bias", .bias_default = true});
}

}  // namespace memfit::arch
