// Hunyuan MoE V1 (hunyuan_v1_moe, and Tencent's remote-code "hunyuan" configs whose class is
// HunYuanMoEV1ForCausalLM: Hunyuan-A13B), as transformers' HunYuanMoEV1ForCausalLM builds it:
// - model.embed_tokens [V, H]; per layer input_layernorm, self_attn.{q,k,v,o}_proj (GQA,
//   "attention_bias"), per-head self_attn.query_layernorm / key_layernorm [head_dim],
//   post_attention_layernorm [H];
// - every layer is a MoE: router mlp.gate.wg [E, H] created in float32, E experts
//   mlp.experts.N.{gate,up,down}_proj and one always-present shared MLP mlp.shared_mlp, none
//   biased. "num_experts" and "moe_topk" are an int or a per-layer list;
// - model.norm, one model.rotary_emb.inv_freq [head_dim / 2], lm_head (untied by default).
// Widths: transformers' HunYuanMoEV1MLP sizes experts and the shared MLP with intermediate_size.
// Tencent's code (hunyuan.py of Hunyuan-A13B) sizes the experts with the per-layer
// "moe_intermediate_size" and the shared MLP with intermediate_size x "num_shared_expert";
// released configs make both equal (A13B: 3072 everywhere, one shared expert). memfit follows the
// per-layer keys when present, as the checkpoint stores them, and says so when that differs
// from transformers' sizing.
// Cross-layer attention ("use_cla", "cla_share_factor", Tencent's code only): a layer with
// i % factor != 0 has no k_proj/v_proj and reuses the previous layer's KV cache.
// Source: transformers models/hunyuan_v1_moe/{modular,modeling,configuration}_hunyuan_v1_moe.py
// (commits 3404f51e, f3f034d7, 008cd60e); Tencent-Hunyuan/Hunyuan-A13B models/modeling_hunyuan.py
// (CLA, HunYuanMLP) at df832ebc.

#include <fmt/format.h>

#include "model/arch/config_defaults.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/moe_hybrid_families.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

// An int for every layer or a list of at least `layers` ints ("num_experts", "moe_topk", ...);
// `fallback` for every layer when absent. Empty on error (recorded in `b`).
std::vector<uint64_t> PerLayer(ModelBuilder& b, const HfConfig& c, std::string_view key,
                               uint64_t layers, uint64_t fallback) {
  if (Absent(c, key)) return std::vector<uint64_t>(layers, fallback);
  const auto& v = c.raw()[std::string(key)];
  if (v.is_number_integer()) {
    if (v.get<int64_t>() < 0) {
      b.Fail(MakeError("{}: \"{}\" must not be negative", c.where(), key));
      return {};
    }
    const uint64_t x = Get(b, c.Uint(key));
    return std::vector<uint64_t>(layers, x);
  }
  if (!v.is_array() || v.size() < layers) {
    b.Fail(MakeError("{}: \"{}\" must be an integer or list one per layer ({} layers)", c.where(),
                     key, layers));
    return {};
  }
  std::vector<uint64_t> out;
  for (uint64_t i = 0; i < layers; ++i) {
    const auto& x = v[i];
    if (!x.is_number_integer() || x.get<int64_t>() < 0 ||
        static_cast<uint64_t>(x.get<int64_t>()) > kMaxConfigDimension) {
      b.Fail(MakeError("{}: \"{}\"[{}] must be a non-negative integer", c.where(), key, i));
      return {};
    }
    out.push_back(static_cast<uint64_t>(x.get<int64_t>()));
  }
  return out;
}

}  // namespace

Result<Model> BuildHunYuanMoe(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  ReadDecoderBasics(b, c, {});  // HunYuanMoEV1Config: tie_word_embeddings false
  auto& hp = m.hp;
  NoteTieDefault(b, c, hp.tie_word_embeddings, "HunYuanMoEV1Config");
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  const bool attn_bias = Get(b, c.BoolOr("attention_bias", false));
  const bool qk_norm = Get(b, c.BoolOr("use_qk_norm", true));
  const bool cla = Get(b, c.BoolOr("use_cla", false));
  const uint64_t cla_factor = cla ? Get(b, c.UintOr("cla_share_factor", 1)) : 1;
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  if (cla_factor == 0) {
    return MakeError("{}: field \"cla_share_factor\" must not be zero", c.where());
  }
  const uint64_t n = hp.num_layers;
  if (Absent(c, "num_experts")) {
    m.assumptions.push_back("\"num_experts\" absent from config.json: HunYuanMoEV1Config's default 1");
  }
  if (Absent(c, "moe_topk")) {
    m.assumptions.push_back("\"moe_topk\" absent from config.json: HunYuanMoEV1Config's default 1");
  }
  // Per-layer lists are read only for counts the tensor cap allows (a hostile layer count
  // allocates nothing here: ReadDecoderBasics bounds it, and the loop below stops at the cap).
  if (n > o.max_tensors) return MakeError("{}: \"num_hidden_layers\" = {} is absurd", c.where(), n);
  const auto experts = PerLayer(b, c, "num_experts", n, 1);
  const auto topk = PerLayer(b, c, "moe_topk", n, 1);
  const auto widths = PerLayer(b, c, "moe_intermediate_size", n, hp.intermediate_size);
  const auto shared = PerLayer(b, c, "num_shared_expert", n, 1);
  if (b.failed()) return b.Finish();
  bool differs = false;
  for (uint64_t i = 0; i < n; ++i) {
    if (shared[i] == 0) {
      return MakeError("{}: \"num_shared_expert\"[{}] is 0: HunYuanMoEV1ForCausalLM always builds "
                       "the shared MLP", c.where(), i);
    }
    differs |= widths[i] != hp.intermediate_size || shared[i] != 1;
  }
  if (differs) {
    m.assumptions.push_back(
        "experts sized by \"moe_intermediate_size\" and the shared MLP by intermediate_size x "
        "\"num_shared_expert\", as Tencent's code and checkpoints do (transformers' "
        "HunYuanMoEV1ForCausalLM would use intermediate_size for both)");
  }
  if (n > 0) {
    hp.num_experts = experts[0];
    hp.experts_per_token = topk[0];
    hp.moe_intermediate_size = widths[0];
    hp.num_shared_experts = 1;
    hp.shared_expert_intermediate_size =
        MulDims(b, hp.intermediate_size, shared[0], "intermediate_size x num_shared_expert");
  }
  const uint64_t h = hp.hidden_size, hd = hp.head_dim;
  const uint64_t q_width = MulDims(b, hp.num_attention_heads, hd, "num_attention_heads x head_dim");
  const uint64_t kv_width = MulDims(b, hp.num_kv_heads, hd, "num_key_value_heads x head_dim");
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < n && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    const bool reuses_kv = cla && i % cla_factor != 0;
    b.RmsNorm(l + ".input_layernorm", h);
    QLinear(b, q, l + ".self_attn.q_proj", h, q_width, attn_bias);
    if (!reuses_kv) {
      QLinear(b, q, l + ".self_attn.k_proj", h, kv_width, attn_bias);
      QLinear(b, q, l + ".self_attn.v_proj", h, kv_width, attn_bias);
    }
    QLinear(b, q, l + ".self_attn.o_proj", q_width, h, attn_bias);
    if (qk_norm) {
      b.RmsNorm(l + ".self_attn.query_layernorm", hd);
      b.RmsNorm(l + ".self_attn.key_layernorm", hd);
    }
    b.RmsNorm(l + ".post_attention_layernorm", h);
    b.ParamAs(l + ".mlp.gate.wg.weight", {experts[i], h}, Dtype::kF32);
    RepeatedModules(b, q, l + ".mlp.experts", experts[i], [&](const std::string& x) {
      QLinear(b, q, x + ".gate_proj", h, widths[i], false);
      QLinear(b, q, x + ".up_proj", h, widths[i], false);
      QLinear(b, q, x + ".down_proj", widths[i], h, false);
    });
    const uint64_t sw = MulDims(b, hp.intermediate_size, shared[i], "intermediate_size x num_shared_expert");
    QGatedMlp(b, q, l + ".mlp.shared_mlp", h, sw);
    LayerInfo info = AttentionInfo(hp, false, 0);
    info.moe = true;
    info.kv_shared = reuses_kv;
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.norm", h);
  b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  return FinishDecoder(b, c, o, q);
}

}  // namespace memfit::arch
