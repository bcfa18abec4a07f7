// The state-space and hybrid families that are a HybridSpec row (hybrid_spec.h), one per
// model_type, each naming its source. Parity with the builders they replaced:
// model_digest_test.cc. A hook beside a row reads what its fields cannot say; each says why.

#include <algorithm>
#include <cmath>

#include "formats/hf_config_json.h"
#include "model/arch/config_defaults.h"
#include "model/arch/families.h"
#include "model/arch/hybrid_spec.h"
#include "model/arch/issue30_families.h"
#include "model/arch/qwen_hybrid.h"
#include "model/arch/table_row.h"

namespace memfit::arch {
namespace {

// --- Pure state-space models: backbone.embeddings; backbone.layers.N.{norm, mixer.*};
// backbone.norm_f; lm_head (MambaForCausalLM, FalconMambaForCausalLM, Mamba2ForCausalLM; blocks
// MambaBlock / Mamba2Block). Configs state-spaces/mamba-130m-hf, tiiuae/falcon-mamba-7b,
// mistralai/Mamba-Codestral-7B-v0.1.
constexpr HybridSpec kSsmBackbone{.basics = HybridBasics::kSsm, .prefix = "backbone",
                                  .embed = "embeddings", .final_norm = "norm_f", .in_norm = "norm",
                                  .ssm_name = "mixer", .ffn = HybridFfn::kNone};

// mamba: transformers models/mamba/{configuration,modeling}_mamba.py. The Mamba-1 mixer of
// d_inner = "intermediate_size" (a key in the config wins over int(expand x H), as
// PretrainedConfig sets it after MambaConfig.__init__), "state_size" (16), "conv_kernel" (4),
// "time_step_rank" ("auto": ceil(H / 16)), "use_bias" (true), "use_conv_bias" (true); tied by
// default.
constexpr Mamba1Keys kMambaKeys{.inner = "intermediate_size", .expand = "expand",
                                .state = "state_size", .kernel = "conv_kernel",
                                .rank = "time_step_rank", .conv_bias = "use_conv_bias",
                                .proj_bias = "use_bias", .proj_bias_default = true,
                                .norms = Mamba1Norms::kNone};
constexpr HybridSpec MambaRow(const Mamba1Keys& keys) {
  HybridSpec s = kSsmBackbone;
  s.tie_default = true;
  s.ssm = SsmKind::kMamba1;
  s.m1 = keys;
  return s;
}
constexpr HybridSpec kMamba = MambaRow(kMambaKeys);

// falcon_mamba: models/falcon_mamba/modular_falcon_mamba.py. Mamba's keys (FalconMambaConfig
// reads "intermediate_size" explicitly), "use_bias" false by default, and the kernels' all-ones
// b_c_rms / dt_rms buffers (an assumption line says so).
constexpr HybridSpec kFalconMamba = MambaRow(
    {.inner = "intermediate_size", .expand = "expand", .state = "state_size",
     .kernel = "conv_kernel", .rank = "time_step_rank", .conv_bias = "use_conv_bias",
     .proj_bias = "use_bias", .norms = Mamba1Norms::kFalconBuffers});

// mamba2: models/mamba2/{configuration,modeling}_mamba2.py. The Mamba-2 mixer of d_inner =
// int("expand" x H) (Mamba2Mixer ignores "intermediate_size"), "num_heads" (128) x "head_dim"
// (64), which must equal d_inner, "n_groups" (8), "state_size" (128), "conv_kernel" (4),
// "use_bias" (false), "use_conv_bias" (true), "chunk_size" (256); untied by default.
constexpr HybridSpec Mamba2Row() {
  HybridSpec s = kSsmBackbone;
  s.m2 = {.heads = "num_heads", .head_dim = "head_dim", .head_dim_default = 64,
          .groups = "n_groups", .groups_default = 8, .state = "state_size", .state_default = 128,
          .kernel = "conv_kernel", .expand = "expand", .conv_bias = "use_conv_bias",
          .proj_bias = "use_bias", .chunk = "chunk_size"};
  return s;
}
constexpr HybridSpec kMamba2 = Mamba2Row();

// --- Mamba-2 / attention hybrids under model.*: a layer is the Mamba-2 mixer (BambaMixer's keys:
// "mamba_n_heads" 128, "mamba_d_head" "auto" = d_inner / heads, "mamba_n_groups" 1,
// "mamba_d_state" 256, "mamba_d_conv" 4, "mamba_expand" 2, "mamba_conv_bias" true,
// "mamba_proj_bias" false, "mamba_chunk_size" 256) or GQA attention self_attn.q/k/v/o_proj
// (head_dim = H / heads unless "head_dim", "attention_bias" false), then a feed-forward;
// untied by default.

// bamba (IBM Bamba-9B): "attn_layer_indices" lists the attention layers (absent or null: every
// layer Mamba); pre_ff_layernorm, then BambaMLP feed_forward.{gate,up,down}_proj ("mlp_bias");
// model.final_layernorm; one non-persistent model.rotary_emb.inv_freq
// [int(head_dim x partial_rotary_factor) / 2] (factor 0.5 by default).
// Source: transformers 4.48 models/bamba/{configuration,modeling}_bamba.py (BambaConfig's
// defaults and layers_block_type, BambaModel, BambaDecoderLayer, BambaAttention, BambaMLP).
constexpr HybridSpec kBamba{.layers = LayerRule::kAttnIndices, .rotary = HybridRotary::kPartial};

// granitemoehybrid (IBM Granite 4.0-H micro/tiny/small): "layer_types" (alias
// "layers_block_type": "mamba" or "attention"; absent: every layer Mamba);
// post_attention_layernorm, then granitemoeshared's feed-forward: block_sparse_moe (when
// num_local_experts > 0) fused input_linear [E, 2I, H], output_linear [E, H, I], router.layer
// [E, H], and shared_mlp.input_linear [2S, H], output_linear [H, S] always (S =
// shared_intermediate_size; the dense "micro" models are this MLP alone); model.norm;
// model.rotary_emb only when position_embedding_type is "rope" (Granite 4.0-H uses none).
// Source: transformers models/granitemoehybrid/{configuration,modular}_granitemoehybrid.py,
// granitemoeshared/modeling_granitemoeshared.py (MoE and shared MLP).
// The hook: the experts (GraniteMoeHybridConfig's defaults: 8 experts, 2 per token, I 11008) and
// the shared MLP (S 1024), whose widths set hp differently with and without experts.
void ReadGraniteFfn(ModelBuilder& b, const HfConfig& c, const HybridSpec&, HybridPlan& p) {
  auto& hp = b.model().hp;
  p.experts = Get(b, c.UintOr("num_local_experts", 8));
  p.shared = Get(b, c.UintOr("shared_intermediate_size", 1024));
  if (p.experts > 0) {
    hp.num_experts = p.experts;
    hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", 2));
    hp.moe_intermediate_size = Get(b, c.UintOr("intermediate_size", 11008));
    p.moe.assign(hp.num_layers, true);
  }
  p.expert_width = hp.moe_intermediate_size;
  hp.num_shared_experts = p.experts > 0 && p.shared > 0 ? 1 : 0;
  hp.intermediate_size = p.experts > 0 ? hp.moe_intermediate_size : p.shared;
  hp.shared_expert_intermediate_size = p.shared;
}
constexpr HybridSpec kGraniteMoeHybrid{
    .need_intermediate = false, .final_norm = "norm", .ff_norm = "post_attention_layernorm",
    .layers = LayerRule::kMambaTypes, .ffn = HybridFfn::kGranite,
    .rotary = HybridRotary::kWhenRopeNamed, .read = ReadGraniteFfn};

// falcon_h1 (Falcon-H1-0.5B ... 34B, Falcon-H1-Tiny; FalconH1ForCausalLM): every layer runs
// attention and the Mamba-2 mixer side by side on one normed input, then a SwiGLU feed-forward:
// - input_layernorm [H]; self_attn.{q,k,v,o}_proj (llama GQA, "head_dim", "attention_bias");
// - mamba (FalconH1Mixer): in_proj [d_ssm + conv_dim + heads, H] (bias "mamba_proj_bias"),
//   conv1d [conv_dim, 1, mamba_d_conv] (+ bias "mamba_conv_bias"), dt_bias, A_log, D [heads],
//   mamba.norm [d_ssm] only with "mamba_rms_norm", out_proj [H, d_ssm] (bias "projectors_bias"),
//   where d_ssm = "mamba_d_ssm" (else mamba_expand x H) and conv_dim = d_ssm + 2 x
//   mamba_n_groups x mamba_d_state; plus the non-persistent muP buffer mamba.mup_vector
//   [1, 1, 2 d_ssm + 2 x groups x d_state + heads] (torch.ones in the default dtype: the model's);
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
// The hook: those assumption lines, and mamba_d_ssm's null / absent distinction.
constexpr std::string_view kFalconH1Class = "FalconH1Config";
void ReadFalconH1(ModelBuilder& b, const HfConfig& c, const HybridSpec&, HybridPlan& p) {
  Model& m = b.model();
  NoteTieDefault(b, c, m.hp.tie_word_embeddings, kFalconH1Class);
  constexpr std::pair<std::string_view, std::string_view> kMambaDefaults[] = {
      {"mamba_n_heads", "128"}, {"mamba_n_groups", "1"}, {"mamba_d_state", "256"},
      {"mamba_d_conv", "4"},    {"mamba_expand", "2"},   {"mamba_conv_bias", "true"},
      {"mamba_proj_bias", "false"}, {"projectors_bias", "false"}};
  for (const auto& [key, value] : kMambaDefaults) {
    if (Absent(c, key)) {
      m.assumptions.push_back(fmt::format("\"{}\" absent from config.json: {}'s default {}",
                                          key, kFalconH1Class, value));
    }
  }
  // mamba_d_ssm: null means mamba_expand x H; absent means the class default 1024.
  if (!c.raw().contains("mamba_d_ssm")) {
    p.m2.d_ssm = 1024;
    m.assumptions.push_back(fmt::format(
        "\"mamba_d_ssm\" absent from config.json: {}'s default 1024", kFalconH1Class));
  } else {
    p.m2.d_ssm = Get(b, c.UintOr("mamba_d_ssm", 0));
  }
  p.m2.gated_norm = BoolDefault(b, c, "mamba_rms_norm", false, kFalconH1Class);
  m.hp.ssm_chunk_size = UintDefault(b, c, "mamba_chunk_size", 256, kFalconH1Class);
  if (!Get(b, c.BoolOr("mamba_use_mlp", true))) {
    m.assumptions.push_back("\"mamba_use_mlp\" is false, but FalconH1ForCausalLM builds the "
                            "feed-forward in every layer regardless: counted");
  }
}
constexpr HybridSpec kFalconH1{.layers = LayerRule::kBoth, .m2 = {.out_bias = "projectors_bias"},
                               .mup_vector = true, .rotary = HybridRotary::kHeadDim,
                               .read = ReadFalconH1};

// --- jamba (AI21 Jamba-v0.1, Jamba-1.5/1.6/1.7 Mini and Large):
// - layer i is attention when i % "attn_layer_period" (8) == "attn_layer_offset" (4), else
//   Mamba (JambaConfig.layers_block_type); its feed_forward is a MoE of "num_experts" (16)
//   when num_experts > 1 and i % "expert_layer_period" (2) == "expert_layer_offset" (1), else
//   a dense gated MLP (layers_num_experts);
// - attention: self_attn.q/k/v/o_proj without bias (GQA, head_dim = H / heads), no rotary
//   (Jamba has no position embedding);
// - Mamba: the Mamba-1 mixer with dt/B/C RMSNorms, d_inner = "mamba_expand" x H,
//   "mamba_d_state" (16), "mamba_d_conv" (4), "mamba_dt_rank" ("auto": ceil(H / 16)),
//   "mamba_conv_bias" (true), "mamba_proj_bias" (false);
// - feed_forward: gate/up [I, H], down [H, I]; MoE: router [E, H] (no bias) and experts.N with
//   the same gated MLP of "intermediate_size", stored per expert;
// - input_layernorm / pre_ff_layernorm per layer (emitted after the feed-forward),
//   model.final_layernorm; lm_head untied by default.
// Sources: transformers models/jamba/{configuration,modular}_jamba.py (JambaConfig's defaults,
// layers_block_type, layers_num_experts; JambaAttention, JambaMambaMixer, JambaSparseMoeBlock,
// JambaAttentionDecoderLayer, JambaMambaDecoderLayer, JambaModel); configs ai21labs/Jamba-v0.1,
// ai21labs/AI21-Jamba-Mini-1.5.
// The hook: two period/offset pairs, one for the mixer and one for the experts.
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

void ReadJambaLayers(ModelBuilder& b, const HfConfig& c, const HybridSpec&, HybridPlan& p) {
  auto& hp = b.model().hp;
  const Period attn = ReadPeriod(b, c, "attn", 8, 4);
  const Period expert = ReadPeriod(b, c, "expert", 2, 1);
  p.experts = Get(b, c.UintOr("num_experts", 16));
  if (b.failed()) return;
  if (p.experts > 1) {
    hp.num_experts = p.experts;
    hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", 2));
    hp.moe_intermediate_size = hp.intermediate_size;
  }
  for (uint64_t i = 0; i < hp.num_layers; ++i) {
    p.blocks.push_back(attn.Hit(i) ? HybridBlock::kAttention : HybridBlock::kSsm);
    p.moe.push_back(p.experts > 1 && expert.Hit(i));
  }
}
constexpr HybridSpec kJamba{.norms_last = true, .layers = LayerRule::kHook,
                            .ssm = SsmKind::kMamba1, .attn_bias_key = "",
                            .ffn = HybridFfn::kJamba, .read = ReadJambaLayers};

// --- nemotron_h (NVIDIA Nemotron-H and Nemotron-3): a stack whose blocks are each one norm and
// one mixer, by "hybrid_override_pattern" (M = Mamba-2, * = attention, - = MLP, E = MoE) or
// "layers_block_type" ("mamba"/"linear_attention", "attention"/"full_attention", "mlp", "moe").
// Names as the checkpoints store them (NVIDIA's remote code, which transformers' conversion maps
// from): backbone.embeddings, backbone.layers.N.{norm, mixer.*}, backbone.norm_f, lm_head.
// - Mamba-2: in_proj [d_inner + conv_dim + heads, H] (d_inner = mamba_num_heads x
//   mamba_head_dim, conv_dim = d_inner + 2 x n_groups x ssm_state_size), depthwise conv1d
//   [conv_dim, 1, conv_kernel] (+ bias), dt_bias, A_log, D [heads], gated norm [d_inner], out_proj;
//   NemotronHConfig's defaults mamba_head_dim 64, n_groups 8, ssm_state_size 128, conv_kernel 4,
//   "use_bias" false, "use_conv_bias" true, "chunk_size" 128 ("mamba_chunk_size" its alias);
//   "mamba_ssm_cache_dtype" float32 keeps the state in float32, else the model dtype.
// - attention: q/k/v/o without rotary (Nemotron-H attention has no position embedding);
//   head_dim "head_dim" (Nemotron-3), "attention_head_dim" (Nemotron-H), else H / heads.
// - MLP and experts: non-gated up_proj/down_proj (relu2, "mlp_hidden_act").
// - MoE: router gate.weight [E, H] with a float32 e_score_correction_bias [E] buffer, experts
//   split per expert, a shared expert of moe_shared_expert_intermediate_size, and with
//   "moe_latent_size" (Nemotron-3 Ultra) fc1/fc2_latent_proj around experts of the latent width.
// - MTP ("num_nextn_predict_layers", blocks "mtp_layers_block_type"): mtp.layers.N, the first with
//   enorm/hnorm/eh_proj, the last with final_layernorm; stored, never loaded by transformers
//   (_keys_to_ignore_on_load_unexpected "mtp.*").
// Sources: transformers/models/nemotron_h/{modeling,configuration}_nemotron_h.py,
// vllm/model_executor/models/nemotron_h_mtp.py (MTP layout).
// The hooks: the layer count is the pattern's length, a key a used block needs is required (the
// others take the class defaults), and the MTP steps follow the head.

// One block per layer from a pattern string or a list of names; errors name `key`.
// NemotronHConfig._pattern_to_list, plus the legacy names of "layers_block_type".
std::vector<HybridBlock> ReadNemotronBlocks(ModelBuilder& b, const HfConfig& c,
                                            std::string_view key) {
  using B = HybridBlock;
  static const std::pair<std::string_view, HybridBlock> kNames[] = {
      {"M", B::kSsm},       {"mamba", B::kSsm},           {"linear_attention", B::kSsm},
      {"*", B::kAttention}, {"attention", B::kAttention}, {"full_attention", B::kAttention},
      {"-", B::kMlp},       {"mlp", B::kMlp},             {"E", B::kMoe},
      {"moe", B::kMoe}};
  std::vector<HybridBlock> out;
  const auto it = c.raw().find(std::string(key));
  std::vector<std::string> names;
  if (it->is_string()) {
    for (char ch : it->get<std::string>()) names.emplace_back(1, ch);
  } else if (it->is_array()) {
    for (const auto& e : *it) names.push_back(e.is_string() ? e.get<std::string>() : e.dump());
  } else {
    b.Fail(MakeError("{}: field \"{}\" must be a pattern string or a list of block types",
                     c.where(), key));
    return out;
  }
  for (const auto& name : names) {
    const auto* hit = std::find_if(std::begin(kNames), std::end(kNames),
                                   [&](const auto& k) { return k.first == name; });
    if (hit == std::end(kNames) || (it->is_string() && name.size() != 1)) {
      b.Fail(
          MakeError("{}: \"{}\" has an unknown block type \"{}\" (known: M * - E, or mamba, "
                    "attention, mlp, moe)",
                    c.where(), key, name));
      return {};
    }
    out.push_back(hit->second);
  }
  return out;
}

bool Uses(const HybridPlan& p, HybridBlock kind) {
  return std::find(p.blocks.begin(), p.blocks.end(), kind) != p.blocks.end();
}

// The attention heads and head_dim, checked where attention layers need them.
void ReadNemotronHeads(ModelBuilder& b, const HfConfig& c, const HybridPlan& p) {
  auto& hp = b.model().hp;
  hp.num_attention_heads = Get(b, c.Uint("num_attention_heads"));
  hp.num_kv_heads = Get(b, c.UintOr("num_key_value_heads", hp.num_attention_heads));
  if (b.failed()) return;
  if (hp.num_attention_heads == 0 && Uses(p, HybridBlock::kAttention)) {
    b.Fail(MakeError("{}: field \"num_attention_heads\" must not be zero", c.where()));
  } else if (hp.num_attention_heads > 0 &&
             (hp.num_kv_heads == 0 || hp.num_attention_heads % hp.num_kv_heads != 0)) {
    b.Fail(MakeError("{}: \"num_attention_heads\" = {} is not a multiple of "
                     "\"num_key_value_heads\" = {}",
                     c.where(), hp.num_attention_heads, hp.num_kv_heads));
  } else if (c.Has("head_dim") || c.Has("attention_head_dim")) {
    hp.head_dim = Get(b, c.UintAny({"head_dim", "attention_head_dim"}));
  } else if (hp.num_attention_heads > 0) {
    hp.head_dim = DivideExact(b, c, hp.hidden_size, "hidden_size", hp.num_attention_heads,
                              "num_attention_heads");
  }
}

void ReadNemotronH(ModelBuilder& b, const HfConfig& c, const HybridSpec&, HybridPlan& p) {
  auto& hp = b.model().hp;
  // "layers_block_type"" (Nemotron-3) unless absent or null, else "hybrid_override_pattern".
  const char* key = c.Has("layers_block_type") && !c.raw()["layers_block_type"].is_null()
                        ? "layers_block_type"
                        : "hybrid_override_pattern";
  if (!c.Has(key)) {
    b.Fail(MakeError("{}: field \"hybrid_override_pattern\" (or \"layers_block_type\") is missing",
                     c.where()));
    return;
  }
  p.blocks = ReadNemotronBlocks(b, c, key);
  if (!b.failed() && p.blocks.empty()) {
    b.Fail(MakeError("{}: field \"{}\" lists no layers", c.where(), key));
  }
  hp.num_layers = p.blocks.size();
  ReadNemotronHeads(b, c, p);
  p.mlp_bias = Get(b, c.BoolOr("mlp_bias", false));
  hp.intermediate_size = Get(b, Uses(p, HybridBlock::kMlp) ? c.Uint("intermediate_size")
                                                           : c.UintOr("intermediate_size", 0));
  if (Uses(p, HybridBlock::kMoe)) {
    p.experts = hp.num_experts = Get(b, c.Uint("n_routed_experts"));
    p.expert_width = hp.moe_intermediate_size = Get(b, c.Uint("moe_intermediate_size"));
    p.shared = hp.shared_expert_intermediate_size =
        Get(b, c.UintOr("moe_shared_expert_intermediate_size", 0));
    p.latent = Get(b, c.UintOr("moe_latent_size", 0));
    hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
    hp.num_shared_experts = Get(b, c.UintOr("n_shared_experts", 1));
  }
  hp.num_mtp_layers = Get(b, c.UintOr("num_nextn_predict_layers", 0));
}

// The multi-token-prediction steps (vLLM nemotron_h_mtp.py): each step is the blocks of
// "mtp_layers_block_type" (default attention then MoE), the first with enorm/hnorm/eh_proj, the
// last with final_layernorm; stored only.
void EmitNemotronHMtp(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                      const HybridSpec& s, const HybridPlan& p) {
  Model& m = b.model();
  const auto& hp = m.hp;
  if (hp.num_mtp_layers == 0 || b.failed()) return;
  const uint64_t h = hp.hidden_size;
  const char* mtp_key = c.Has("mtp_layers_block_type")         ? "mtp_layers_block_type"
                        : c.Has("mtp_hybrid_override_pattern") ? "mtp_hybrid_override_pattern"
                                                               : nullptr;
  const std::vector<HybridBlock> mtp =
      mtp_key ? ReadNemotronBlocks(b, c, mtp_key)
              : std::vector<HybridBlock>{HybridBlock::kAttention, HybridBlock::kMoe};
  const size_t begin = m.tensors.size();
  for (uint64_t step = 0; step < hp.num_mtp_layers && !b.failed(); ++step) {
    for (size_t k = 0; k < mtp.size() && !b.failed(); ++k) {
      const std::string l = Layer("mtp.layers", step * mtp.size() + k);
      if (k == 0) {
        b.RmsNorm(l + ".enorm", h);
        b.RmsNorm(l + ".hnorm", h);
        QLinear(b, q, l + ".eh_proj", 2 * h, h, false);
      }
      EmitHybridLayer(b, q, s, p, l, mtp[k], false);
      if (k + 1 == mtp.size()) b.RmsNorm(l + ".final_layernorm", h);
    }
  }
  MarkStoredOnly(m, begin);
  m.notes.push_back(
      fmt::format("{} multi-token-prediction step(s) (mtp.layers.*) are stored in "
                  "the checkpoint but not loaded by transformers",
                  hp.num_mtp_layers));
}

void AfterNemotronHHead(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                        const HybridSpec& s, const HybridPlan& p) {
  EmitNemotronHMtp(b, c, q, s, p);
  if (Uses(p, HybridBlock::kMoe)) {
    b.model().assumptions.push_back(
        "MoE router e_score_correction_bias stored in float32 (transformers "
        "keeps it in float32); Mamba A_log/D/dt_bias in the checkpoint dtype");
  }
}
constexpr HybridSpec kNemotronH{
    .basics = HybridBasics::kSsm, .act_key = "mlp_hidden_act", .act_default = "relu2",
    .layers_key = "", .prefix = "backbone", .embed = "embeddings",
    .final_norm = "norm_f", .in_norm = "norm", .layers = LayerRule::kHook, .ssm_name = "mixer",
    .m2 = {.inner = Mamba2Inner::kHeadsTimesDim, .heads = "mamba_num_heads", .heads_default = 0,
           .head_dim = "mamba_head_dim", .head_dim_default = 64, .groups = "n_groups",
           .groups_default = 8, .state = "ssm_state_size", .state_default = 128,
           .kernel = "conv_kernel", .conv_bias = "use_conv_bias", .proj_bias = "use_bias",
           .chunk = "chunk_size", .chunk_alias = "mamba_chunk_size", .chunk_default = 128,
           .cache_dtype = "mamba_ssm_cache_dtype"},
    .attn_name = "mixer", .ffn = HybridFfn::kNone, .read = ReadNemotronH,
    .after_head = AfterNemotronHHead};

// --- lfm2 (Liquid LFM2): gated short-convolution layers and attention layers ("full_attn_idxs",
// or "layer_types" of "full_attention"/"conv"), each with a SwiGLU feed_forward (w1, w3 [ff, H],
// w2 [H, ff]), then operator_norm and ffn_norm. Short conv: conv.in_proj [3 x conv_dim,
// conv_dim], depthwise conv.conv [conv_dim, 1, conv_L_cache] (3), conv.out_proj, biases with
// "conv_bias"; "conv_dim" must be hidden_size (Lfm2ShortConv uses hidden_size). Attention:
// q/k/v_proj, out_proj, per-head q_layernorm/k_layernorm [head_dim]. The final norm is
// model.embedding_norm, one model.pos_emb.inv_freq [head_dim / 2]; embeddings tied by default
// ("tie_embedding" in the original configs wins over "tie_word_embeddings").
// FFN width (Lfm2MLP): ff = "block_ff_dim" (or "intermediate_size"); with block_auto_adjust_ff_dim,
// ff = int(2 x ff / 3), ff = int(block_ffn_dim_multiplier x ff), then rounded up to a multiple of
// block_multiple_of. Source: transformers/models/lfm2/{modular,configuration}_lfm2.py.
// lfm2_moe (LiquidAI/LFM2-8B-A1B): the same layers ("layer_types" required), the first
// "num_dense_layers" (2) with a SwiGLU feed_forward of "intermediate_size" as is (Lfm2MoeMLP: no
// block_* adjustment), the rest a sparse block: feed_forward.gate [num_experts (32), H] (no bias),
// feed_forward.expert_bias [num_experts] (a persistent float32 buffer, with "use_expert_bias"),
// and per-expert feed_forward.experts.N.{w1, w3 [moe_intermediate_size (1792), H], w2} as the
// Hub checkpoint stores them (llama.cpp convert_hf_to_gguf.py LFM2MoeModel merges those
// per-expert tensors); 4 experts per token. Source:
// transformers/models/lfm2_moe/{modeling,configuration}_lfm2_moe.py.
// The hooks: the FFN width's arithmetic, the conv checks and the dense leading layers.

// Lfm2MLP's feed-forward width.
uint64_t Lfm2FfDim(ModelBuilder& b, const HfConfig& c) {
  uint64_t ff =
      Get(b, c.Has("block_ff_dim") ? c.Uint("block_ff_dim") : c.Uint("intermediate_size"));
  if (!Get(b, c.BoolOr("block_auto_adjust_ff_dim", true)) || b.failed()) return ff;
  ff = 2 * ff / 3;  // int(2 * ff / 3): ff is at most 2^40, so the float and integer forms agree
  const auto mult = c.raw().find("block_ffn_dim_multiplier");
  if (mult != c.raw().end() && !mult->is_null()) {
    const double factor = Get(b, c.NumberOr("block_ffn_dim_multiplier", 1.0));
    if (!(factor > 0.0 && factor <= 1024.0)) {
      b.Fail(MakeError("{}: \"block_ffn_dim_multiplier\" = {} must be in (0, 1024]", c.where(),
                       factor));
      return 0;
    }
    ff = static_cast<uint64_t>(std::floor(factor * static_cast<double>(ff)));
  }
  const uint64_t multiple = Get(b, c.UintOr("block_multiple_of", 256));
  if (!b.failed() && multiple == 0) {
    b.Fail(MakeError("{}: field \"block_multiple_of\" must not be zero", c.where()));
    return 0;
  }
  return multiple * ((ff + multiple - 1) / multiple);
}

void ReadLfm2Like(ModelBuilder& b, const HfConfig& c, HybridPlan& p, bool moe) {
  auto& hp = b.model().hp;
  if (c.Has("tie_embedding")) hp.tie_word_embeddings = Get(b, c.BoolOr("tie_embedding", true));
  p.conv_bias = Get(b, c.BoolOr("conv_bias", false));
  p.conv_kernel = Get(b, c.UintOr("conv_L_cache", 3));
  const uint64_t conv_dim = Get(b, c.UintOr("conv_dim", hp.hidden_size));
  if (moe) {
    hp.intermediate_size = Get(b, c.Uint("intermediate_size"));  // Lfm2MoeMLP: as is
    p.experts = hp.num_experts = Get(b, c.UintOr("num_experts", 32));
    const uint64_t dense = Get(b, c.UintOr("num_dense_layers", 2));
    p.expert_width = hp.moe_intermediate_size = Get(b, c.UintOr("moe_intermediate_size", 1792));
    p.expert_bias = Get(b, c.BoolOr("use_expert_bias", true));
    hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", 4));
    if (!b.failed() && (p.experts == 0 || p.expert_width == 0)) {
      b.Fail(MakeError("{}: \"num_experts\" and \"moe_intermediate_size\" must be positive",
                       c.where()));
    }
    for (uint64_t i = 0; i < hp.num_layers; ++i) p.moe.push_back(i >= dense);
  } else {
    hp.intermediate_size = Lfm2FfDim(b, c);
  }
  if (b.failed()) return;
  if (p.conv_kernel == 0) {
    b.Fail(MakeError("{}: field \"conv_L_cache\" must not be zero", c.where()));
  } else if (conv_dim != hp.hidden_size) {
    b.Fail(MakeError("{}: \"conv_dim\" = {} differs from \"hidden_size\" = {} (transformers' "
                     "Lfm2ShortConv uses hidden_size)",
                     c.where(), conv_dim, hp.hidden_size));
  } else if (moe && !c.Has("layer_types")) {
    b.Fail(MakeError("{}: field \"layer_types\" is missing (Lfm2MoeConfig requires it)",
                     c.where()));
  }
  hp.shortconv_l_cache = p.conv_kernel;
}
void ReadLfm2(ModelBuilder& b, const HfConfig& c, const HybridSpec&, HybridPlan& p) {
  ReadLfm2Like(b, c, p, false);
}
void ReadLfm2Moe(ModelBuilder& b, const HfConfig& c, const HybridSpec&, HybridPlan& p) {
  ReadLfm2Like(b, c, p, true);
}
constexpr HybridSpec Lfm2Row(HybridRead read) {
  return {.tie_default = true, .need_intermediate = false, .final_norm = "embedding_norm",
          .in_norm = "operator_norm", .ff_norm = "ffn_norm", .norms_last = true,
          .layers = LayerRule::kConvTypes, .ssm = SsmKind::kShortConv, .ssm_name = "conv",
          .o_proj = "out_proj", .attn_bias_key = "", .qk_layernorm = true,
          .ffn = HybridFfn::kLfm2, .rotary = HybridRotary::kHeadDim, .rotary_module = "pos_emb",
          .read = read};
}
constexpr HybridSpec kLfm2 = Lfm2Row(ReadLfm2);
constexpr HybridSpec kLfm2Moe = Lfm2Row(ReadLfm2Moe);

}  // namespace

Result<Model> BuildLfm2(const HfConfig& c, const BuildOptions& o) {
  return BuildHybrid(c, o, kLfm2);
}

Result<Model> BuildLfm2Moe(const HfConfig& c, const BuildOptions& o) {
  return BuildHybrid(c, o, kLfm2Moe);
}

const std::vector<ArchitectureBuilder>& HybridFamilyBuilders() {
  static const std::vector<ArchitectureBuilder> kRows = {
      {"granitemoehybrid", "", BuildRow<BuildHybrid, kGraniteMoeHybrid>, "granite"},
      {"bamba", "", BuildRow<BuildHybrid, kBamba>, "bamba"},
      {"nemotron_h", "", BuildRow<BuildHybrid, kNemotronH>, "nemotron_h"},
      {"lfm2", "", BuildLfm2, "lfm2"},
      {"lfm2_moe", "", BuildLfm2Moe, "lfm2"},
      {"falcon_h1", "", BuildRow<BuildHybrid, kFalconH1>, "falcon_h1"},
      {"mamba", "", BuildRow<BuildHybrid, kMamba>, "mamba"},
      {"falcon_mamba", "", BuildRow<BuildHybrid, kFalconMamba>, "mamba"},
      {"mamba2", "", BuildRow<BuildHybrid, kMamba2>, "mamba"},
      {"jamba", "", BuildRow<BuildHybrid, kJamba>, "jamba"},
      // The gated-DeltaNet hybrids: one builder over qwen_hybrid.h (qwen3_next.cc).
      {"qwen3_next", "", BuildQwenHybrid<QwenHybridModel::kNext>, "qwen3_next"},
      {"qwen3_5", "", BuildQwenHybrid<QwenHybridModel::kComposite35>, "qwen3_5"},
      {"qwen3_5_moe", "", BuildQwenHybrid<QwenHybridModel::kComposite35>, "qwen3_5"},
      {"qwen3_5_text", "", BuildQwenHybrid<QwenHybridModel::kText35>, "qwen3_5"},
      {"qwen3_5_moe_text", "", BuildQwenHybrid<QwenHybridModel::kText35>, "qwen3_5"},
  };
  return kRows;
}

}  // namespace memfit::arch
