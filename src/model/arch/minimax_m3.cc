// MiniMax-M3 (minimax_m3: MiniMaxM3ForCausalLM; minimax_m3_vl:
// MiniMaxM3SparseForConditionalGeneration). Not an MlaFamilySpec row (mla_kit.h): grouped-query
// attention with its own indexer, and MoE, MTP and layer lists named and read apart from the rows.
// As the checkpoints name it (vLLM models/minimax_m3 model.py, mtp.py and vision_tower.py; the
// Megatron bridge's key list "verified against the real checkpoint key layout"): embed_tokens;
// per layer input_layernorm, self_attn.{q,k,v,o}_proj with q_norm/k_norm ("qk_norm_type"
// per_head: [head_dim]; per_layer: the whole projection), on the layers of
// "sparse_attention_config".sparse_attention_freq the indexer's index_q_proj [index heads x index
// dim, H], index_k_proj [index dim, H] (one key head) and index_q_norm/index_k_norm [index dim];
// post_attention_layernorm; on the layers "moe_layer_freq" marks 0 a dense mlp of
// "dense_intermediate_size", else block_sparse_moe.gate [E, H] and e_score_correction_bias [E]
// (float32: "Router weights are stored in fp32"), experts.N.{w1,w3,w2} of "intermediate_size"
// and shared_experts of n_shared_experts x "shared_intermediate_size"; norm; lm_head;
// "num_mtp_modules" modules model.mtp.layers.N (enorm, hnorm, eh_proj [H, 2H], a sparse MoE
// layer, final_layernorm) that the causal LM does not load. minimax_m3_vl nests the text model
// under language_model.model / language_model.lm_head and adds vision_tower.vision_model
// (patch_embedding Conv3d [W, 3, temporal, patch, patch] without bias, pre_layrnorm,
// encoder.layers.N.{layer_norm1, self_attn.{q,k,v,out}_proj, layer_norm2, mlp.fc1, mlp.fc2}),
// multi_modal_projector.linear_{1,2} (W -> projector_hidden_size -> H) and
// patch_merge_mlp.linear_{1,2} (H x merge^2 -> projector_hidden_size -> H), all biased.

#include <optional>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/mla_kit.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

struct M3Dims {
  uint64_t h = 0, dense_width = 0, experts = 0, expert_width = 0, shared_width = 0;
  uint64_t index_heads = 0, index_dim = 0;
  GqaShape attn;
  bool routing_bias = true;
};

// Per-layer 0/1 flags from `key` in `c` (one per layer), else `fallback(i)`.
template <typename Fallback>
std::vector<bool> MinimaxM3LayerFlags(ModelBuilder& b, const HfConfig& c, std::string_view key,
                                      uint64_t layers, Fallback fallback) {
  std::vector<bool> out;
  auto it = c.raw().find(std::string(key));
  if (it == c.raw().end() || it->is_null()) {
    for (uint64_t i = 0; i < layers && !b.failed(); ++i) out.push_back(fallback(i));
    return out;
  }
  if (!it->is_array() || it->size() < layers) {
    b.Fail(MakeError("{}: \"{}\" must list one 0/1 per layer ({} layers)", c.where(), key, layers));
    return out;
  }
  for (uint64_t i = 0; i < layers; ++i) {
    const auto& v = (*it)[i];
    if (!v.is_number_integer() && !v.is_boolean()) {
      b.Fail(MakeError("{}: \"{}\"[{}] must be 0 or 1", c.where(), key, i));
      return {};
    }
    out.push_back(v.is_boolean() ? v.get<bool>() : v.get<int64_t>() != 0);
  }
  return out;
}

void M3Moe(ModelBuilder& b, const Quantization& q, const std::string& l, const M3Dims& d) {
  const std::string m = l + ".block_sparse_moe";
  b.ParamAs(m + ".gate.weight", {d.experts, d.h}, Dtype::kF32);
  if (d.routing_bias) b.ParamAs(m + ".e_score_correction_bias", {d.experts}, Dtype::kF32);
  RepeatedModules(b, q, m + ".experts", d.experts, [&](const std::string& x) {
    QLinear(b, q, x + ".w1", d.h, d.expert_width, false);
    QLinear(b, q, x + ".w3", d.h, d.expert_width, false);
    QLinear(b, q, x + ".w2", d.expert_width, d.h, false);
  });
  if (d.shared_width == 0) return;
  QGatedMlp(b, q, m + ".shared_experts", d.h, d.shared_width);
}

// One decoder layer under `l`; returns its LayerInfo.
LayerInfo M3Layer(ModelBuilder& b, const Quantization& q, const std::string& l, const M3Dims& d,
                  bool sparse, bool moe) {
  b.RmsNorm(l + ".input_layernorm", d.h);
  const std::string a = l + ".self_attn";
  EmitGqa(b, q, a, d.attn);
  if (sparse) {
    QLinear(b, q, a + ".index_q_proj", d.h,
            MulDims(b, d.index_heads, d.index_dim, "sparse_num_index_heads x sparse_index_dim"),
            false);
    QLinear(b, q, a + ".index_k_proj", d.h, d.index_dim, false);
    b.RmsNorm(a + ".index_q_norm", d.index_dim);
    b.RmsNorm(a + ".index_k_norm", d.index_dim);
  }
  b.RmsNorm(l + ".post_attention_layernorm", d.h);
  if (moe) {
    M3Moe(b, q, l, d);
  } else {
    QGatedMlp(b, q, l + ".mlp", d.h, d.dense_width);
  }
  LayerInfo info = AttentionInfo(b.model().hp, false, 0);
  info.moe = moe;
  info.intermediate_size = moe ? 0 : d.dense_width;
  // The sparse layers keep the full K/V cache (top-k blocks are chosen from it) plus one index
  // key of "sparse_index_dim" per token.
  if (sparse) info.indexer_head_dim = d.index_dim;
  return info;
}

// The text model `c` under `prefix` ("model" or "language_model.model"), its lm_head named
// `head`. Returns false when the builder failed.
bool EmitM3Text(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                const std::string& prefix, const std::string& head) {
  Model& m = b.model();
  auto& hp = m.hp;
  ReadDecoderBasics(b, c, {.need_intermediate = true, .rms_gated = true});
  M3Dims d{
      .h = hp.hidden_size,
      .expert_width = hp.intermediate_size,
      .attn = {
          .heads = hp.num_attention_heads, .kv_heads = hp.num_kv_heads, .head_dim = hp.head_dim}};
  d.dense_width = Get(b, c.UintOr("dense_intermediate_size", hp.intermediate_size));
  d.experts = Get(b, c.Uint("num_local_experts"));
  hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
  const uint64_t shared = Get(b, c.UintOr("n_shared_experts", 0));
  const uint64_t shared_width = Get(b, c.UintOr("shared_intermediate_size", hp.intermediate_size));
  d.attn.qk_norm = Get(b, c.BoolOr("use_qk_norm", true));
  d.attn.per_head = Get(b, c.StringOr("qk_norm_type", "per_head")) == "per_head";
  d.routing_bias = Get(b, c.BoolOr("use_routing_bias", true));
  const bool output_gate = Get(b, c.BoolOr("attention_output_gate", false));
  const uint64_t mtp = Get(b, c.UintOr("num_mtp_modules", 0));
  const uint64_t first_dense = Get(b, c.UintOr("first_k_dense_replace", 0));
  bool use_sparse = false;
  std::optional<HfConfig> sparse_cfg = c.OptionalSub("sparse_attention_config");
  if (sparse_cfg) {
    use_sparse = Get(b, sparse_cfg->BoolOr("use_sparse_attention", true));
    d.index_heads = Get(b, sparse_cfg->UintOr("sparse_num_index_heads", 0));
    d.index_dim = Get(b, sparse_cfg->UintOr("sparse_index_dim", 0));
  }
  if (b.failed()) return false;
  const auto fail = [&](const Error& e) {
    b.Fail(e);
    return false;
  };
  if (output_gate) {
    return fail(
        MakeError("{}: \"attention_output_gate\" is set: its gate's layout is in no "
                  "released MiniMax-M3 checkpoint; the safetensors headers give an exact "
                  "answer",
                  c.where()));
  }
  if (!CheckNonZero(b, c,
                    {{d.experts, "num_local_experts"},
                     {hp.experts_per_token, "num_experts_per_tok"},
                     {d.expert_width, "intermediate_size"}}) ||
      (use_sparse && !CheckNonZero(b, *sparse_cfg,
                                   {{d.index_heads, "sparse_num_index_heads"},
                                    {d.index_dim, "sparse_index_dim"}}))) {
    return false;
  }
  if (mtp > 64) {
    return fail(MakeError("{}: \"num_mtp_modules\" = {} is more than 64", c.where(), mtp));
  }
  d.shared_width = MulDims(b, shared, shared_width, "n_shared_experts x shared_intermediate_size");
  hp.num_experts = d.experts;
  hp.moe_intermediate_size = d.expert_width;
  hp.num_shared_experts = shared;
  hp.shared_expert_intermediate_size = d.shared_width;
  hp.num_mtp_layers = mtp;
  const std::vector<bool> moe = MinimaxM3LayerFlags(b, c, "moe_layer_freq", hp.num_layers,
                                                    [&](uint64_t i) { return i >= first_dense; });
  std::vector<bool> sparse(hp.num_layers, false);
  if (use_sparse) {
    sparse = MinimaxM3LayerFlags(b, *sparse_cfg, "sparse_attention_freq", hp.num_layers,
                                 [](uint64_t) { return true; });
    // M3 disables the index value/output projections on every sparse layer; a layer that keeps
    // them has shapes no reference gives.
    const std::vector<bool> no_value = MinimaxM3LayerFlags(
        b, *sparse_cfg, "sparse_disable_index_value", hp.num_layers, [](uint64_t) { return true; });
    for (uint64_t i = 0; i < sparse.size() && i < no_value.size() && !b.failed(); ++i) {
      if (sparse[i] && !no_value[i]) {
        b.Fail(
            MakeError("{}: sparse_attention_config: layer {} keeps the index value projection "
                      "(\"sparse_disable_index_value\" 0), whose layout no released MiniMax-M3 "
                      "has; the safetensors headers give an exact answer",
                      c.where(), i));
      }
    }
  }
  if (b.failed()) return false;

  b.Embedding(prefix + ".embed_tokens", hp.vocab_size, d.h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    hp.layers.push_back(M3Layer(b, q, Layer(prefix + ".layers", i), d, sparse[i], moe[i]));
  }
  b.RmsNorm(prefix + ".norm", d.h);
  b.SetHead(true);
  if (hp.tie_word_embeddings) {
    b.Tied(head + ".weight", {hp.vocab_size, d.h}, prefix + ".embed_tokens.weight");
  } else {
    QLinear(b, q, head, d.h, hp.vocab_size, false);
  }
  b.SetHead(false);
  // MTP modules: a sparse-attention MoE layer each (mtp.py: force_sparse_attn, force_moe).
  const size_t begin = m.tensors.size();
  for (uint64_t k = 0; k < mtp && !b.failed(); ++k) {
    const std::string l = Layer(prefix + ".mtp.layers", k);
    b.RmsNorm(l + ".enorm", d.h);
    b.RmsNorm(l + ".hnorm", d.h);
    b.Linear(l + ".eh_proj", MulDims(b, d.h, 2, "2 x hidden_size"), d.h, false);
    M3Layer(b, q, l, d, use_sparse, true);
    b.RmsNorm(l + ".final_layernorm", d.h);
  }
  if (b.failed()) return false;
  MarkMtpStoredOnly(b, begin, mtp, fmt::format("module(s) ({}.mtp.*", prefix),
                    "counted as stored in the checkpoint but not loaded by the causal LM");
  if (mtp == 0) return true;
  m.assumptions.push_back(fmt::format(
      "\"num_mtp_modules\" = {}: the MTP modules are bundled in the checkpoint (vLLM's M3 "
      "mtp.py reads them from the main checkpoint as {}.mtp.layers.N; a standalone MTP "
      "checkpoint would hold them instead)",
      mtp, prefix));
  return true;
}

void M3VisionTower(ModelBuilder& b, const HfConfig& top, const HfConfig& v, uint64_t text_h) {
  const uint64_t w = Get(b, v.Uint("hidden_size"));
  const uint64_t layers = Get(b, v.Uint("num_hidden_layers"));
  const uint64_t inter = Get(b, v.Uint("intermediate_size"));
  const uint64_t patch = Get(b, v.Uint("patch_size"));
  const uint64_t channels = Get(b, v.UintOr("num_channels", 3));
  uint64_t temporal = 2, merge = 2;
  if (auto comp = v.OptionalSub("img_token_compression_config")) {
    temporal = Get(b, comp->UintOr("temporal_patch_size", 2));
    merge = Get(b, comp->UintOr("spatial_merge_size", 2));
  }
  const uint64_t proj = Get(b, top.UintOr("projector_hidden_size", text_h));
  const bool proj_bias = Get(b, top.BoolOr("multimodal_projector_bias", true));
  const bool merge_bias = Get(b, top.BoolOr("patch_merge_bias", true));
  if (b.failed()) return;
  b.SetComponent("vision_tower");
  const std::string t = "vision_tower.vision_model";
  b.Conv(t + ".embeddings.patch_embedding", channels, w, {temporal, patch, patch}, false);
  b.LayerNorm(t + ".pre_layrnorm", w);
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    const std::string l = Layer(t + ".encoder.layers", i);
    b.LayerNorm(l + ".layer_norm1", w);
    for (const char* p : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
      b.Linear(l + ".self_attn." + p, w, w, true);
    }
    b.LayerNorm(l + ".layer_norm2", w);
    b.Linear(l + ".mlp.fc1", w, inter, true);
    b.Linear(l + ".mlp.fc2", inter, w, true);
  }
  b.SetComponent("multi_modal_projector");
  b.Linear("multi_modal_projector.linear_1", w, proj, proj_bias);
  b.Linear("multi_modal_projector.linear_2", proj, text_h, proj_bias);
  b.Linear("patch_merge_mlp.linear_1",
           MulDims(b, text_h, MulDims(b, merge, merge, "spatial_merge_size^2"), "merged width"),
           proj, merge_bias);
  b.Linear("patch_merge_mlp.linear_2", proj, text_h, merge_bias);
  b.SetComponent("language_model");
}

void M3Notes(Model& m) {
  m.assumptions.push_back(
      "block_sparse_moe.gate and e_score_correction_bias stored in float32 (vLLM's M3 model: "
      "\"Router weights are stored in fp32\")");
}

}  // namespace

Result<Model> BuildMiniMaxM3(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  const Quantization q = ReadQuantization(b, c, o);
  if (b.failed() || !EmitM3Text(b, c, q, "model", "lm_head")) return b.Finish();
  M3Notes(m);
  return FinishDecoderAfterHead(b, q);
}

Result<Model> BuildMiniMaxM3Vl(const HfConfig& c, const BuildOptions& o) {
  MEMFIT_ASSIGN_OR_RETURN(const HfConfig text, c.Sub("text_config"));
  MEMFIT_ASSIGN_OR_RETURN(const HfConfig vision, c.Sub("vision_config"));
  ModelBuilder b(c);
  Model& m = b.model();
  const Quantization q = ReadQuantization(b, c, o);
  b.SetComponent("language_model");
  if (b.failed() || !EmitM3Text(b, text, q, "language_model.model", "language_model.lm_head")) {
    return b.Finish();
  }
  m.hp.text_config_key = "text_config";
  M3VisionTower(b, c, vision, m.hp.hidden_size);
  NoteQuantization(b, q);
  M3Notes(m);
  m.no_split_patterns = {"language_model.model.layers.*",
                         "vision_tower.vision_model.encoder.layers.*"};
  m.base_model_prefix = "language_model.model.";
  return b.Finish();
}

}  // namespace memfit::arch
