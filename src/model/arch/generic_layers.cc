// Tensors of the generic decoder's mixers and MLPs. Shapes from the reference implementations:
//   attention         transformers modeling_llama.py (LlamaAttention), modeling_qwen3_next.py
//                     (output gate), DeepSeek-V4 inference/model.py (q/o low rank)
//   MLA + DSA indexer transformers modeling_deepseek_v3.py, vLLM deepseek_v2.py (Indexer)
//   gated delta-net   transformers modeling_qwen3_next.py (Qwen3NextGatedDeltaNet)
//   Mamba2            transformers modeling_nemotron_h.py (NemotronHMamba2Mixer)
//   Mamba             transformers modeling_mamba.py (MambaMixer)
//   Kimi delta attn   vLLM kda.py (KimiDeltaAttention)
//   short conv        transformers modeling_lfm2.py (Lfm2ShortConv)
//   lightning attn    transformers modeling_minimax.py (MiniMaxLightningAttention)
//   MoE               modeling_qwen3_moe.py / modeling_deepseek_v3.py / modeling_qwen3_next.py

#include "model/arch/generic_layers.h"

#include "memfit/checked_math.h"
#include "model/arch/mla_kit.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch::generic {
namespace {

void Attention(ModelBuilder& b, const Quantization& q, const std::string& a, const LayerInfo& L,
               const Hyperparameters& hp, const Extras& x) {
  const uint64_t h = hp.hidden_size;
  const uint64_t q_out = MulDims(b, L.num_heads, L.head_dim_k, "heads x head_dim");
  const uint64_t k_out = MulDims(b, L.num_kv_heads, L.head_dim_k, "kv heads x head_dim");
  const uint64_t v_out = MulDims(b, L.num_kv_heads, L.head_dim_v, "kv heads x v_head_dim");
  const uint64_t o_in =
      MulDims(b, L.num_heads, L.head_dim_v ? L.head_dim_v : L.head_dim_k, "heads x v_head_dim");
  const bool qkv_bias = x.attention_bias || x.qkv_bias;
  const uint64_t q_width = x.output_gate ? 2 * q_out : q_out;
  EmitQueryProjection(b, q, a, h, hp.q_lora_rank, q_width, false, qkv_bias);
  QLinear(b, q, a + ".k_proj", h, k_out, qkv_bias);
  if (!L.k_eq_v) QLinear(b, q, a + ".v_proj", h, v_out, qkv_bias);
  if (x.o_lora_rank > 0 && x.o_groups > 0) {
    QLinear(b, q, a + ".o_a_proj", CeilDivOrZero(o_in, x.o_groups), x.o_groups * x.o_lora_rank,
            false);
    QLinear(b, q, a + ".o_b_proj", x.o_groups * x.o_lora_rank, h, false);
  } else {
    QLinear(b, q, a + ".o_proj", o_in, h, x.attention_bias);
  }
  if (x.qk_norm) {
    b.RmsNorm(a + ".q_norm", L.head_dim_k);
    b.RmsNorm(a + ".k_norm", L.head_dim_k);
  }
}

void Indexer(ModelBuilder& b, const std::string& a, const Hyperparameters& hp, const Extras& x) {
  const uint64_t h = hp.hidden_size, d = x.index_head_dim, n = x.index_n_heads;
  const uint64_t q_in = hp.q_lora_rank ? hp.q_lora_rank : h;
  b.Linear(a + ".indexer.wq_b", q_in, MulDims(b, n, d, "index heads x index_head_dim"), false);
  b.Linear(a + ".indexer.wk", h, d, false);
  b.LayerNorm(a + ".indexer.k_norm", d);
  b.Linear(a + ".indexer.weights_proj", h, n, false);
}

void Recurrent(ModelBuilder& b, const Quantization& q, const std::string& l, const LayerInfo& L,
               const Hyperparameters& hp, const Extras& x) {
  const uint64_t h = hp.hidden_size;
  const RecurrentState& s = L.state;
  const uint64_t k = s.conv_kernel;
  switch (L.mixer) {
    case LayerMixer::kGatedDeltaNet: {
      const std::string a = l + ".linear_attn";
      const uint64_t key = MulDims(b, x.linear_k_heads, x.linear_k_dim, "key heads x dim");
      const uint64_t value = MulDims(b, x.linear_v_heads, x.linear_v_dim, "value heads x dim");
      QLinear(b, q, a + ".in_proj_qkvz", h, 2 * key + 2 * value, false);
      QLinear(b, q, a + ".in_proj_ba", h, 2 * x.linear_v_heads, false);
      b.Conv(a + ".conv1d", 2 * key + value, 2 * key + value, {k}, false, 2 * key + value);
      b.Param(a + ".dt_bias", {x.linear_v_heads});
      b.Param(a + ".A_log", {x.linear_v_heads});
      b.RmsNorm(a + ".norm", x.linear_v_dim);
      QLinear(b, q, a + ".out_proj", value, h, false);
      break;
    }
    case LayerMixer::kMamba2: {
      const std::string a = l + ".mixer";
      const uint64_t di = x.mamba_d_inner, heads = x.mamba_heads;
      const uint64_t conv = di + 2 * x.mamba_groups * x.mamba_d_state;
      QLinear(b, q, a + ".in_proj", h, di + conv + heads, false);
      b.Conv(a + ".conv1d", conv, conv, {k}, true, conv);
      b.Param(a + ".dt_bias", {heads});
      b.Param(a + ".A_log", {heads});
      b.Param(a + ".D", {heads});
      b.RmsNorm(a + ".norm", di);
      QLinear(b, q, a + ".out_proj", di, h, false);
      break;
    }
    case LayerMixer::kMamba: {
      const std::string a = l + ".mixer";
      const uint64_t di = s.conv_channels, ds = s.elements_per_head, dt = CeilDivOrZero(h, 16);
      QLinear(b, q, a + ".in_proj", h, 2 * di, false);
      b.Conv(a + ".conv1d", di, di, {k}, true, di);
      QLinear(b, q, a + ".x_proj", di, dt + 2 * ds, false);
      b.Linear(a + ".dt_proj", dt, di, true);
      b.Param(a + ".A_log", {di, ds});
      b.Param(a + ".D", {di});
      QLinear(b, q, a + ".out_proj", di, h, false);
      break;
    }
    case LayerMixer::kKimiDelta: {
      const std::string a = l + ".self_attn";
      const uint64_t d = x.kda_head_dim, w = MulDims(b, x.kda_heads, d, "kda heads x head_dim");
      for (const char* p : {".q_proj", ".k_proj", ".v_proj"}) QLinear(b, q, a + p, h, w, false);
      for (const char* p : {".q_conv1d", ".k_conv1d", ".v_conv1d"})
        b.Conv(a + p, w, w, {k}, false, w);
      b.Linear(a + ".f_a_proj", h, d, false);
      b.Linear(a + ".f_b_proj", d, w, false);
      b.Linear(a + ".b_proj", h, x.kda_heads, false);
      b.Linear(a + ".g_a_proj", h, d, false);
      b.Linear(a + ".g_b_proj", d, w, false);
      b.Param(a + ".A_log", {x.kda_heads});
      b.Param(a + ".dt_bias", {w});
      b.RmsNorm(a + ".o_norm", d);
      QLinear(b, q, a + ".o_proj", w, h, false);
      break;
    }
    case LayerMixer::kShortConv: {
      const std::string a = l + ".conv";
      QLinear(b, q, a + ".in_proj", h, 3 * s.conv_channels, false);
      b.Conv(a + ".conv", s.conv_channels, s.conv_channels, {k}, false, s.conv_channels);
      QLinear(b, q, a + ".out_proj", s.conv_channels, h, false);
      break;
    }
    case LayerMixer::kLinearAttention: {
      const std::string a = l + ".self_attn";
      const uint64_t w = MulDims(b, L.num_heads, L.head_dim_k, "heads x head_dim");
      QLinear(b, q, a + ".qkv_proj", h, 3 * w, false);
      QLinear(b, q, a + ".output_gate", h, w, false);
      b.RmsNorm(a + ".norm", w);
      QLinear(b, q, a + ".out_proj", w, h, false);
      break;
    }
    case LayerMixer::kAttention:
    case LayerMixer::kNone:
      break;
  }
}

}  // namespace

void Mixer(ModelBuilder& b, const Quantization& q, const std::string& l, const LayerInfo& L,
           const Hyperparameters& hp, const Extras& x) {
  if (L.recurrent) Recurrent(b, q, l, L, hp, x);
  if (L.attention == AttentionKind::kNone) return;
  const std::string a = l + ".self_attn";
  if (L.attention == AttentionKind::kMla) {
    EmitMla(b, q, a,
            {.heads = L.num_heads,
             .q_lora = hp.q_lora_rank,
             .kv_lora = hp.kv_lora_rank,
             .nope = hp.qk_nope_head_dim,
             .rope = hp.qk_rope_head_dim,
             .v = L.head_dim_v},
            false);
  } else {
    Attention(b, q, a, L, hp, x);
  }
  if (L.indexer_head_dim > 0 && x.index_n_heads > 0) Indexer(b, a, hp, x);
}

void Mlp(ModelBuilder& b, const Quantization& q, const std::string& l, const LayerInfo& L,
         const Hyperparameters& hp, const Extras& x) {
  const uint64_t h = hp.hidden_size;
  auto ffn = [&](const std::string& m, uint64_t in, uint64_t width) {
    if (hp.gated_mlp) QLinear(b, q, m + ".gate_proj", in, width, false);
    QLinear(b, q, m + ".up_proj", in, width, false);
    QLinear(b, q, m + ".down_proj", width, in, false);
  };
  if (L.intermediate_size > 0) ffn(l + ".mlp", h, L.intermediate_size);
  if (!L.moe || hp.num_experts == 0) return;
  const std::string m = l + (L.intermediate_size > 0 ? ".moe" : ".mlp");
  b.Param(m + ".gate.weight", {hp.num_experts, h});
  if (x.router_bias) {
    b.Buffer(m + ".gate.e_score_correction_bias", {hp.num_experts}, Dtype::kF32, true);
  }
  const uint64_t e_in = x.moe_latent ? x.moe_latent : h;
  if (x.moe_latent) {
    QLinear(b, q, m + ".fc1_latent_proj", h, x.moe_latent, false);
    QLinear(b, q, m + ".fc2_latent_proj", x.moe_latent, h, false);
  }
  RepeatedModules(b, q, m + ".experts", hp.num_experts,
                  [&](const std::string& ex) { ffn(ex, e_in, hp.moe_intermediate_size); });
  if (hp.shared_expert_intermediate_size > 0) {
    ffn(m + ".shared_experts", h, hp.shared_expert_intermediate_size);
    if (x.shared_expert_gate) b.Param(m + ".shared_expert_gate.weight", {1, h});
  }
}

}  // namespace memfit::arch::generic
