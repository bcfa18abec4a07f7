// DeepSeek-V2 and -V3: multi-head latent attention (q_a_proj/q_a_layernorm/q_b_proj when
// q_lora_rank is set, else q_proj; kv_a_proj_with_mqa [kv_lora_rank + qk_rope_head_dim, H],
// kv_a_layernorm, kv_b_proj [heads * (qk_nope_head_dim + v_head_dim), kv_lora_rank]), dense MLPs
// in the first first_k_dense_replace layers and where layer % moe_layer_freq != 0, else routed
// experts (mlp.gate.weight [E, H], V3's e_score_correction_bias [E] in float32) plus
// shared_experts of width moe_intermediate_size * n_shared_experts. The checkpoints also store
// num_nextn_predict_layers multi-token-prediction layers after the last decoder layer (layer 61 of
// DeepSeek-V3: enorm, hnorm, eh_proj, its own embed_tokens and shared_head), which transformers
// does not load. Sources: deepseek-ai modeling_deepseek.py (V2, V3 repos),
// transformers/models/deepseek_v3/modeling_deepseek_v3.py; the stored dtypes (MTP eh_proj and
// shared_head in bfloat16) are confirmed by DeepSeek-R1's shard sizes (deepseek_test.cc).
// DeepSeek sparse attention (deepseek_v32, GLM-5 glm_moe_dsa): each attention also holds a
// lightning indexer, self_attn.indexer.{wq_b [index_n_heads x index_head_dim, q_lora_rank],
// wk [index_head_dim, H], k_norm (LayerNorm with bias), weights_proj [index_n_heads, H] (not
// quantized)}, whose key cache of index_head_dim per token sits beside the MLA cache. GLM-5 runs it
// on the layers "indexer_types" marks "full" (all by default) and its MTP layer stores no
// embed_tokens/shared_head.head (its FP8 release's modules_to_not_convert lists neither). Sources:
// transformers/models/{deepseek_v32/modeling_deepseek_v32.py, glm_moe_dsa/modular_glm_moe_dsa.py}.
// GLM-4.5/4.6/4.5-Air (glm4_moe): the same MoE layers, router and MTP layers around grouped-query
// attention instead of MLA: q/k/v_proj (biased with "attention_bias"), o_proj without bias,
// per-head q_norm/k_norm [head_dim] with "use_qk_norm", partial rotary (inv_freq
// [int(head_dim x partial_rotary_factor) / 2], factor 0.5 by default); MoE from layer
// first_k_dense_replace on, the router's e_score_correction_bias always present. Its MTP layer
// stores its own embed_tokens and shared_head.head as DeepSeek-V3's does (vLLM glm4_moe_mtp.py
// loads them; the Hub's safetensors totals, 110B for GLM-4.5-Air and 358B for GLM-4.5, count
// them). Source: transformers/models/glm4_moe/modular_glm4_moe.py.
// GLM-4.7-Flash (glm4_moe_lite): DeepSeek-V3's layout with MLA again (q_lora_rank 768, kv_lora_rank
// 512), "mlp_layer_types" defaulting to one dense layer then sparse ones, the router's float32
// e_score_correction_bias always registered, one model-level inv_freq of qk_rope_head_dim x
// partial_rotary_factor (no remote-code per-layer caches: the class is transformers 5's), and an
// MTP layer (model.layers.47) with its own embed_tokens and shared_head.head, which the class
// ignores on load. Sources: transformers/models/glm4_moe_lite/modeling_glm4_moe_lite.py, vLLM
// model_executor/models/glm4_moe_lite_mtp.py; the tensor list of zai-org/GLM-4.7-Flash
// (mla_families_test.cc).
// MLA itself and the hyperparameters every MLA decoder reads are in mla_kit.h.
// Mistral 4 (mistral4, Mistral-Small-4-119B-2603; issue 30): DeepSeek-V3's MLA and MoE layers
// with a router of weight only (Mistral4TopkRouter: no e_score_correction_bias) and the routed
// experts fused as the Hub checkpoint stores them, mlp.experts.gate_up_proj [E, 2 x
// moe_intermediate_size, H] and down_proj [E, H, moe_intermediate_size]
// (convert_mistral4_weight_to_hf.py fuses the original per-expert w1/w3/w2; expert_kit.h for a
// quantized release). Sources: transformers/models/mistral4/{modular,configuration}_mistral4.py.

#include <algorithm>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/expert_kit.h"
#include "model/arch/families.h"
#include "model/arch/mla_families.h"
#include "model/arch/mla_kit.h"
#include "model/arch/issue30_families.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

// The attention of one layer: MLA (mla_kit.h), or glm4_moe's grouped-query attention.
struct Mla {
  MlaDims d;
  bool bias = false;
  bool gqa = false;      // glm4_moe: grouped-query attention of head_dim d.v instead of MLA
  bool qk_norm = false;  // glm4_moe "use_qk_norm"
  uint64_t index_heads = 0, index_dim = 0;  // DSA lightning indexer; 0: none
};

enum class Variant : uint8_t { kV2, kV3, kV32, kGlmDsa, kGlm4Moe, kGlm4MoeLite, kMistral4 };

void Indexer(ModelBuilder& b, const Quantization& q, const std::string& l, const Mla& a) {
  const uint64_t h = b.model().hp.hidden_size;
  const std::string x = l + ".self_attn.indexer";
  QLinear(b, q, x + ".wq_b", a.d.q_lora, MulDims(b, a.index_heads, a.index_dim, "index_n_heads x "
                                                "index_head_dim"), false);
  QLinear(b, q, x + ".wk", h, a.index_dim, false);
  b.LayerNorm(x + ".k_norm", a.index_dim);
  b.Linear(x + ".weights_proj", h, a.index_heads, false);
}

void DecoderLayer(ModelBuilder& b, const Quantization& q, const std::string& l, const Mla& a,
                  bool moe, bool v3_bias, uint64_t shared, bool indexer, bool fused) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size, nh = hp.num_attention_heads;
  b.RmsNorm(l + ".input_layernorm", h);
  if (a.gqa) {
    const uint64_t q_width = MulDims(b, nh, a.d.v, "num_attention_heads x head_dim");
    const uint64_t kv_width = MulDims(b, hp.num_kv_heads, a.d.v, "num_key_value_heads x head_dim");
    QLinear(b, q, l + ".self_attn.q_proj", h, q_width, a.bias);
    QLinear(b, q, l + ".self_attn.k_proj", h, kv_width, a.bias);
    QLinear(b, q, l + ".self_attn.v_proj", h, kv_width, a.bias);
    QLinear(b, q, l + ".self_attn.o_proj", q_width, h, false);
    if (a.qk_norm) {
      b.RmsNorm(l + ".self_attn.q_norm", a.d.v);
      b.RmsNorm(l + ".self_attn.k_norm", a.d.v);
    }
  } else {
    EmitMla(b, q, l + ".self_attn", a.d, a.bias);
  }
  if (indexer) Indexer(b, q, l, a);
  if (moe) {
    b.Param(l + ".mlp.gate.weight", {hp.num_experts, h});
    if (v3_bias) {
      b.Buffer(l + ".mlp.gate.e_score_correction_bias", {hp.num_experts}, Dtype::kF32, true);
    }
    if (fused) {
      FusedExperts(b, q, {.path = l + ".mlp.experts", .experts = hp.num_experts, .hidden = h,
                          .width = hp.moe_intermediate_size});
    } else {
      RepeatedModules(b, q, l + ".mlp.experts", hp.num_experts, [&](const std::string& x) {
        QGatedMlp(b, q, x, h, hp.moe_intermediate_size);
      });
    }
    if (shared > 0) {
      QGatedMlp(b, q, l + ".mlp.shared_experts", h, shared);
    }
  } else {
    QGatedMlp(b, q, l + ".mlp", h, hp.intermediate_size);
  }
  b.RmsNorm(l + ".post_attention_layernorm", h);
}

// GLM-5's per-layer indexer mode (GlmMoeDsaConfig): "indexer_types" ("full"/"shared"), else
// "index_topk_pattern" ('F'/'S'), else full where max(i - offset + 1, 0) % freq == 0 with
// "index_topk_freq" (default 1) and "index_skip_topk_offset" (default 2). Asked per layer.
struct IndexerLayers {
  IndexerLayers(ModelBuilder& b, const HfConfig& c, bool glm, uint64_t layers)
      : glm(glm), layers(layers) {
    if (!glm) return;
    for (const char* key : {"indexer_types", "index_topk_pattern"}) {
      const auto it = c.raw().find(key);
      if (it == c.raw().end() || it->is_null()) continue;
      listed = &*it;
      name = key;
      if (!it->is_array() && !it->is_string()) {
        b.Fail(MakeError("{}: field \"{}\" must be a list or a string", c.where(), key));
      }
      return;
    }
    freq = std::max<uint64_t>(Get(b, c.UintOr("index_topk_freq", 1)), 1);
    offset = Get(b, c.UintOr("index_skip_topk_offset", 2));
  }
  // False (a "shared" layer) reuses the previous layer's top-k: no indexer tensors.
  bool operator()(ModelBuilder& b, const HfConfig& c, uint64_t i) const {
    if (!glm || i >= layers) return true;  // MTP layers after the schedule run their indexer
    if (!listed) return (i + 1 > offset ? i + 1 - offset : 0) % freq == 0;
    const uint64_t n = listed->is_string() ? listed->get_ref<const std::string&>().size()
                                           : listed->size();
    if (i >= n) return true;
    if (listed->is_string()) return listed->get_ref<const std::string&>()[i] != 'S';
    const auto& v = (*listed)[i];
    if (!v.is_string() || (v != "full" && v != "shared")) {
      b.Fail(MakeError("{}: \"{}\"[{}] must be \"full\" or \"shared\"", c.where(), name, i));
      return false;
    }
    return v == "full";
  }
  bool glm;
  uint64_t layers;
  const nlohmann::json* listed = nullptr;
  std::string name;
  uint64_t freq = 1, offset = 2;
};

Result<Model> BuildDeepseek(const HfConfig& c, const BuildOptions& o, Variant variant) {
  const bool v3 = variant != Variant::kV2;
  const bool glm4 = variant == Variant::kGlm4Moe;
  const bool lite = variant == Variant::kGlm4MoeLite;
  const bool dsa = variant == Variant::kV32 || variant == Variant::kGlmDsa;
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadMlaDecoderBasics(b, c);
  Mla a;
  if (glm4) {
    // Glm4MoeConfig: head_dim 128, partial_rotary_factor 0.5 by default. `rope` holds the
    // rotary width, `v` the head width.
    a.gqa = true;
    a.d.heads = hp.num_attention_heads;
    a.d.v = Get(b, c.UintOr("head_dim", 128));
    a.d.rope = RotaryDim(b, c, a.d.v, 0.5);
    a.qk_norm = Get(b, c.BoolOr("use_qk_norm", false));
  } else {
    a.d = ReadMlaDims(b, c, hp.num_attention_heads);
  }
  a.bias = Get(b, c.BoolOr("attention_bias", false));
  hp.num_experts = Get(b, c.UintOr("n_routed_experts", 0));
  hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", 0));
  hp.num_shared_experts = Get(b, c.UintOr("n_shared_experts", 0));
  hp.moe_intermediate_size = Get(b, c.UintOr("moe_intermediate_size", 0));
  // Glm4MoeLiteConfig lays out "mlp_layer_types" as one dense layer, then sparse ones.
  const MoeSchedule sched = ReadMoeSchedule(b, c, lite ? 1 : 0);
  const uint64_t mtp = sched.mtp;
  // Glm4MoeTopkRouter and Glm4MoeLiteTopkRouter register e_score_correction_bias unconditionally;
  // Mistral4TopkRouter never does.
  const bool mistral4 = variant == Variant::kMistral4;
  const bool v3_bias = glm4 || lite ||
                       (v3 && !mistral4 && Get(b, c.StringOr("topk_method", "noaux_tc")) == "noaux_tc");
  if (dsa) {
    a.index_heads = Get(b, c.Uint("index_n_heads"));
    a.index_dim = Get(b, c.Uint("index_head_dim"));
    hp.index_topk = Get(b, c.UintOr("index_topk", 0));
  }
  const IndexerLayers has_indexer(b, c, variant == Variant::kGlmDsa, hp.num_layers);
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  if (hp.num_attention_heads == 0) {
    return MakeError("{}: field \"num_attention_heads\" must not be zero", c.where());
  }
  if (hp.num_experts > 0 && hp.moe_intermediate_size == 0) {
    return MakeError("{}: \"n_routed_experts\" is set but \"moe_intermediate_size\" is missing or "
                     "zero", c.where());
  }
  if (glm4 && (hp.num_kv_heads == 0 || hp.num_attention_heads % hp.num_kv_heads != 0)) {
    return MakeError("{}: \"num_attention_heads\" = {} is not a multiple of "
                     "\"num_key_value_heads\" = {}", c.where(), hp.num_attention_heads,
                     hp.num_kv_heads);
  }
  if (glm4 && a.d.v == 0) return MakeError("{}: field \"head_dim\" must not be zero", c.where());
  if (!glm4) CheckMlaDims(b, c, a.d);
  if (b.failed()) return b.Finish();
  if (dsa && (a.d.q_lora == 0 || a.index_heads == 0 || a.index_dim == 0)) {
    return MakeError("{}: DeepSeek sparse attention needs positive \"q_lora_rank\", "
                     "\"index_n_heads\" and \"index_head_dim\"", c.where());
  }
  if (glm4) {
    hp.head_dim = a.d.v;
  } else {
    SetMlaHyperparameters(hp, a.d);
  }
  hp.shared_expert_intermediate_size = hp.moe_intermediate_size * hp.num_shared_experts;
  hp.num_mtp_layers = mtp;
  const uint64_t shared = hp.moe_intermediate_size * hp.num_shared_experts;
  const uint64_t h = hp.hidden_size;
  // "mlp_layer_types" ("dense"/"sparse", GLM-5.2) overrides first_k_dense_replace/moe_layer_freq.
  const auto mlp_types = c.raw().find("mlp_layer_types");
  const nlohmann::json* mlp_list =
      mlp_types != c.raw().end() && mlp_types->is_array() ? &*mlp_types : nullptr;
  auto is_moe = [&](uint64_t i) {
    if (hp.num_experts == 0) return false;
    if (mlp_list && i < mlp_list->size()) return (*mlp_list)[i] == "sparse";
    return sched.IsMoe(i);
  };

  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    const bool indexer = dsa && has_indexer(b, c, i);
    DecoderLayer(b, q, l, a, is_moe(i), v3_bias, shared, indexer, mistral4);
    LayerInfo info = glm4 ? LayerInfo{.num_heads = hp.num_attention_heads,
                                      .num_kv_heads = hp.num_kv_heads,
                                      .head_dim_k = hp.head_dim, .head_dim_v = a.d.v}
                          : MlaLayerInfo(hp, a.d);
    info.moe = is_moe(i);
    info.intermediate_size = is_moe(i) ? 0 : hp.intermediate_size;
    if (indexer) info.indexer_head_dim = a.index_dim;
    hp.layers.push_back(info);
    if (o.buffers == BufferConvention::kTransformers442 && !glm4 && !lite) {
      // deepseek-ai's remote code: a (yarn) rotary embedding per attention with float32
      // cos/sin caches of [max_position_embeddings, qk_rope_head_dim].
      const std::string r = l + ".self_attn.rotary_emb";
      b.Buffer(r + ".inv_freq", {a.d.rope / 2}, Dtype::kF32, false);
      b.Buffer(r + ".cos_cached", {hp.max_position_embeddings, a.d.rope}, Dtype::kF32, false);
      b.Buffer(r + ".sin_cached", {hp.max_position_embeddings, a.d.rope}, Dtype::kF32, false);
    }
  }
  b.RmsNorm("model.norm", h);
  if (o.buffers == BufferConvention::kCurrent || glm4 || lite) {
    // Glm4MoeLiteRotaryEmbedding: head_dim is qk_rope_head_dim, times "partial_rotary_factor".
    const uint64_t rotary = lite ? RotaryDim(b, c, a.d.rope, 1.0) : a.d.rope;
    b.Buffer("model.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
  }
  TaskHead(b, c, o, "model.embed_tokens");
  // Multi-token prediction layers: stored in the checkpoint, not loaded by transformers.
  uint64_t mtp_begin = m.tensors.size();
  for (uint64_t k = 0; k < mtp && !b.failed(); ++k) {
    const std::string l = Layer("model.layers", hp.num_layers + k);
    const bool glm = variant == Variant::kGlmDsa;  // embeddings and head shared with the model
    if (!glm) b.Embedding(l + ".embed_tokens", hp.vocab_size, h);
    b.RmsNorm(l + ".enorm", h);
    b.RmsNorm(l + ".hnorm", h);
    b.Linear(l + ".eh_proj", 2 * h, h, false);
    DecoderLayer(b, q, l, a, is_moe(hp.num_layers + k), v3_bias, shared,
                 dsa && has_indexer(b, c, hp.num_layers + k), mistral4);
    b.RmsNorm(l + ".shared_head.norm", h);
    if (!glm) b.Linear(l + ".shared_head.head", h, hp.vocab_size, false);
  }
  if (mtp > 0 && !b.failed()) {
    const uint64_t bytes = MarkStoredOnly(m, mtp_begin);
    m.notes.push_back(fmt::format(
        "{} multi-token-prediction layer(s) (model.layers.{}+, {} bytes) are stored in the "
        "checkpoint but not loaded by transformers", mtp, hp.num_layers, bytes));
  }
  NoteQuantization(b, q);
  m.no_split_patterns = {"model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace

Result<Model> BuildDeepseekV2(const HfConfig& c, const BuildOptions& o) {
  return BuildDeepseek(c, o, Variant::kV2);
}
Result<Model> BuildDeepseekV3(const HfConfig& c, const BuildOptions& o) {
  return BuildDeepseek(c, o, Variant::kV3);
}
Result<Model> BuildDeepseekV32(const HfConfig& c, const BuildOptions& o) {
  return BuildDeepseek(c, o, Variant::kV32);
}
Result<Model> BuildGlmMoeDsa(const HfConfig& c, const BuildOptions& o) {
  return BuildDeepseek(c, o, Variant::kGlmDsa);
}
Result<Model> BuildGlm4Moe(const HfConfig& c, const BuildOptions& o) {
  return BuildDeepseek(c, o, Variant::kGlm4Moe);
}
Result<Model> BuildGlm4MoeLite(const HfConfig& c, const BuildOptions& o) {
  return BuildDeepseek(c, o, Variant::kGlm4MoeLite);
}
Result<Model> BuildMistral4(const HfConfig& c, const BuildOptions& o) {
  return BuildDeepseek(c, o, Variant::kMistral4);
}

}  // namespace memfit::arch
