// MLA (mla_kit.h) and BuildMla, the skeleton that builds every MlaFamilySpec row.

#include "model/arch/mla_kit.h"

#include <algorithm>
#include <vector>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/expert_kit.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {

void ReadMlaDecoderBasics(ModelBuilder& b, const HfConfig& c, const MlaBasicsKeys& keys) {
  auto& hp = b.model().hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.Uint(keys.layers));
  hp.num_attention_heads = Get(b, c.Uint("num_attention_heads"));
  hp.num_kv_heads = Get(b, c.UintOr("num_key_value_heads", hp.num_attention_heads));
  hp.intermediate_size = Get(b, c.Uint(keys.intermediate));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 0));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", keys.tie));
  hp.activation = Get(b, c.StringOr("hidden_act", "silu"));
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
}

MlaDims ReadMlaDims(ModelBuilder& b, const HfConfig& c, uint64_t heads, uint64_t v_default) {
  MlaDims d;
  d.heads = heads;
  d.q_lora = Get(b, c.UintOr("q_lora_rank", 0));  // null: DeepSeek-V2-Lite's plain q_proj
  d.kv_lora = Get(b, c.Uint("kv_lora_rank"));
  d.nope = Get(b, c.Uint("qk_nope_head_dim"));
  d.rope = Get(b, c.Uint("qk_rope_head_dim"));
  d.v = Get(b, v_default > 0 ? c.UintOr("v_head_dim", v_default) : c.Uint("v_head_dim"));
  CheckNonZero(b, c,
               {{heads, "num_attention_heads"},
                {d.kv_lora, "kv_lora_rank"},
                {d.nope + d.rope, "qk_nope_head_dim\" + \"qk_rope_head_dim"},
                {d.v, "v_head_dim"}});
  auto& hp = b.model().hp;
  hp.head_dim = d.nope + d.rope;
  hp.q_lora_rank = d.q_lora;
  hp.kv_lora_rank = d.kv_lora;
  hp.qk_nope_head_dim = d.nope;
  hp.qk_rope_head_dim = d.rope;
  hp.v_head_dim = d.v;
  return d;
}

LayerInfo MlaLayerInfo(const Hyperparameters& hp, const MlaDims& d) {
  return LayerInfo{.attention = AttentionKind::kMla,
                   .num_heads = d.heads,
                   .num_kv_heads = hp.num_kv_heads,
                   .head_dim_k = d.nope + d.rope,
                   .head_dim_v = d.v};
}

void EmitQueryProjection(ModelBuilder& b, const Quantization& q, const std::string& attn,
                         uint64_t hidden, uint64_t q_lora, uint64_t out, bool a_bias, bool q_bias) {
  if (q_lora > 0) {
    QLinear(b, q, attn + ".q_a_proj", hidden, q_lora, a_bias);
    b.RmsNorm(attn + ".q_a_layernorm", q_lora);
    QLinear(b, q, attn + ".q_b_proj", q_lora, out, false);
  } else {
    QLinear(b, q, attn + ".q_proj", hidden, out, q_bias);
  }
}

void EmitMla(ModelBuilder& b, const Quantization& q, const std::string& attn, const MlaDims& d,
             bool bias) {
  const uint64_t h = b.model().hp.hidden_size;
  const uint64_t qk = MulDims(b, d.heads, d.nope + d.rope, "heads x qk head dim");
  EmitQueryProjection(b, q, attn, h, d.q_lora, qk, bias, false);
  QLinear(b, q, attn + ".kv_a_proj_with_mqa", h, d.kv_lora + d.rope, bias);
  b.RmsNorm(attn + ".kv_a_layernorm", d.kv_lora);
  QLinear(b, q, attn + ".kv_b_proj", d.kv_lora,
          MulDims(b, d.heads, d.nope + d.v, "heads x (qk_nope_head_dim + v_head_dim)"), false);
  QLinear(b, q, attn + ".o_proj", MulDims(b, d.heads, d.v, "heads x v_head_dim"), h, bias);
}

void EmitGqa(ModelBuilder& b, const Quantization& q, const std::string& attn, const GqaShape& s) {
  const uint64_t h = b.model().hp.hidden_size;
  const uint64_t q_width = MulDims(b, s.heads, s.head_dim, "num_attention_heads x head_dim");
  const uint64_t kv_width = MulDims(b, s.kv_heads, s.head_dim, "num_key_value_heads x head_dim");
  QLinear(b, q, attn + ".q_proj", h, q_width, s.qkv_bias);
  QLinear(b, q, attn + ".k_proj", h, kv_width, s.qkv_bias);
  QLinear(b, q, attn + ".v_proj", h, kv_width, s.qkv_bias);
  QLinear(b, q, attn + ".o_proj", q_width, h, false);
  if (s.qk_norm) {
    b.RmsNorm(attn + ".q_norm", s.per_head ? s.head_dim : q_width);
    b.RmsNorm(attn + ".k_norm", s.per_head ? s.head_dim : kv_width);
  }
}

MoeSchedule ReadMoeSchedule(ModelBuilder& b, const HfConfig& c, uint64_t first_dense_default) {
  MoeSchedule s;
  s.first_dense = Get(b, c.UintOr("first_k_dense_replace", first_dense_default));
  s.freq = Get(b, c.UintOr("moe_layer_freq", 1));
  s.mtp = Get(b, c.UintOr("num_nextn_predict_layers", 0));
  if (!b.failed() && s.freq == 0) {
    b.Fail(MakeError("{}: field \"moe_layer_freq\" must not be zero", c.where()));
    s.freq = 1;
  }
  return s;
}

void MarkMtpStoredOnly(ModelBuilder& b, size_t begin, uint64_t count, std::string_view what,
                       std::string_view tail) {
  if (count == 0 || b.failed()) return;
  const uint64_t bytes = MarkStoredOnly(b.model(), begin);
  b.model().notes.push_back(
      fmt::format("{} multi-token-prediction {}, {} bytes) {}", count, what, bytes, tail));
}

namespace {

// What BuildMla reads once for every layer.
struct MlaPlan {
  const MlaFamilySpec* spec = nullptr;
  MlaDims d;  // kGqa: `v` the head width, `rope` the rotary width
  bool bias = false, qk_norm = false, mlp_bias = false, router_bias = false, routed = false;
  uint64_t index_heads = 0, index_dim = 0;  // the DSA indexer; 0: none
  uint64_t shared = 0;                      // the shared experts' width
  MoeSchedule sched;
  const nlohmann::json* mlp_types = nullptr;  // "mlp_layer_types", when a list
  std::vector<bool> indexer;  // kDsaGlm's indexer layers; past its end (MTP layers) every layer

  bool IsMoe(uint64_t i) const {
    if (!routed) return false;
    if (mlp_types && i < mlp_types->size()) return (*mlp_types)[i] == "sparse";
    return sched.IsMoe(i);
  }
  bool HasIndexer(uint64_t i) const { return index_dim > 0 && (i >= indexer.size() || indexer[i]); }
};

// kDsaGlm's indexer rule (mla_kit.h) for each of the `layers` layers.
std::vector<bool> GlmIndexerLayers(ModelBuilder& b, const HfConfig& c, uint64_t layers) {
  std::vector<bool> out(layers, true);
  for (const char* key : {"indexer_types", "index_topk_pattern"}) {
    const auto it = c.raw().find(key);
    if (it == c.raw().end() || it->is_null()) continue;
    if (it->is_string()) {
      const std::string& pattern = it->get_ref<const std::string&>();
      for (size_t i = 0; i < pattern.size() && i < layers; ++i) out[i] = pattern[i] != 'S';
    } else if (!it->is_array()) {
      b.Fail(MakeError("{}: field \"{}\" must be a list or a string", c.where(), key));
    }
    for (size_t i = 0; it->is_array() && i < it->size() && i < layers && !b.failed(); ++i) {
      const auto& v = (*it)[i];
      if (v != "full" && v != "shared") {
        b.Fail(MakeError("{}: \"{}\"[{}] must be \"full\" or \"shared\"", c.where(), key, i));
      }
      out[i] = v == "full";
    }
    return out;
  }
  const uint64_t freq = std::max<uint64_t>(Get(b, c.UintOr("index_topk_freq", 1)), 1);
  const uint64_t offset = Get(b, c.UintOr("index_skip_topk_offset", 2));
  for (uint64_t i = 0; i < layers; ++i) out[i] = (i + 1 > offset ? i + 1 - offset : 0) % freq == 0;
  return out;
}

void MlaRoutedMlp(ModelBuilder& b, const Quantization& q, const std::string& mlp,
                  const MlaPlan& p) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size;
  b.Param(mlp + ".gate.weight", {hp.num_experts, h});
  if (p.router_bias) {
    b.Buffer(mlp + ".gate.e_score_correction_bias", {hp.num_experts}, Dtype::kF32, true);
  }
  if (p.spec->fused_experts) {
    FusedExperts(b, q,
                 {.path = mlp + ".experts",
                  .experts = hp.num_experts,
                  .hidden = h,
                  .width = hp.moe_intermediate_size});
  } else {
    RepeatedModules(b, q, mlp + ".experts", hp.num_experts,
                    [&](const std::string& x) { QGatedMlp(b, q, x, h, hp.moe_intermediate_size); });
  }
  if (p.shared > 0) QGatedMlp(b, q, mlp + ".shared_experts", h, p.shared);
}

// Decoder layer `i` (model.layers.i; MTP layers after the last).
void MlaDecoderLayer(ModelBuilder& b, const Quantization& q, const MlaPlan& p, uint64_t i) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size;
  const std::string l = Layer("model.layers", i);
  b.RmsNorm(l + ".input_layernorm", h);
  if (p.spec->attention == MlaAttention::kGqa) {
    EmitGqa(b, q, l + ".self_attn",
            {.heads = hp.num_attention_heads,
             .kv_heads = hp.num_kv_heads,
             .head_dim = p.d.v,
             .qkv_bias = p.bias,
             .qk_norm = p.qk_norm});
  } else {
    EmitMla(b, q, l + ".self_attn", p.d, p.bias);
  }
  if (p.HasIndexer(i)) {
    const std::string x = l + ".self_attn.indexer";
    QLinear(b, q, x + ".wq_b", p.d.q_lora,
            MulDims(b, p.index_heads, p.index_dim, "index_n_heads x index_head_dim"), false);
    QLinear(b, q, x + ".wk", h, p.index_dim, false);
    b.LayerNorm(x + ".k_norm", p.index_dim);
    b.Linear(x + ".weights_proj", h, p.index_heads, false);
  }
  if (p.IsMoe(i)) {
    MlaRoutedMlp(b, q, l + ".mlp", p);
  } else {
    QGatedMlp(b, q, l + ".mlp", h, hp.intermediate_size, p.mlp_bias);
  }
  b.RmsNorm(l + ".post_attention_layernorm", h);
}

// Reads the row's hyperparameters into `p` and model.hp (before the quantization).
void ReadMlaPlan(ModelBuilder& b, const HfConfig& c, const MlaFamilySpec& s, MlaPlan& p) {
  auto& hp = b.model().hp;
  ReadMlaDecoderBasics(b, c, {.tie = s.tie_default});
  const uint64_t heads = hp.num_attention_heads;
  if (s.attention == MlaAttention::kGqa) {
    p.d.heads = heads;
    p.d.v = Get(b, c.UintOr("head_dim", 128));
    p.d.rope = RotaryDim(b, c, p.d.v, s.rotary_factor);
    p.qk_norm = Get(b, c.BoolOr("use_qk_norm", false));
  } else {
    p.d = ReadMlaDims(b, c, heads, s.v_from_hidden && heads ? hp.hidden_size / heads : 0);
  }
  p.bias = Get(b, c.BoolOr("attention_bias", false));
  if (!s.mlp_bias_key.empty()) p.mlp_bias = Get(b, c.BoolOr(s.mlp_bias_key, false));
  hp.num_experts = Get(b, c.UintOr("n_routed_experts", 0));
  hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", 0));
  hp.num_shared_experts = Get(b, c.UintOr("n_shared_experts", 0));
  hp.moe_intermediate_size = Get(b, c.UintOr("moe_intermediate_size", 0));
  p.sched = ReadMoeSchedule(b, c, s.first_dense_default);
  if (s.mtp == MlaMtp::kNone) p.sched.mtp = 0;
  p.router_bias = s.router_bias == MlaRouterBias::kAlways ||
                  (s.router_bias == MlaRouterBias::kNoauxTc &&
                   Get(b, c.StringOr("topk_method", "noaux_tc")) == "noaux_tc");
  if (s.attention == MlaAttention::kDsa || s.attention == MlaAttention::kDsaGlm) {
    p.index_heads = Get(b, c.Uint("index_n_heads"));
    p.index_dim = Get(b, c.Uint("index_head_dim"));
    hp.index_topk = Get(b, c.UintOr("index_topk", 0));
    CheckNonZero(b, c,
                 {{p.index_heads, "index_n_heads"},
                  {p.index_dim, "index_head_dim"},
                  {p.d.q_lora, "q_lora_rank"}},
                 "DeepSeek sparse attention: ");
  }
  if (s.attention == MlaAttention::kDsaGlm) p.indexer = GlmIndexerLayers(b, c, hp.num_layers);
  const auto types = c.raw().find("mlp_layer_types");
  if (types != c.raw().end() && types->is_array()) p.mlp_types = &*types;
  // What the other dimensions must be (ReadMlaDims checks the MLA ones).
  const bool gqa = s.attention == MlaAttention::kGqa;
  CheckNonZero(b, c, {{heads, "num_attention_heads"}});
  if (hp.num_experts > 0) {
    CheckNonZero(b, c, {{hp.moe_intermediate_size, "moe_intermediate_size"}});
  }
  if (gqa && CheckNonZero(b, c, {{p.d.v, "head_dim"}}) &&
      (hp.num_kv_heads == 0 || heads % hp.num_kv_heads != 0)) {
    b.Fail(
        MakeError("{}: \"num_attention_heads\" = {} is not a multiple of "
                  "\"num_key_value_heads\" = {}",
                  c.where(), heads, hp.num_kv_heads));
  }
}

}  // namespace

Result<Model> BuildMla(const HfConfig& c, const BuildOptions& o, const MlaFamilySpec& s) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  MlaPlan p;
  p.spec = &s;
  ReadMlaPlan(b, c, s, p);
  const Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const bool gqa = s.attention == MlaAttention::kGqa;
  if (gqa) hp.head_dim = p.d.v;
  p.routed = hp.num_experts > 0;
  p.shared = hp.moe_intermediate_size * hp.num_shared_experts;
  hp.shared_expert_intermediate_size = p.shared;
  hp.num_mtp_layers = p.sched.mtp;
  const uint64_t h = hp.hidden_size;

  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  if (s.embed_scale) b.Buffer("model.embed_tokens.embed_scale", {}, Dtype::kF32, false);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    MlaDecoderLayer(b, q, p, i);
    LayerInfo info = gqa ? AttentionInfo(hp, false, 0) : MlaLayerInfo(hp, p.d);
    info.moe = p.IsMoe(i);
    info.intermediate_size = info.moe ? 0 : hp.intermediate_size;
    if (p.HasIndexer(i)) info.indexer_head_dim = p.index_dim;
    hp.layers.push_back(info);
    if (s.rope == MlaRope::kRemoteCode442 && o.buffers == BufferConvention::kTransformers442) {
      const std::string r = Layer("model.layers", i) + ".self_attn.rotary_emb";
      b.Buffer(r + ".inv_freq", {p.d.rope / 2}, Dtype::kF32, false);
      b.Buffer(r + ".cos_cached", {hp.max_position_embeddings, p.d.rope}, Dtype::kF32, false);
      b.Buffer(r + ".sin_cached", {hp.max_position_embeddings, p.d.rope}, Dtype::kF32, false);
    }
  }
  if (!s.note.empty()) m.notes.emplace_back(s.note);
  b.RmsNorm("model.norm", h);
  if (s.rope == MlaRope::kModelLevel || o.buffers == BufferConvention::kCurrent) {
    const uint64_t rotary =
        !gqa && s.rotary_factor > 0 ? RotaryDim(b, c, p.d.rope, s.rotary_factor) : p.d.rope;
    b.Buffer("model.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
  }
  TaskHead(b, c, o, "model.embed_tokens");
  // The MTP layers: stored in the checkpoint, not loaded by transformers.
  const bool own = s.mtp == MlaMtp::kOwnEmbed;
  const size_t mtp_begin = m.tensors.size();
  for (uint64_t i = hp.num_layers; i < hp.num_layers + p.sched.mtp && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    if (own) b.Embedding(l + ".embed_tokens", hp.vocab_size, h);
    b.RmsNorm(l + ".enorm", h);
    b.RmsNorm(l + ".hnorm", h);
    b.Linear(l + ".eh_proj", 2 * h, h, false);
    MlaDecoderLayer(b, q, p, i);
    b.RmsNorm(l + ".shared_head.norm", h);
    if (own) b.Linear(l + ".shared_head.head", h, hp.vocab_size, false);
  }
  MarkMtpStoredOnly(b, mtp_begin, p.sched.mtp,
                    fmt::format("layer(s) (model.layers.{}+", hp.num_layers));
  return FinishDecoderAfterHead(b, q);
}

}  // namespace memfit::arch
