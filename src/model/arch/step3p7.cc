// StepFun Step-3.5-Flash / Step-3.7-Flash text model (step3p5, step3p7: Step3p5ForCausalLM,
// Step3p7FlashForCausalLM). Tensor names as the checkpoints store them (vLLM step3p5.py
// Step3p5Model.load_weights and step3p5_mtp.py): model.embed_tokens; per layer input_layernorm,
// self_attn.{q,k,v,o}_proj with per-head q_norm/k_norm [head_dim] (and g_proj [heads, H] with
// "use_head_wise_attn_gate"), post_attention_layernorm; the first layers a dense mlp.{gate,up,
// down}_proj, the others a MoE block: moe.gate [E, H], moe.router_bias [E] (float32),
// the routed experts packed per projection moe.{gate,up}_proj [E, I, H] and moe.down_proj
// [E, H, I], and the shared expert share_expert.{gate,up,down}_proj of width "share_expert_dim";
// model.norm, lm_head. "num_nextn_predict_layers" MTP layers follow as model.layers.{L..}: enorm,
// hnorm, eh_proj [H, 2H], shared_head.norm, shared_head.output [V, H] and a dense decoder layer;
// the causal LM does not load them. Sliding layers ("layer_types") may have their own head count
// ("swa_num_attention_heads", or "attention_other_setting".num_attention_heads). Quantized routed
// experts are stored per expert (moe.experts.E.{gate,up,down}_proj, the per-expert format of
// step3p5.py's loader). Step-3.7-Flash's vision encoder (Step3p7ForConditionalGeneration) is not
// part of these configs.

#include <algorithm>
#include <string>

#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

struct StepDims {
  uint64_t h = 0, hd = 0, nkv = 0, full_heads = 0, swa_heads = 0, window = 0;
  uint64_t dense_width = 0, experts = 0, expert_width = 0, shared_width = 0;
  bool head_gate = false;
};

void StepAttention(ModelBuilder& b, const Quantization& q, const std::string& l, uint64_t heads,
                   const StepDims& d) {
  const std::string a = l + ".self_attn";
  const uint64_t q_width = MulDims(b, heads, d.hd, "attention heads x head_dim");
  QLinear(b, q, a + ".q_proj", d.h, q_width, false);
  QLinear(b, q, a + ".k_proj", d.h, d.nkv * d.hd, false);
  QLinear(b, q, a + ".v_proj", d.h, d.nkv * d.hd, false);
  QLinear(b, q, a + ".o_proj", q_width, d.h, false);
  b.RmsNorm(a + ".q_norm", d.hd);
  b.RmsNorm(a + ".k_norm", d.hd);
  if (d.head_gate) QLinear(b, q, a + ".g_proj", d.h, heads, false);
}

void StepMoe(ModelBuilder& b, const Quantization& q, const std::string& l, const StepDims& d) {
  const std::string moe = l + ".moe";
  b.Linear(moe + ".gate", d.h, d.experts, false);
  b.ParamAs(moe + ".router_bias", {d.experts}, Dtype::kF32);
  if (q.method != QuantMethod::kNone && !SkipsModule(q, moe + ".experts")) {
    RepeatedModules(b, q, moe + ".experts", d.experts,
                    [&](const std::string& x) { QGatedMlp(b, q, x, d.h, d.expert_width); });
  } else {
    b.Param(moe + ".gate_proj.weight", {d.experts, d.expert_width, d.h});
    b.Param(moe + ".up_proj.weight", {d.experts, d.expert_width, d.h});
    b.Param(moe + ".down_proj.weight", {d.experts, d.h, d.expert_width});
  }
  if (d.shared_width > 0) QGatedMlp(b, q, l + ".share_expert", d.h, d.shared_width);
}

// Which layers are MoE: "moe_layers_enum" ("3,4,...,44"), else from "first_k_dense_replace",
// else Step3p5Model's default (every layer but the first).
std::vector<bool> MoeLayers(ModelBuilder& b, const HfConfig& c, uint64_t layers) {
  std::vector<bool> out;
  const std::string list = Get(b, c.StringOr("moe_layers_enum", ""));
  if (b.failed()) return out;
  if (list.empty()) {
    const uint64_t dense = Get(b, c.UintOr("first_k_dense_replace", 1));
    for (uint64_t i = 0; i < layers && !b.failed(); ++i) out.push_back(i >= dense);
    return out;
  }
  out.assign(layers, false);
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string item = list.substr(pos, comma - pos);
    uint64_t index = 0;
    bool ok = !item.empty() && item.size() < 10;
    for (char ch : item) ok = ok && ch >= '0' && ch <= '9';
    if (ok) index = std::stoull(item);
    if (!ok || index >= layers) {
      b.Fail(MakeError("{}: \"moe_layers_enum\" must list layer indices below {}", c.where(),
                       layers));
      return {};
    }
    out[index] = true;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

Result<Model> BuildStep3p7(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  // Step3p5's "num_attention_groups" is the KV head count; the normalized configs say
  // "num_key_value_heads".
  ReadDecoderBasics(b, c, {.need_intermediate = true});
  if (c.Has("num_attention_groups")) hp.num_kv_heads = Get(b, c.Uint("num_attention_groups"));
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  StepDims d{.h = hp.hidden_size, .hd = hp.head_dim, .nkv = hp.num_kv_heads,
             .full_heads = hp.num_attention_heads, .dense_width = hp.intermediate_size};
  d.experts = Get(b, c.Has("moe_num_experts") ? c.Uint("moe_num_experts") : c.Uint("num_experts"));
  hp.experts_per_token =
      Get(b, c.Has("moe_top_k") ? c.Uint("moe_top_k") : c.Uint("num_experts_per_tok"));
  d.expert_width = Get(b, c.Uint("moe_intermediate_size"));
  d.shared_width = Get(b, c.UintOr("share_expert_dim", 0));
  d.window = Get(b, c.UintOr("sliding_window", 0));
  d.head_gate = Get(b, c.BoolOr("use_head_wise_attn_gate", false));
  d.swa_heads = Get(b, c.UintOr("swa_num_attention_heads", hp.num_attention_heads));
  if (auto other = c.OptionalSub("attention_other_setting")) {
    d.swa_heads = Get(b, other->UintOr("num_attention_heads", d.swa_heads));
  }
  const uint64_t mtp = Get(b, c.UintOr("num_nextn_predict_layers", 0));
  const Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  if (d.experts == 0 || d.expert_width == 0 || hp.experts_per_token == 0 || d.nkv == 0 ||
      d.swa_heads == 0) {
    return MakeError("{}: the expert count, \"moe_intermediate_size\", the experts per token, "
                     "the KV heads and the attention heads must be positive", c.where());
  }
  if (mtp > 64) {
    return MakeError("{}: \"num_nextn_predict_layers\" = {} is more than 64", c.where(), mtp);
  }
  hp.num_experts = d.experts;
  hp.moe_intermediate_size = d.expert_width;
  hp.num_shared_experts = d.shared_width > 0 ? 1 : 0;
  hp.shared_expert_intermediate_size = d.shared_width;
  hp.num_mtp_layers = mtp;
  MulDims(b, d.nkv, d.hd, "num_key_value_heads x head_dim");
  const std::vector<bool> sliding = LayerTypesOrEmpty(b, c, hp.num_layers);
  const std::vector<bool> moe = MoeLayers(b, c, hp.num_layers);
  if (b.failed()) return b.Finish();

  b.Embedding("model.embed_tokens", hp.vocab_size, d.h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    const bool swa = !sliding.empty() && sliding[i] && d.window > 0;
    const uint64_t heads = swa ? d.swa_heads : d.full_heads;
    b.RmsNorm(l + ".input_layernorm", d.h);
    StepAttention(b, q, l, heads, d);
    b.RmsNorm(l + ".post_attention_layernorm", d.h);
    if (moe[i]) {
      StepMoe(b, q, l, d);
    } else {
      QGatedMlp(b, q, l + ".mlp", d.h, d.dense_width);
    }
    LayerInfo info = AttentionInfo(hp, swa, d.window);
    info.num_heads = heads;
    info.moe = moe[i];
    info.intermediate_size = moe[i] ? 0 : d.dense_width;
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.norm", d.h);
  LmHead(b, "model.embed_tokens");
  // MTP layers: stored after the decoder layers, not loaded by the causal LM.
  const size_t begin = m.tensors.size();
  for (uint64_t k = 0; k < mtp && !b.failed(); ++k) {
    const std::string l = Layer("model.layers", hp.num_layers + k);
    b.RmsNorm(l + ".enorm", d.h);
    b.RmsNorm(l + ".hnorm", d.h);
    b.Linear(l + ".eh_proj", MulDims(b, d.h, 2, "2 x hidden_size"), d.h, false);
    b.RmsNorm(l + ".shared_head.norm", d.h);
    b.Linear(l + ".shared_head.output", d.h, hp.vocab_size, false);
    b.RmsNorm(l + ".input_layernorm", d.h);
    StepAttention(b, q, l, d.full_heads, d);
    b.RmsNorm(l + ".post_attention_layernorm", d.h);
    QGatedMlp(b, q, l + ".mlp", d.h, d.dense_width);
  }
  if (b.failed()) return b.Finish();
  const uint64_t mtp_bytes = MarkStoredOnly(m, begin);
  if (mtp > 0) {
    m.notes.push_back(fmt::format(
        "{} multi-token-prediction layer(s) (model.layers.{}+, {} bytes) are stored in the "
        "checkpoint but not loaded by the causal LM",
        mtp, hp.num_layers, mtp_bytes));
    m.assumptions.push_back(
        "MTP layers: a dense decoder layer with full attention of \"num_attention_heads\" "
        "heads (Step3p5DecoderLayer outside \"moe_layers_enum\"), as vLLM step3p5_mtp.py builds "
        "them");
  }
  m.assumptions.push_back(
      "moe.gate stored in the checkpoint dtype and moe.router_bias in float32 (vLLM step3p5.py "
      "computes the router in float32; no published index to confirm the stored dtypes)");
  if (!c.Has("use_head_wise_attn_gate")) {
    m.assumptions.push_back(
        "no \"use_head_wise_attn_gate\" in the config: no self_attn.g_proj counted (Step3p5's "
        "head-wise gate adds [heads, hidden] a layer when set)");
  }
  if (!c.Has("swa_num_attention_heads") && !c.Has("attention_other_setting")) {
    m.assumptions.push_back(
        "no \"swa_num_attention_heads\" / \"attention_other_setting\": sliding layers use "
        "\"num_attention_heads\" query heads");
  }
  NoteQuantization(b, q);
  m.no_split_patterns = {"model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
