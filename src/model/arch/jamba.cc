// AI21 Jamba (jamba: Jamba-v0.1, Jamba-1.5/1.6/1.7 Mini and Large). Not a DecoderSpec row: each
// layer is attention or a Mamba-1 mixer by period and offset, and its feed-forward is dense or a
// routed MoE by another period and offset, which a spec cannot say.
// - layer i is attention when i % "attn_layer_period" (8) == "attn_layer_offset" (4), else
//   Mamba (JambaConfig.layers_block_type); its feed_forward is a MoE of "num_experts" (16)
//   when num_experts > 1 and i % "expert_layer_period" (2) == "expert_layer_offset" (1), else
//   a dense gated MLP (layers_num_experts);
// - attention: self_attn.q/k/v/o_proj without bias (GQA, head_dim = H / heads), no rotary
//   (Jamba has no position embedding);
// - Mamba: the Mamba-1 mixer (mamba1_mixer.h) with dt/B/C RMSNorms, d_inner = "mamba_expand" x
//   H, "mamba_d_state" (16), "mamba_d_conv" (4), "mamba_dt_rank" ("auto": ceil(H / 16)),
//   "mamba_conv_bias" (true), "mamba_proj_bias" (false);
// - feed_forward: gate/up [I, H], down [H, I]; MoE: router [E, H] (no bias) and experts.N with
//   the same gated MLP of "intermediate_size", stored per expert;
// - input_layernorm / pre_ff_layernorm per layer, model.final_layernorm; lm_head untied by
//   default.
// Sources: transformers models/jamba/{configuration,modular}_jamba.py (JambaConfig's defaults,
// layers_block_type, layers_num_experts; JambaAttention, JambaMambaMixer, JambaSparseMoeBlock,
// JambaAttentionDecoderLayer, JambaMambaDecoderLayer, JambaModel); configs ai21labs/Jamba-v0.1,
// ai21labs/AI21-Jamba-Mini-1.5.

#include "model/arch/mamba_families.h"
#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/mamba1_mixer.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

struct Period {
  uint64_t period = 0, offset = 0;
  bool Hit(uint64_t i) const { return i % period == offset; }
};

// "<name>_layer_period" / "<name>_layer_offset"; JambaConfig._check_supported_offset requires
// offset < period.
Period ReadPeriod(ModelBuilder& b, const HfConfig& c, const std::string& name, uint64_t period,
                  uint64_t offset) {
  Period p{Get(b, c.UintOr(name + "_layer_period", period)),
           Get(b, c.UintOr(name + "_layer_offset", offset))};
  if (!b.failed() && p.offset >= p.period) {
    b.Fail(MakeError("{}: \"{}_layer_offset\" ({}) must be smaller than \"{}_layer_period\" ({})",
                     c.where(), name, p.offset, name, p.period));
  }
  return p;
}

}  // namespace

Result<Model> BuildJamba(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadDecoderBasics(b, c, {});  // JambaConfig: tie_word_embeddings false, intermediate 14336
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  const Period attn = ReadPeriod(b, c, "attn", 8, 4);
  const Period expert = ReadPeriod(b, c, "expert", 2, 1);
  const uint64_t experts = Get(b, c.UintOr("num_experts", 16));
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size, hd = hp.head_dim, inter = hp.intermediate_size;
  Mamba1Dims d;
  d.d_inner = MulDims(b, Get(b, c.UintOr("mamba_expand", 2)), h, "mamba_expand x hidden_size");
  d.d_state = Get(b, c.UintOr("mamba_d_state", 16));
  d.kernel = Get(b, c.UintOr("mamba_d_conv", 4));
  d.dt_rank = ReadTimeStepRank(b, c, "mamba_dt_rank", h);
  d.conv_bias = Get(b, c.BoolOr("mamba_conv_bias", true));
  d.proj_bias = Get(b, c.BoolOr("mamba_proj_bias", false));
  d.norms = Mamba1Norms::kJamba;
  if (experts > 1) {
    hp.num_experts = experts;
    hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", 2));
    hp.moe_intermediate_size = inter;
  }
  Quantization q = ReadQuantization(b, c, o);
  bool any_mamba = false;
  for (uint64_t i = 0; i < hp.num_layers && !any_mamba; ++i) any_mamba = !attn.Hit(i);
  if (any_mamba) {
    if (auto st = ResolveMamba1(b, c, d,
                                "\"mamba_expand\", \"mamba_d_state\", \"mamba_d_conv\" and "
                                "\"mamba_dt_rank\"");
        !st) {
      return st.error();
    }
  }
  if (b.failed()) return b.Finish();
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    LayerInfo info;
    if (attn.Hit(i)) {
      QLinear(b, q, l + ".self_attn.q_proj", h, hp.num_attention_heads * hd, false);
      QLinear(b, q, l + ".self_attn.k_proj", h, hp.num_kv_heads * hd, false);
      QLinear(b, q, l + ".self_attn.v_proj", h, hp.num_kv_heads * hd, false);
      QLinear(b, q, l + ".self_attn.o_proj", hp.num_attention_heads * hd, h, false);
      info = AttentionInfo(hp, false, 0);
    } else {
      info = EmitMamba1(b, q, l + ".mamba", h, d);
    }
    const std::string ff = l + ".feed_forward";
    if (experts > 1 && expert.Hit(i)) {
      QLinear(b, q, ff + ".router", h, experts, false);
      RepeatedModules(b, q, ff + ".experts", experts,
                      [&](const std::string& ex) { QGatedMlp(b, q, ex, h, inter); });
      info.moe = true;
    } else {
      QGatedMlp(b, q, ff, h, inter);
      info.intermediate_size = inter;
    }
    b.RmsNorm(l + ".input_layernorm", h);
    b.RmsNorm(l + ".pre_ff_layernorm", h);
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.final_layernorm", h);
  return FinishDecoder(b, c, o, q);
}

}  // namespace memfit::arch
