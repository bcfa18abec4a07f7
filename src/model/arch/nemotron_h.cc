// NVIDIA Nemotron-H and Nemotron-3 (nemotron_h): a hybrid stack whose blocks are each one norm and
// one mixer, by "hybrid_override_pattern" (M = Mamba-2, * = attention, - = MLP, E = MoE) or
// "layers_block_type" ("mamba"/"linear_attention", "attention"/"full_attention", "mlp", "moe").
// Names as the checkpoints store them (NVIDIA's remote code, which transformers' conversion maps
// from): backbone.embeddings, backbone.layers.N.{norm, mixer.*}, backbone.norm_f, lm_head.
// - Mamba-2: in_proj [d_inner + conv_dim + heads, H] (d_inner = mamba_num_heads x
//   mamba_head_dim, conv_dim = d_inner + 2 x n_groups x ssm_state_size), depthwise conv1d
//   [conv_dim, 1, conv_kernel] (+ bias), dt_bias, A_log, D [heads], gated norm [d_inner], out_proj.
// - attention: q/k/v/o without rotary (Nemotron-H attention has no position embedding).
// - MLP and experts: non-gated up_proj/down_proj (relu2).
// - MoE: router gate.weight [E, H] with a float32 e_score_correction_bias [E] buffer, experts
//   split per expert, a shared expert of moe_shared_expert_intermediate_size, and with
//   "moe_latent_size" (Nemotron-3 Ultra) fc1/fc2_latent_proj around experts of the latent width.
// - MTP ("num_nextn_predict_layers", blocks "mtp_layers_block_type"): mtp.layers.N, the first with
//   enorm/hnorm/eh_proj, the last with final_layernorm; stored, never loaded by transformers
//   (_keys_to_ignore_on_load_unexpected "mtp.*").
// Sources: transformers/models/nemotron_h/{modeling,configuration}_nemotron_h.py,
// vllm/model_executor/models/nemotron_h_mtp.py (MTP layout).

#include <algorithm>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/mamba2_mixer.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

enum class NemotronHBlock : uint8_t { kMamba, kAttention, kMlp, kMoe };

// One block type per layer from a pattern string or a list of names; errors name `key`.
// NemotronHConfig._pattern_to_list, plus the legacy names of "layers_block_type".
std::vector<NemotronHBlock> ReadBlocks(ModelBuilder& b, const HfConfig& c, std::string_view key) {
  using B = NemotronHBlock;
  static const std::pair<std::string_view, NemotronHBlock> kNames[] = {
      {"M", B::kMamba},     {"mamba", B::kMamba},         {"linear_attention", B::kMamba},
      {"*", B::kAttention}, {"attention", B::kAttention}, {"full_attention", B::kAttention},
      {"-", B::kMlp},       {"mlp", B::kMlp},             {"E", B::kMoe},
      {"moe", B::kMoe}};
  std::vector<NemotronHBlock> out;
  const auto it = c.raw().find(std::string(key));
  if (it == c.raw().end()) return out;
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

struct Dims {
  uint64_t heads = 0, kv_heads = 0, head_dim = 0, inter = 0;
  uint64_t m_heads = 0, m_head_dim = 0, groups = 0, state = 0, kernel = 0, d_inner = 0, conv = 0;
  uint64_t per_head = 0;  // recurrent state elements per Mamba head: mamba_head_dim x d_state
  uint64_t experts = 0, moe_inter = 0, shared_inter = 0, latent = 0;
  bool conv_bias = true, proj_bias = false, attn_bias = false, mlp_bias = false;
  uint32_t state_bits = 0;  // "mamba_ssm_cache_dtype": 32 for float32, else the model's (0)
};

void EmitBlock(ModelBuilder& b, const Quantization& q, const std::string& l, NemotronHBlock kind,
               const Dims& d) {
  const uint64_t h = b.model().hp.hidden_size;
  b.RmsNorm(l + ".norm", h);
  const std::string x = l + ".mixer";
  switch (kind) {
    case NemotronHBlock::kMamba:
      // BambaMixer's tensors (NemotronHMamba2Mixer registers the same); the layer's LayerInfo
      // comes from BlockInfo, which adds the cache dtype.
      EmitMamba2(b, q, x, h,
                 Mamba2Dims{.heads = d.m_heads, .head_dim = d.m_head_dim, .groups = d.groups,
                            .d_state = d.state, .kernel = d.kernel, .d_inner = d.d_inner,
                            .conv = d.conv, .conv_bias = d.conv_bias, .proj_bias = d.proj_bias,
                            .gated_norm = true, .out_bias = d.proj_bias});
      break;
    case NemotronHBlock::kAttention:
      QLinear(b, q, x + ".q_proj", h, d.heads * d.head_dim, d.attn_bias);
      QLinear(b, q, x + ".k_proj", h, d.kv_heads * d.head_dim, d.attn_bias);
      QLinear(b, q, x + ".v_proj", h, d.kv_heads * d.head_dim, d.attn_bias);
      QLinear(b, q, x + ".o_proj", d.heads * d.head_dim, h, d.attn_bias);
      break;
    case NemotronHBlock::kMlp:
      QLinear(b, q, x + ".up_proj", h, d.inter, d.mlp_bias);
      QLinear(b, q, x + ".down_proj", d.inter, h, d.mlp_bias);
      break;
    case NemotronHBlock::kMoe: {
      b.Param(x + ".gate.weight", {d.experts, h});
      b.Buffer(x + ".gate.e_score_correction_bias", {d.experts}, Dtype::kF32, true);
      const uint64_t in = d.latent > 0 ? d.latent : h;
      RepeatedModules(b, q, x + ".experts", d.experts, [&](const std::string& ex) {
        QLinear(b, q, ex + ".up_proj", in, d.moe_inter, d.mlp_bias);
        QLinear(b, q, ex + ".down_proj", d.moe_inter, in, d.mlp_bias);
      });
      if (d.shared_inter > 0) {
        QLinear(b, q, x + ".shared_experts.up_proj", h, d.shared_inter, d.mlp_bias);
        QLinear(b, q, x + ".shared_experts.down_proj", d.shared_inter, h, d.mlp_bias);
      }
      if (d.latent > 0) {
        QLinear(b, q, x + ".fc1_latent_proj", h, d.latent, d.mlp_bias);
        QLinear(b, q, x + ".fc2_latent_proj", d.latent, h, d.mlp_bias);
      }
      break;
    }
  }
}

LayerInfo BlockInfo(NemotronHBlock kind, const Dims& d) {
  LayerInfo info;
  if (kind == NemotronHBlock::kAttention) {
    info.num_heads = d.heads;
    info.num_kv_heads = d.kv_heads;
    info.head_dim_k = info.head_dim_v = d.head_dim;
    return info;
  }
  info.attention = AttentionKind::kNone;
  info.mixer = LayerMixer::kNone;
  if (kind == NemotronHBlock::kMamba) {
    info.mixer = LayerMixer::kMamba2;
    info.recurrent = true;
    info.state.conv_channels = d.conv;
    info.state.conv_kernel = d.kernel;
    info.state.heads = d.m_heads;
    info.state.elements_per_head = d.per_head;
    info.state.state_bits = d.state_bits;
  }
  info.moe = kind == NemotronHBlock::kMoe;
  if (kind == NemotronHBlock::kMlp) info.intermediate_size = d.inter;
  return info;
}

bool NemotronHHas(const std::vector<NemotronHBlock>& blocks, NemotronHBlock kind) {
  return std::find(blocks.begin(), blocks.end(), kind) != blocks.end();
}

// The block list: "layers_block_type" (Nemotron-3) unless absent or null, else
// "hybrid_override_pattern". A malformed or empty list is recorded in `b`.
Result<std::vector<NemotronHBlock>> ReadNemotronHLayout(ModelBuilder& b, const HfConfig& c) {
  const char* key = c.Has("layers_block_type") && !c.raw()["layers_block_type"].is_null()
                        ? "layers_block_type"
                        : "hybrid_override_pattern";
  if (!c.Has(key)) {
    return MakeError("{}: field \"hybrid_override_pattern\" (or \"layers_block_type\") is missing",
                     c.where());
  }
  std::vector<NemotronHBlock> blocks = ReadBlocks(b, c, key);
  if (!b.failed() && blocks.empty()) {
    b.Fail(MakeError("{}: field \"{}\" lists no layers", c.where(), key));
  }
  return blocks;
}

// The widths and switches of the block kinds the layout uses: a key a used kind needs is
// required, the others fall back to the config class's defaults. Also reads the MoE and MTP
// counts into model.hp.
Dims ReadNemotronHDims(ModelBuilder& b, const HfConfig& c,
                       const std::vector<NemotronHBlock>& blocks) {
  auto& hp = b.model().hp;
  const auto has = [&](NemotronHBlock k) { return NemotronHHas(blocks, k); };
  Dims d;
  d.heads = Get(b, c.Uint("num_attention_heads"));
  d.kv_heads = Get(b, c.UintOr("num_key_value_heads", d.heads));
  d.attn_bias = Get(b, c.BoolOr("attention_bias", false));
  d.mlp_bias = Get(b, c.BoolOr("mlp_bias", false));
  d.proj_bias = Get(b, c.BoolOr("use_bias", false));
  d.conv_bias = Get(b, c.BoolOr("use_conv_bias", true));
  // Mamba-2 (the class defaults where the config may omit a field).
  d.m_heads = Get(b, has(NemotronHBlock::kMamba) ? c.Uint("mamba_num_heads")
                                                  : c.UintOr("mamba_num_heads", 0));
  d.m_head_dim = Get(b, c.UintOr("mamba_head_dim", 64));
  d.groups = Get(b, c.UintOr("n_groups", 8));
  d.state = Get(b, c.UintOr("ssm_state_size", 128));
  d.kernel = Get(b, c.UintOr("conv_kernel", 4));
  d.state_bits = Get(b, c.StringOr("mamba_ssm_cache_dtype", "")) == "float32" ? 32 : 0;
  d.inter = Get(b, has(NemotronHBlock::kMlp) ? c.Uint("intermediate_size")
                                              : c.UintOr("intermediate_size", 0));
  if (has(NemotronHBlock::kMoe)) {
    d.experts = Get(b, c.Uint("n_routed_experts"));
    d.moe_inter = Get(b, c.Uint("moe_intermediate_size"));
    d.shared_inter = Get(b, c.UintOr("moe_shared_expert_intermediate_size", 0));
    d.latent = Get(b, c.UintOr("moe_latent_size", 0));
    hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
    hp.num_shared_experts = Get(b, c.UintOr("n_shared_experts", 1));
  }
  hp.num_mtp_layers = Get(b, c.UintOr("num_nextn_predict_layers", 0));
  return d;
}

// Checks the widths the blocks divide by or size with, and derives head_dim and the Mamba-2
// inner, conv and per-head state sizes.
Status ResolveNemotronHDims(ModelBuilder& b, const HfConfig& c,
                            const std::vector<NemotronHBlock>& blocks, Dims& d) {
  if (d.heads == 0 && NemotronHHas(blocks, NemotronHBlock::kAttention)) {
    return MakeError("{}: field \"num_attention_heads\" must not be zero", c.where());
  }
  if (d.heads > 0 && (d.kv_heads == 0 || d.heads % d.kv_heads != 0)) {
    return MakeError(
        "{}: \"num_attention_heads\" = {} is not a multiple of "
        "\"num_key_value_heads\" = {}",
        c.where(), d.heads, d.kv_heads);
  }
  // head_dim: "head_dim" (Nemotron-3), "attention_head_dim" (Nemotron-H), else hidden / heads.
  if (c.Has("head_dim") || c.Has("attention_head_dim")) {
    d.head_dim = Get(b, c.UintAny({"head_dim", "attention_head_dim"}));
  } else if (d.heads > 0) {
    d.head_dim = DivideExact(b, c, b.model().hp.hidden_size, "hidden_size", d.heads,
                             "num_attention_heads");
  }
  if (NemotronHHas(blocks, NemotronHBlock::kMamba) &&
      (d.m_head_dim == 0 || d.groups == 0 || d.state == 0 || d.kernel == 0)) {
    return MakeError(
        "{}: \"mamba_head_dim\", \"n_groups\", \"ssm_state_size\" and \"conv_kernel\" "
        "must be positive",
        c.where());
  }
  d.d_inner = MulDims(b, d.m_heads, d.m_head_dim, "mamba_num_heads x mamba_head_dim");
  d.per_head = MulDims(b, d.m_head_dim, d.state, "mamba_head_dim x ssm_state_size");
  const uint64_t bc = MulDims(b, 2 * d.groups, d.state, "2 x n_groups x ssm_state_size");
  if (!b.failed() && (d.d_inner > kMaxModelElements || bc > kMaxModelElements)) {
    return MakeError(
        "{}: Mamba dimensions (\"mamba_num_heads\" x \"mamba_head_dim\", "
        "\"n_groups\" x \"ssm_state_size\") are absurd",
        c.where());
  }
  d.conv = d.d_inner + bc;  // both at most 2^56: no wrap
  return Ok{};
}

// Records the checked widths in model.hp, and with Mamba layers the SSD scan chunk.
Status SetNemotronHHyperparameters(ModelBuilder& b, const HfConfig& c,
                                   const std::vector<NemotronHBlock>& blocks, const Dims& d) {
  Model& m = b.model();
  auto& hp = m.hp;
  hp.num_layers = blocks.size();
  hp.num_attention_heads = d.heads;
  hp.num_kv_heads = d.kv_heads;
  hp.head_dim = d.head_dim;
  hp.intermediate_size = d.inter;
  hp.num_experts = d.experts;
  hp.moe_intermediate_size = d.moe_inter;
  hp.shared_expert_intermediate_size = d.shared_inter;
  hp.ssm_conv_kernel = d.kernel;
  hp.ssm_inner_size = d.d_inner;
  hp.ssm_state_size = d.state;
  hp.ssm_group_count = d.groups;
  if (!NemotronHHas(blocks, NemotronHBlock::kMamba)) return Ok{};
  // NemotronHConfig "chunk_size" (default 128; "mamba_chunk_size" is read as its alias):
  // the SSD chunk of transformers' torch_forward scan.
  hp.ssm_chunk_size = Get(b, c.Has("chunk_size") ? c.UintOr("chunk_size", 128)
                                                 : c.UintOr("mamba_chunk_size", 128));
  if (!b.failed() && hp.ssm_chunk_size == 0) {
    return MakeError("{}: \"chunk_size\" must be positive", c.where());
  }
  if (!c.Has("chunk_size") && !c.Has("mamba_chunk_size")) {
    m.assumptions.push_back(
        "no \"chunk_size\": the config class's default 128 (Mamba-2 scan chunk)");
  }
  return Ok{};
}

// The multi-token-prediction steps (vLLM nemotron_h_mtp.py): each step is the blocks of
// "mtp_layers_block_type" (default attention then MoE), the first with enorm/hnorm/eh_proj, the
// last with final_layernorm; stored only.
void EmitNemotronHMtp(ModelBuilder& b, const HfConfig& c, const Quantization& q, const Dims& d) {
  Model& m = b.model();
  const auto& hp = m.hp;
  if (hp.num_mtp_layers == 0 || b.failed()) return;
  const uint64_t h = hp.hidden_size;
  const char* mtp_key = c.Has("mtp_layers_block_type")         ? "mtp_layers_block_type"
                        : c.Has("mtp_hybrid_override_pattern") ? "mtp_hybrid_override_pattern"
                                                               : nullptr;
  const std::vector<NemotronHBlock> mtp =
      mtp_key ? ReadBlocks(b, c, mtp_key)
              : std::vector<NemotronHBlock>{NemotronHBlock::kAttention, NemotronHBlock::kMoe};
  const size_t begin = m.tensors.size();
  for (uint64_t s = 0; s < hp.num_mtp_layers && !b.failed(); ++s) {
    for (size_t k = 0; k < mtp.size() && !b.failed(); ++k) {
      const std::string l = Layer("mtp.layers", s * mtp.size() + k);
      if (k == 0) {
        b.RmsNorm(l + ".enorm", h);
        b.RmsNorm(l + ".hnorm", h);
        QLinear(b, q, l + ".eh_proj", 2 * h, h, false);
      }
      EmitBlock(b, q, l, mtp[k], d);
      if (k + 1 == mtp.size()) b.RmsNorm(l + ".final_layernorm", h);
    }
  }
  MarkStoredOnly(m, begin);
  m.notes.push_back(
      fmt::format("{} multi-token-prediction step(s) (mtp.layers.*) are stored in "
                  "the checkpoint but not loaded by transformers",
                  hp.num_mtp_layers));
}

}  // namespace

Result<Model> BuildNemotronH(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 0));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", false));
  hp.activation = Get(b, c.StringOr("mlp_hidden_act", "relu2"));
  hp.norm = "rmsnorm";
  hp.gated_mlp = false;
  if (b.failed()) return b.Finish();
  auto layout = ReadNemotronHLayout(b, c);
  if (!layout.has_value()) return layout.error();
  const std::vector<NemotronHBlock>& blocks = layout.value();
  Dims d = ReadNemotronHDims(b, c, blocks);
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  MEMFIT_RETURN_IF_ERROR(ResolveNemotronHDims(b, c, blocks, d));
  if (b.failed()) return b.Finish();
  MEMFIT_RETURN_IF_ERROR(SetNemotronHHyperparameters(b, c, blocks, d));

  const uint64_t h = hp.hidden_size;
  b.Embedding("backbone.embeddings", hp.vocab_size, h);
  for (uint64_t i = 0; i < blocks.size() && !b.failed(); ++i) {
    EmitBlock(b, q, Layer("backbone.layers", i), blocks[i], d);
    hp.layers.push_back(BlockInfo(blocks[i], d));
  }
  b.RmsNorm("backbone.norm_f", h);
  TaskHead(b, c, o, "backbone.embeddings");
  EmitNemotronHMtp(b, c, q, d);
  if (NemotronHHas(blocks, NemotronHBlock::kMoe)) {
    m.assumptions.push_back(
        "MoE router e_score_correction_bias stored in float32 (transformers "
        "keeps it in float32); Mamba A_log/D/dt_bias in the checkpoint dtype");
  }
  NoteQuantization(b, q);
  m.no_split_patterns = {"backbone.layers.*"};
  m.base_model_prefix = "backbone.";
  return b.Finish();
}

}  // namespace memfit::arch
