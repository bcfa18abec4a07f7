// Falcon-H1 (falcon_h1: Falcon-H1-0.5B ... 34B, Falcon-H1-Tiny), as transformers'
// FalconH1ForCausalLM builds it. Every layer runs attention and a Mamba-2 mixer side by side on
// one normed input, then a SwiGLU feed-forward:
// - input_layernorm [H]; self_attn.{q,k,v,o}_proj (llama GQA, "head_dim", "attention_bias");
// - mamba (FalconH1Mixer, mamba2_mixer.h): in_proj [d_ssm + conv_dim + heads, H] (bias
//   "mamba_proj_bias"), conv1d [conv_dim, 1, mamba_d_conv] (+ bias "mamba_conv_bias"), dt_bias,
//   A_log, D [heads], mamba.norm [d_ssm] only with "mamba_rms_norm", out_proj [H, d_ssm] (bias
//   "projectors_bias"), where d_ssm = "mamba_d_ssm" (else mamba_expand x H) and conv_dim =
//   d_ssm + 2 x mamba_n_groups x mamba_d_state; plus the non-persistent muP buffer
//   mamba.mup_vector [1, 1, 2 d_ssm + 2 x groups x d_state + heads] (torch.ones in the default
//   dtype: the model's);
// - pre_ff_layernorm [H]; feed_forward.{gate,up,down}_proj (LlamaMLP, "mlp_bias");
// - model.final_layernorm, one model.rotary_emb.inv_freq [head_dim / 2], lm_head (untied by
//   default).
// The muP multipliers (embedding_, lm_head_, key_, attention_in/out_, ssm_*, mlp_multipliers)
// scale activations and create no tensor. "mamba_use_mlp" is not read by transformers (the
// feed-forward is always built). Absent keys take FalconH1Config's defaults, printed as
// assumptions (note mamba_d_ssm's 1024, not expand x H). Each layer keeps both a KV cache and
// a Mamba-2 state; "mamba_chunk_size" (default 256) is the SSD chunk of the torch path.
// Source: transformers models/falcon_h1/{modular_falcon_h1.py (commit 3c0a5c70),
// configuration_falcon_h1.py (commit 020a37d2)}.

#include <fmt/format.h>

#include "model/arch/config_defaults.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/mamba2_mixer.h"
#include "model/arch/moe_hybrid_families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

constexpr std::string_view kFalconH1Class = "FalconH1Config";

}  // namespace

Result<Model> BuildFalconH1(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  ReadDecoderBasics(b, c, {});  // FalconH1Config: tie_word_embeddings false
  auto& hp = m.hp;
  NoteTieDefault(b, c, hp.tie_word_embeddings, kFalconH1Class);
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  const bool attn_bias = Get(b, c.BoolOr("attention_bias", false));
  const bool mlp_bias = Get(b, c.BoolOr("mlp_bias", false));
  // FalconH1Config's Mamba defaults, each printed when config.json leaves it out.
  constexpr std::pair<std::string_view, std::string_view> kMambaDefaults[] = {
      {"mamba_n_heads", "128"}, {"mamba_n_groups", "1"}, {"mamba_d_state", "256"},
      {"mamba_d_conv", "4"},    {"mamba_expand", "2"},   {"mamba_conv_bias", "true"},
      {"mamba_proj_bias", "false"}, {"projectors_bias", "false"}};
  for (const auto& [key, value] : kMambaDefaults) {
    if (Absent(c, key)) {
      m.assumptions.push_back(
          fmt::format("\"{}\" absent from config.json: {}'s default {}", key, kFalconH1Class, value));
    }
  }
  Mamba2Dims mixer = ReadMamba2(b, c);
  // mamba_d_ssm: null means mamba_expand x H; absent means the class default 1024.
  if (!c.raw().contains("mamba_d_ssm")) {
    mixer.d_ssm = 1024;
    m.assumptions.push_back(fmt::format(
        "\"mamba_d_ssm\" absent from config.json: {}'s default 1024", kFalconH1Class));
  } else {
    mixer.d_ssm = Get(b, c.UintOr("mamba_d_ssm", 0));
  }
  mixer.gated_norm = BoolDefault(b, c, "mamba_rms_norm", false, kFalconH1Class);
  mixer.out_bias = Get(b, c.BoolOr("projectors_bias", false));
  hp.ssm_chunk_size = UintDefault(b, c, "mamba_chunk_size", 256, kFalconH1Class);
  if (!Get(b, c.BoolOr("mamba_use_mlp", true))) {
    m.assumptions.push_back("\"mamba_use_mlp\" is false, but FalconH1ForCausalLM builds the "
                            "feed-forward in every layer regardless: counted");
  }
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size;
  if (auto st = ResolveMamba2(b, c, h, mixer); !st) return st.error();
  if (b.failed()) return b.Finish();
  const uint64_t hd = hp.head_dim, inter = hp.intermediate_size;
  const uint64_t q_width = MulDims(b, hp.num_attention_heads, hd, "num_attention_heads x head_dim");
  const uint64_t kv_width = MulDims(b, hp.num_kv_heads, hd, "num_key_value_heads x head_dim");
  const uint64_t mup = 2 * mixer.d_inner + 2 * mixer.groups * mixer.d_state + mixer.heads;
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    b.RmsNorm(l + ".input_layernorm", h);
    LayerInfo info = EmitMamba2(b, q, l + ".mamba", h, mixer);
    b.Buffer(l + ".mamba.mup_vector", {1, 1, mup}, b.dtype(), false);
    QLinear(b, q, l + ".self_attn.q_proj", h, q_width, attn_bias);
    QLinear(b, q, l + ".self_attn.k_proj", h, kv_width, attn_bias);
    QLinear(b, q, l + ".self_attn.v_proj", h, kv_width, attn_bias);
    QLinear(b, q, l + ".self_attn.o_proj", q_width, h, attn_bias);
    b.RmsNorm(l + ".pre_ff_layernorm", h);
    QGatedMlp(b, q, l + ".feed_forward", h, inter, mlp_bias);
    // Both caches: the Mamba-2 state (EmitMamba2) and this layer's attention KV.
    const LayerInfo attn = AttentionInfo(hp, false, 0);
    info.attention = attn.attention;
    info.num_heads = attn.num_heads;
    info.num_kv_heads = attn.num_kv_heads;
    info.head_dim_k = attn.head_dim_k;
    info.head_dim_v = attn.head_dim_v;
    info.intermediate_size = inter;
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.final_layernorm", h);
  b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  return FinishDecoder(b, c, o, q);
}

}  // namespace memfit::arch
