// Kimi Linear (model_type "kimi_linear", KimiLinearForCausalLM; also Kimi-K3's text model): Kimi
// delta attention (KDA) layers between MLA layers (mla_kit.h), dense MLPs in the first
// first_k_dense_replace layers, else routed and shared experts. Not an MlaFamilySpec row: its KDA
// layers, norms ahead of the attention, block_sparse_moe (latent in K3) and attention residuals
// are its own. Under model.* (Kimi-K3, kimi_k25.cc, adds language_model.):
// - layers in linear_attn_config.kda_layers (1-based): self_attn.{q,k,v}_proj [P, H] (P =
//   num_heads x head_dim), {q,k,v}_conv1d [P, 1, short_conv_kernel_size], A_log, f_a_proj
//   [head_dim, H], f_b_proj [P, head_dim], dt_bias [P], b_proj [num_heads, H], g_proj [P, H]
//   with use_full_rank_gate else g_a_proj [head_dim, H] + g_b_proj [P, head_dim], o_norm
//   [head_dim], o_proj [H, P];
// - the other layers MLA, with mla_use_output_gate plus g_proj [heads x v_head_dim, H];
// - MoE layers: block_sparse_moe.gate.weight [E, H], its float32 e_score_correction_bias,
//   experts.N.{w1, w3} [moe_intermediate_size, L], w2 [L, moe_intermediate_size], L the latent
//   "routed_expert_hidden_size" (K3: routed_expert_down_proj [L, H], up_proj [H, L], with
//   latent_moe_use_norm routed_expert_norm [L]) or H; shared_experts of moe_intermediate_size x
//   num_shared_experts; dense layers mlp.{gate,up,down}_proj;
// - with "attn_res_block_size" (K3's attention residuals) per layer self_attention_res_norm,
//   mlp_res_norm [H], self_attention_res_proj, mlp_res_proj [1, H], and model.output_attn_res_*.
// The KDA conv1d, A_log, dt_bias and o_norm and the router bias are float32; under
// compressed-tensors only the routed experts are quantized (K3: MXFP4). Sources: vLLM
// model_executor/models/kimi_linear.py and layers/kda.py (Kimi-Linear-48B-A3B: A_log [1, 1,
// heads, 1]); for K3 (A_log float32 [head_dim], latent MoE, attention residuals) Moonshot's
// KimiDeltaAttention as public ports and third-party loaders of the checkpoint's index mirror it
// (docs/architectures.md names them).

#include "model/arch/kimi_linear.h"

#include <set>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/mla_kit.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

struct KimiDims {
  uint64_t h = 0;
  MlaDims mla;  // mla_kit.h
  bool output_gate = false;
  // KDA
  uint64_t kda_heads = 0, kda_dim = 0, kernel = 0;
  bool full_rank_gate = false;
  // MLPs
  uint64_t inter = 0, experts = 0, expert_width = 0, latent = 0, shared = 0;
  bool latent_moe = false, latent_norm = false;
  bool attn_res = false;
};

void Kda(ModelBuilder& b, const Quantization& q, const std::string& l, const KimiDims& d,
         KimiCheckpoint layout) {
  const std::string a = l + ".self_attn";
  const uint64_t p = MulDims(b, d.kda_heads, d.kda_dim, "linear_attn_config num_heads x head_dim");
  for (const char* x : {".q_proj", ".k_proj", ".v_proj"}) QLinear(b, q, a + x, d.h, p, false);
  for (const char* x : {".q_conv1d", ".k_conv1d", ".v_conv1d"}) {
    b.ParamAs(a + x + ".weight", {p, 1, d.kernel}, Dtype::kF32);
  }
  if (layout == KimiCheckpoint::kKimiK3) {
    b.ParamAs(a + ".A_log", {d.kda_dim}, Dtype::kF32);
  } else {
    b.ParamAs(a + ".A_log", {1, 1, d.kda_heads, 1}, Dtype::kF32);
  }
  QLinear(b, q, a + ".f_a_proj", d.h, d.kda_dim, false);
  QLinear(b, q, a + ".f_b_proj", d.kda_dim, p, false);
  b.ParamAs(a + ".dt_bias", {p}, Dtype::kF32);
  QLinear(b, q, a + ".b_proj", d.h, d.kda_heads, false);
  if (d.full_rank_gate) {
    QLinear(b, q, a + ".g_proj", d.h, p, false);
  } else {
    QLinear(b, q, a + ".g_a_proj", d.h, d.kda_dim, false);
    QLinear(b, q, a + ".g_b_proj", d.kda_dim, p, false);
  }
  b.ParamAs(a + ".o_norm.weight", {d.kda_dim}, Dtype::kF32);
  QLinear(b, q, a + ".o_proj", p, d.h, false);
}

void Moe(ModelBuilder& b, const Quantization& q, const std::string& l, const KimiDims& d) {
  const std::string m = l + ".block_sparse_moe";
  b.Param(m + ".gate.weight", {d.experts, d.h});
  b.Buffer(m + ".gate.e_score_correction_bias", {d.experts}, Dtype::kF32, true);
  const uint64_t width = d.latent_moe ? d.latent : d.h;
  if (d.latent_moe) {
    // Kept in the model dtype in K3's checkpoint although its quantization "ignore" list does not
    // name them (third-party loaders read them as bf16 from the index).
    b.Linear(m + ".routed_expert_down_proj", d.h, d.latent, false);
  }
  RepeatedModules(b, q, m + ".experts", d.experts, [&](const std::string& x) {
    QLinear(b, q, x + ".w1", width, d.expert_width, false);
    QLinear(b, q, x + ".w2", d.expert_width, width, false);
    QLinear(b, q, x + ".w3", width, d.expert_width, false);
  });
  if (d.latent_moe) {
    if (d.latent_norm) b.RmsNorm(m + ".routed_expert_norm", d.latent);
    b.Linear(m + ".routed_expert_up_proj", d.latent, d.h, false);
  }
  if (d.shared > 0) QGatedMlp(b, q, m + ".shared_experts", d.h, d.shared);
}

void AttnResidual(ModelBuilder& b, const std::string& prefix, uint64_t h) {
  b.RmsNorm(prefix + "_res_norm", h);
  b.Param(prefix + "_res_proj.weight", {1, h});
}

// linear_attn_config.kda_layers as 0-based layer indices (the config lists them 1-based).
std::set<uint64_t> KdaLayers(ModelBuilder& b, const HfConfig& lac, uint64_t layers) {
  std::set<uint64_t> out;
  const auto it = lac.raw().find("kda_layers");
  if (it == lac.raw().end() || !it->is_array()) {
    b.Fail(MakeError("{}: \"kda_layers\" must list the KDA layers (1-based)", lac.where()));
    return out;
  }
  for (const auto& v : *it) {
    if (!v.is_number_integer() || v.get<int64_t>() < 1 ||
        static_cast<uint64_t>(v.get<int64_t>()) > layers) {
      b.Fail(MakeError("{}: \"kda_layers\" holds {}, not a layer number in 1..{}", lac.where(),
                       v.dump(), layers));
      return {};
    }
    out.insert(static_cast<uint64_t>(v.get<int64_t>()) - 1);
  }
  return out;
}

}  // namespace

Result<Model> BuildKimiLinearText(const HfConfig& c, const BuildOptions& o, KimiCheckpoint layout) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadMlaDecoderBasics(b, c);
  KimiDims d;
  d.h = hp.hidden_size;
  d.mla = ReadMlaDims(b, c, hp.num_attention_heads);  // null q_lora_rank: Kimi-Linear-48B
  d.output_gate = Get(b, c.BoolOr("mla_use_output_gate", false));
  d.inter = hp.intermediate_size;
  d.experts = Get(b, c.UintOr("num_experts", 0));
  d.expert_width = Get(b, c.UintOr("moe_intermediate_size", 0));
  const uint64_t shared_experts = Get(b, c.UintOr("num_shared_experts", 0));
  d.latent_moe =
      c.Has("routed_expert_hidden_size") && !c.raw()["routed_expert_hidden_size"].is_null();
  d.latent = Get(b, c.UintOr("routed_expert_hidden_size", d.h));
  d.latent_norm = Get(b, c.BoolOr("latent_moe_use_norm", false));
  d.attn_res = c.Has("attn_res_block_size") && !c.raw()["attn_res_block_size"].is_null();
  const MoeSchedule sched = ReadMoeSchedule(b, c);
  hp.experts_per_token = Get(b, c.UintOr("num_experts_per_token", 0));
  if (b.failed()) return b.Finish();
  MEMFIT_ASSIGN_OR_RETURN(HfConfig lac, c.Sub("linear_attn_config"));
  d.kda_heads = Get(b, lac.Uint("num_heads"));
  d.kda_dim = Get(b, lac.Uint("head_dim"));
  d.kernel = Get(b, lac.Uint("short_conv_kernel_size"));
  d.full_rank_gate = Get(b, lac.BoolOr("use_full_rank_gate", false));
  const std::set<uint64_t> kda = KdaLayers(b, lac, hp.num_layers);
  const Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  CheckNonZero(
      b, lac,
      {{d.kda_heads, "num_heads"}, {d.kda_dim, "head_dim"}, {d.kernel, "short_conv_kernel_size"}});
  if (d.experts > 0) {
    CheckNonZero(
        b, c, {{d.expert_width, "moe_intermediate_size"}, {d.latent, "routed_expert_hidden_size"}});
  }
  if (b.failed()) return b.Finish();
  d.shared =
      MulDims(b, d.expert_width, shared_experts, "moe_intermediate_size x num_shared_experts");
  // Every conv state and delta-rule state below is a product of two config values: check once.
  const uint64_t p = MulDims(b, d.kda_heads, d.kda_dim, "linear_attn_config num_heads x head_dim");
  const uint64_t conv_channels = MulDims(b, p, 3, "3 x KDA projection width");
  const uint64_t state = MulDims(b, d.kda_dim, d.kda_dim, "KDA head_dim x head_dim");
  if (b.failed()) return b.Finish();
  hp.num_experts = d.experts;
  hp.moe_intermediate_size = d.expert_width;
  hp.num_shared_experts = shared_experts;
  hp.shared_expert_intermediate_size = d.shared;

  b.Embedding("model.embed_tokens", hp.vocab_size, d.h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    b.RmsNorm(l + ".input_layernorm", d.h);
    b.RmsNorm(l + ".post_attention_layernorm", d.h);
    if (d.attn_res) {
      AttnResidual(b, l + ".self_attention", d.h);
      AttnResidual(b, l + ".mlp", d.h);
    }
    LayerInfo info = MlaLayerInfo(hp, d.mla);
    if (kda.count(i)) {
      Kda(b, q, l, d, layout);
      // One q|k|v short-conv state and a float32 head_dim x head_dim delta-rule state per head
      // (vLLM MambaStateShapeCalculator.kda_state_shape, kda_state_dtype).
      info = {.attention = AttentionKind::kNone,
              .mixer = LayerMixer::kKimiDelta,
              .recurrent = true,
              .state = {.conv_channels = conv_channels,
                        .conv_kernel = d.kernel,
                        .heads = d.kda_heads,
                        .elements_per_head = state,
                        .state_bits = 32}};
    } else {
      EmitMla(b, q, l + ".self_attn", d.mla, false);
      if (d.output_gate) {
        QLinear(b, q, l + ".self_attn.g_proj", d.h,
                MulDims(b, d.mla.heads, d.mla.v, "heads x v_head_dim"), false);
      }
    }
    if (d.experts > 0 && sched.IsMoe(i)) {
      Moe(b, q, l, d);
      info.moe = true;
    } else {
      QGatedMlp(b, q, l + ".mlp", d.h, d.inter);
      info.intermediate_size = d.inter;
    }
    hp.layers.push_back(info);
  }
  if (d.attn_res) AttnResidual(b, "model.output_attn", d.h);
  b.RmsNorm("model.norm", d.h);
  if (sched.mtp > 0) {
    m.assumptions.push_back(fmt::format(
        "\"num_nextn_predict_layers\" = {}: the MTP layers are not counted (no released Kimi "
        "Linear checkpoint stores them to take their layout from)",
        sched.mtp));
  }
  if (layout == KimiCheckpoint::kKimiLinear) {
    m.assumptions.push_back(
        "Kimi Linear: the KDA conv1d weights, A_log, dt_bias and o_norm are assumed stored in "
        "float32 (as vLLM creates them and Kimi-K3's checkpoint stores them; no Kimi-Linear "
        "weight index was available)");
  }
  return FinishDecoder(b, c, o, q);
}

Result<Model> BuildKimiLinear(const HfConfig& c, const BuildOptions& o) {
  return BuildKimiLinearText(c, o, KimiCheckpoint::kKimiLinear);
}

}  // namespace memfit::arch
