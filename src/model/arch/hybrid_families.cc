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

// --- Pure state-space models (MambaForCausalLM, FalconMambaForCausalLM, Mamba2ForCausalLM):
// backbone.embeddings; backbone.layers.N.{norm, mixer.*}; backbone.norm_f; lm_head. Configs
// state-spaces/mamba-130m-hf, tiiuae/falcon-mamba-7b, mistralai/Mamba-Codestral-7B-v0.1.
constexpr HybridSpec kSsmBackbone{.decoder_basics = false,
                                  .prefix = "backbone",
                                  .embed = "embeddings",
                                  .final_norm = "norm_f",
                                  .in_norm = "norm",
                                  .ssm_name = "mixer",
                                  .ffn = HybridFfn::kNone,
                                  .mlp_bias_key = ""};

// mamba (transformers models/mamba/{configuration,modeling}_mamba.py): Mamba-1 of d_inner =
// "intermediate_size" (wins over int(expand x H), as PretrainedConfig sets it after
// MambaConfig.__init__), "time_step_rank" "auto" = ceil(H / 16), "use_bias" true; tied.
// falcon_mamba (models/falcon_mamba/modular_falcon_mamba.py): the same keys, "use_bias" false,
// and the kernels' all-ones b_c_rms / dt_rms buffers (an assumption line says so).
constexpr HybridSpec MambaRow(bool proj_bias, Mamba1Norms norms) {
  HybridSpec s = kSsmBackbone;
  s.tie_default = true;
  s.ssm = SsmKind::kMamba1;
  s.m1 = {.inner = "intermediate_size",
          .expand = "expand",
          .state = "state_size",
          .kernel = "conv_kernel",
          .rank = "time_step_rank",
          .conv_bias = "use_conv_bias",
          .proj_bias = "use_bias",
          .proj_bias_default = proj_bias,
          .norms = norms};
  return s;
}
constexpr HybridSpec kMamba = MambaRow(true, Mamba1Norms::kNone);
constexpr HybridSpec kFalconMamba = MambaRow(false, Mamba1Norms::kFalconBuffers);

// mamba2 (models/mamba2/{configuration,modeling}_mamba2.py): Mamba-2 of d_inner = int("expand" x
// H) (Mamba2Mixer ignores "intermediate_size"), which "num_heads" x "head_dim" (64) must equal,
// "n_groups" 8, "state_size" 128, "chunk_size" 256; untied.
constexpr HybridSpec Mamba2Row() {
  HybridSpec s = kSsmBackbone;
  s.m2 = {.heads = "num_heads",
          .head_dim = "head_dim",
          .head_dim_default = 64,
          .groups = "n_groups",
          .groups_default = 8,
          .state = "state_size",
          .state_default = 128,
          .kernel = "conv_kernel",
          .expand = "expand",
          .conv_bias = "use_conv_bias",
          .proj_bias = "use_bias",
          .chunk = "chunk_size"};
  return s;
}
constexpr HybridSpec kMamba2 = Mamba2Row();

// --- Mamba-2 / attention hybrids under model.*: BambaMixer's keys (hybrid_spec.h) or GQA
// self_attn.q/k/v/o_proj, then a feed-forward; untied by default.
// bamba (IBM Bamba-9B; transformers 4.48 models/bamba/{configuration,modeling}_bamba.py):
// "attn_layer_indices" (absent or null: every layer Mamba); BambaMLP feed_forward ("mlp_bias");
// inv_freq of int(head_dim x partial_rotary_factor (0.5)).
constexpr HybridSpec kBamba{.layers = LayerRule::kAttnIndices, .rotary = HybridRotary::kPartial};

// granitemoehybrid (IBM Granite 4.0-H; transformers models/granitemoehybrid/
// modular_granitemoehybrid.py, granitemoeshared/modeling_granitemoeshared.py): "layer_types"
// (alias "layers_block_type"); post_attention_layernorm, then block_sparse_moe when
// num_local_experts > 0 and shared_mlp of shared_intermediate_size always (the dense "micro"
// models are this MLP alone); model.norm; rotary only when position_embedding_type is "rope".
// The hook: GraniteMoeHybridConfig's defaults (8 experts, 2 per token, I 11008, S 1024), whose
// widths set hp differently with and without experts.
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
constexpr HybridSpec kGraniteMoeHybrid{.need_intermediate = false,
                                       .final_norm = "norm",
                                       .ff_norm = "post_attention_layernorm",
                                       .layers = LayerRule::kMambaTypes,
                                       .ffn = HybridFfn::kGranite,
                                       .mlp_bias_key = "",
                                       .rotary = HybridRotary::kWhenRopeNamed,
                                       .read = ReadGraniteFfn};

// falcon_h1 (Falcon-H1, Falcon-H1-Tiny; transformers models/falcon_h1/modular_falcon_h1.py (commit
// 3c0a5c70), configuration_falcon_h1.py (commit 020a37d2)): every layer runs llama GQA attention
// and the Mamba-2 mixer (FalconH1Mixer) side by side, then a LlamaMLP. d_inner = "mamba_d_ssm"
// (null: mamba_expand x H; absent: 1024); mamba.norm only with "mamba_rms_norm"; out_proj's bias
// "projectors_bias"; the non-persistent muP buffer mamba.mup_vector. The muP multipliers create no
// tensor; "mamba_use_mlp" is not read by transformers. The hook: FalconH1Config's defaults as
// assumptions, and mamba_d_ssm's null / absent distinction.
constexpr std::string_view kFalconH1Class = "FalconH1Config";
void ReadFalconH1(ModelBuilder& b, const HfConfig& c, const HybridSpec&, HybridPlan& p) {
  Model& m = b.model();
  NoteTieDefault(b, c, m.hp.tie_word_embeddings, kFalconH1Class);
  constexpr std::pair<std::string_view, std::string_view> kMambaDefaults[] = {
      {"mamba_n_heads", "128"},     {"mamba_n_groups", "1"},     {"mamba_d_state", "256"},
      {"mamba_d_conv", "4"},        {"mamba_expand", "2"},       {"mamba_conv_bias", "true"},
      {"mamba_proj_bias", "false"}, {"projectors_bias", "false"}};
  for (const auto& [key, value] : kMambaDefaults) {
    if (Absent(c, key)) {
      m.assumptions.push_back(fmt::format("\"{}\" absent from config.json: {}'s default {}", key,
                                          kFalconH1Class, value));
    }
  }
  // mamba_d_ssm: null means mamba_expand x H; absent means the class default 1024.
  if (!c.raw().contains("mamba_d_ssm")) {
    p.m2.d_ssm = 1024;
    m.assumptions.push_back(
        fmt::format("\"mamba_d_ssm\" absent from config.json: {}'s default 1024", kFalconH1Class));
  } else {
    p.m2.d_ssm = Get(b, c.UintOr("mamba_d_ssm", 0));
  }
  p.m2.gated_norm = BoolDefault(b, c, "mamba_rms_norm", false, kFalconH1Class);
  m.hp.ssm_chunk_size = UintDefault(b, c, "mamba_chunk_size", 256, kFalconH1Class);
  if (!Get(b, c.BoolOr("mamba_use_mlp", true))) {
    m.assumptions.push_back(
        "\"mamba_use_mlp\" is false, but FalconH1ForCausalLM builds the "
        "feed-forward in every layer regardless: counted");
  }
}
constexpr HybridSpec kFalconH1{.layers = LayerRule::kBoth,
                               .m2 = {.out_bias = "projectors_bias"},
                               .mup_vector = true,
                               .rotary = HybridRotary::kHeadDim,
                               .read = ReadFalconH1};

// --- jamba (AI21 Jamba-v0.1, Jamba-1.5/1.6/1.7; transformers models/jamba/{configuration,
// modular}_jamba.py; configs ai21labs/Jamba-v0.1, ai21labs/AI21-Jamba-Mini-1.5): layer i is
// attention (no bias, no rotary) when i % "attn_layer_period" (8) == "attn_layer_offset" (4),
// else the Mamba-1 mixer with dt/B/C RMSNorms; its feed_forward a MoE of "num_experts" (16) gated
// MLPs of "intermediate_size" when num_experts > 1 and i % "expert_layer_period" (2) ==
// "expert_layer_offset" (1), else that MLP; both norms after the feed-forward.
// The hook: the two period/offset pairs.
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
  p.expert_width = hp.intermediate_size;
  for (uint64_t i = 0; i < hp.num_layers; ++i) {
    p.blocks.push_back(attn.Hit(i) ? HybridBlock::kAttention : HybridBlock::kSsm);
    p.moe.push_back(p.experts > 1 && expert.Hit(i));
  }
}
constexpr HybridSpec kJamba{.norms_last = true,
                            .layers = LayerRule::kHook,
                            .ssm = SsmKind::kMamba1,
                            .attn_bias_key = "",
                            .mlp_bias_key = "",
                            .router_quantized = true,
                            .read = ReadJambaLayers};

// --- nemotron_h (NVIDIA Nemotron-H and Nemotron-3; transformers models/nemotron_h/
// {modeling,configuration}_nemotron_h.py, vLLM nemotron_h_mtp.py for the MTP layout): blocks of
// one norm and one mixer by "hybrid_override_pattern" (M = Mamba-2, * = attention, - = MLP, E =
// MoE) or "layers_block_type", named as the checkpoints store them (NVIDIA's remote code):
// - Mamba-2 of d_inner = mamba_num_heads x mamba_head_dim; NemotronHConfig's defaults;
//   "mamba_ssm_cache_dtype" float32 keeps the state in float32.
// - attention without rotary; head_dim "head_dim" (Nemotron-3), "attention_head_dim", else H /
//   heads. MLP and experts: non-gated up_proj/down_proj (relu2, "mlp_hidden_act").
// - MoE: router gate [E, H] with a float32 e_score_correction_bias, experts.N, a shared expert,
//   and with "moe_latent_size" (Nemotron-3 Ultra) fc1/fc2_latent_proj around latent-width experts.
// - MTP ("num_nextn_predict_layers"): mtp.layers.N of "mtp_layers_block_type", the first with
//   enorm/hnorm/eh_proj, the last with final_layernorm; never loaded by transformers.
// The hooks: the layer count is the pattern's length, a key a used block needs is required (the
// others take the class defaults), and the MTP steps follow the head.

// One block per layer from a pattern string or a list of names; errors name `key`.
// NemotronHConfig._pattern_to_list, plus the legacy names of "layers_block_type".
std::vector<HybridBlock> ReadNemotronBlocks(ModelBuilder& b, const HfConfig& c,
                                            std::string_view key) {
  using B = HybridBlock;
  static const std::pair<std::string_view, HybridBlock> kNames[] = {
      {"M", B::kSsm},
      {"mamba", B::kSsm},
      {"linear_attention", B::kSsm},
      {"*", B::kAttention},
      {"attention", B::kAttention},
      {"full_attention", B::kAttention},
      {"-", B::kMlp},
      {"mlp", B::kMlp},
      {"E", B::kMoe},
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
    b.Fail(
        MakeError("{}: \"num_attention_heads\" = {} is not a multiple of "
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
  p.expert_bias = true;
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
// Mamba2Row's backbone names and keys but for the heads, the state and the chunk.
constexpr HybridSpec NemotronHRow() {
  HybridSpec s = Mamba2Row();
  s.act_key = "mlp_hidden_act";
  s.act_default = "relu2";
  s.layers_key = "";
  s.layers = LayerRule::kHook;
  s.m2.heads_times_dim = true;
  s.m2.heads = "mamba_num_heads";
  s.m2.heads_default = 0;
  s.m2.head_dim = "mamba_head_dim";
  s.m2.state = "ssm_state_size";
  s.m2.chunk_alias = "mamba_chunk_size";
  s.m2.chunk_default = 128;
  s.m2.cache_dtype = "mamba_ssm_cache_dtype";
  s.attn_name = "mixer";
  s.mlp = {.gate = ""};
  s.mlp_bias_key = "mlp_bias";
  s.router = "gate";
  s.router_bias = "gate.e_score_correction_bias";
  s.read = ReadNemotronH;
  s.after_head = AfterNemotronHHead;
  return s;
}
constexpr HybridSpec kNemotronH = NemotronHRow();

// --- lfm2 (Liquid LFM2; transformers models/lfm2/{modular,configuration}_lfm2.py): short-conv
// layers (Lfm2ShortConv of hidden_size: "conv_dim" must equal it; "conv_L_cache" 3, "conv_bias")
// and attention layers ("full_attn_idxs", or "layer_types") with out_proj and q/k_layernorm, each
// with a SwiGLU feed_forward (w1, w3, w2), then operator_norm and ffn_norm; model.embedding_norm,
// model.pos_emb.inv_freq; tied by default ("tie_embedding" wins). Lfm2MLP's width: "block_ff_dim"
// (or "intermediate_size"); with block_auto_adjust_ff_dim int(2 ff / 3), times
// block_ffn_dim_multiplier, rounded up to a multiple of block_multiple_of.
// lfm2_moe (LiquidAI/LFM2-8B-A1B; models/lfm2_moe/{modeling,configuration}_lfm2_moe.py): the same
// layers ("layer_types" required), the first "num_dense_layers" (2) with a SwiGLU of
// "intermediate_size" as is, the rest feed_forward.gate [num_experts (32), H], the float32
// expert_bias ("use_expert_bias") and experts.N.{w1, w3, w2} of moe_intermediate_size (1792), per
// expert as the Hub checkpoint stores them (llama.cpp convert_hf_to_gguf.py LFM2MoeModel).
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
  if (!CheckNonZero(b, c, {{multiple, "block_multiple_of"}})) return 0;
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
    b.Fail(
        MakeError("{}: \"conv_dim\" = {} differs from \"hidden_size\" = {} (transformers' "
                  "Lfm2ShortConv uses hidden_size)",
                  c.where(), conv_dim, hp.hidden_size));
  } else if (moe && !c.Has("layer_types")) {
    b.Fail(
        MakeError("{}: field \"layer_types\" is missing (Lfm2MoeConfig requires it)", c.where()));
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
  return {.tie_default = true,
          .need_intermediate = false,
          .final_norm = "embedding_norm",
          .in_norm = "operator_norm",
          .ff_norm = "ffn_norm",
          .norms_last = true,
          .layers = LayerRule::kConvTypes,
          .ssm = SsmKind::kShortConv,
          .ssm_name = "conv",
          .o_proj = "out_proj",
          .attn_bias_key = "",
          .qk_layernorm = true,
          .mlp = {.gate = "w1", .up = "w3", .down = "w2"},
          .mlp_bias_key = "",
          .router = "gate",
          .router_bias = "expert_bias",
          .rotary = HybridRotary::kHeadDim,
          .rotary_module = "pos_emb",
          .read = read};
}
constexpr HybridSpec kLfm2 = Lfm2Row(ReadLfm2);
constexpr HybridSpec kLfm2Moe = Lfm2Row(ReadLfm2Moe);

// --- The gated-DeltaNet hybrids: QwenHybridSpec rows (qwen_hybrid.h). Qwen4-Exp's checkpoints
// store the decoder layers' routed experts per expert (transformers' conversion mapping fuses
// them on load) and the MTP layer's fused.
constexpr QwenHybridSpec kQwen3Next{.task_head = true,
                                    .split_in_proj = false,
                                    .layout = ExpertLayout::kPerExpert,
                                    .float32_gdn_params = false,
                                    .default_mtp_layers = 1};
constexpr QwenHybridSpec kQwen35{.composite = true};
constexpr QwenHybridSpec kQwen35Text{};
constexpr QwenHybridSpec kQwen4ExpText{.layout = ExpertLayout::kPerExpert,
                                       .float32_gdn_params = false,
                                       .moe_defaults = {512, 10, 512, 512},  // Qwen4ExpTextConfig's
                                       .text = EmitQwen4ExpText,
                                       .mtp = EmitQwen4ExpMtp};
constexpr QwenHybridSpec Composite(QwenHybridSpec s) {
  s.composite = true;
  return s;
}
constexpr QwenHybridSpec kQwen4Exp = Composite(kQwen4ExpText);

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
      {"qwen3_next", "", BuildRow<BuildQwenHybrid, kQwen3Next>, "qwen3_next"},
      {"qwen3_5", "", BuildRow<BuildQwenHybrid, kQwen35>, "qwen3_5"},
      {"qwen3_5_moe", "", BuildRow<BuildQwenHybrid, kQwen35>, "qwen3_5"},
      {"qwen3_5_text", "", BuildRow<BuildQwenHybrid, kQwen35Text>, "qwen3_5"},
      {"qwen3_5_moe_text", "", BuildRow<BuildQwenHybrid, kQwen35Text>, "qwen3_5"},
      {"qwen4_exp", "", BuildRow<BuildQwenHybrid, kQwen4Exp>, "qwen4_exp"},
      {"qwen4_exp_text", "", BuildRow<BuildQwenHybrid, kQwen4ExpText>, "qwen4_exp"},
  };
  return kRows;
}

}  // namespace memfit::arch
