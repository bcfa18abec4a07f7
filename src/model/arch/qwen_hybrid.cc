// Qwen3-Next and Qwen3.5 (rows in hybrid_families.cc) and the builder of every Qwen hybrid row
// (qwen_hybrid.h):
// - qwen3_next (Qwen3NextForCausalLM): model.* with fused in_proj_qkvz/in_proj_ba, routed experts
//   stored per expert with a gated shared expert, lm_head, one stored-only MTP layer by default.
// - qwen3_5 / qwen3_5_moe (Qwen3.5 / Qwen3.6, Qwen3_5[Moe]ForConditionalGeneration): "text_config"
//   under model.language_model with split in_proj_qkv/z/b/a, routed experts fused (gate_up_proj
//   [E, 2I, H], down_proj [E, H, I]) with a gated shared expert, lm_head at the top, the Qwen3-VL
//   vision tower without deepstack mergers under model.visual, "mtp_num_hidden_layers" MTP layers
//   (experts per expert); A_log and linear_attn.norm.weight in float32 (Qwen3.6: bfloat16).
//   qwen3_5_text / qwen3_5_moe_text (Qwen3_5[Moe]ForCausalLM): the language model under model.*.
// Every full_attention_interval-th layer (or as "layer_types" says) is gated full attention: q_proj
// doubled for the sigmoid output gate, q_norm/k_norm of head_dim. transformers ignores mtp.* on
// load. Quantized (ModelOpt NVFP4 / MIXED_PRECISION) routed experts are stored per expert
// (expert_kit.h), lm_head quantized when the config lists it.
// Sources: transformers models/qwen3_next/modular_qwen3_next.py, qwen3_5/modular_qwen3_5.py,
// qwen3_5_moe/modular_qwen3_5_moe.py; vLLM qwen3_next_mtp.py (num_nextn_predict_layers, default
// 1), qwen3_5.py, qwen3_5_mtp.py, PR #51836 (the float32 tensors).

#include "model/arch/qwen_hybrid.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "formats/hf_config_json.h"
#include "model/arch/config_defaults.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/decoder_layer_kinds.h"
#include "model/arch/expert_kit.h"
#include "model/arch/hybrid_spec.h"
#include "model/arch/qwen_vision.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

void FullAttention(ModelBuilder& b, const Quantization& q, const std::string& l,
                   const QwenHybridDims& d) {
  const std::string a = l + ".self_attn";
  QLinear(b, q, a + ".q_proj", d.h, d.nh * d.hd * (d.output_gate ? 2 : 1), d.attn_bias);
  QLinear(b, q, a + ".k_proj", d.h, d.nkv * d.hd, d.attn_bias);
  QLinear(b, q, a + ".v_proj", d.h, d.nkv * d.hd, d.attn_bias);
  QLinear(b, q, a + ".o_proj", d.nh * d.hd, d.h, d.attn_bias);
  b.RmsNorm(a + ".q_norm", d.hd);
  b.RmsNorm(a + ".k_norm", d.hd);
}

void GatedDeltaNet(ModelBuilder& b, const Quantization& q, const std::string& l,
                   const QwenHybridDims& d, const QwenHybridSpec& s) {
  const std::string a = l + ".linear_attn";
  const uint64_t key_dim = d.nk * d.dk, value_dim = d.nv * d.dv;
  const uint64_t conv_dim = 2 * key_dim + value_dim;
  if (s.split_in_proj) {
    QLinear(b, q, a + ".in_proj_qkv", d.h, conv_dim, false);
    QLinear(b, q, a + ".in_proj_z", d.h, value_dim, false);
    QLinear(b, q, a + ".in_proj_b", d.h, d.nv, false);
    QLinear(b, q, a + ".in_proj_a", d.h, d.nv, false);
  } else {
    QLinear(b, q, a + ".in_proj_qkvz", d.h, 2 * key_dim + 2 * value_dim, false);
    QLinear(b, q, a + ".in_proj_ba", d.h, 2 * d.nv, false);
  }
  b.Conv(a + ".conv1d", conv_dim, conv_dim, {d.kernel}, false, conv_dim);
  b.Param(a + ".dt_bias", {d.nv});
  const Dtype small = s.float32_gdn_params ? Dtype::kF32 : b.dtype();
  b.ParamAs(a + ".A_log", {d.nv}, small);
  b.ParamAs(a + ".norm.weight", {d.dv}, small);
  QLinear(b, q, a + ".out_proj", value_dim, d.h, false);
}

}  // namespace

LayerInfo EmitQwenHybridMixer(ModelBuilder& b, const Quantization& q, const std::string& l,
                              const QwenHybridDims& d, const QwenHybridSpec& s, bool linear,
                              uint32_t state_bits) {
  LayerInfo info;
  if (linear) {
    GatedDeltaNet(b, q, l, d, s);
    info.attention = AttentionKind::kNone;
    info.mixer = LayerMixer::kGatedDeltaNet;
    info.recurrent = true;
    info.state = {.conv_channels = 2 * d.nk * d.dk + d.nv * d.dv,
                  .conv_kernel = d.kernel,
                  .heads = d.nv,
                  .elements_per_head = d.dk * d.dv,
                  .state_bits = state_bits};
  } else {
    FullAttention(b, q, l, d);
    info.num_heads = d.nh;
    info.num_kv_heads = d.nkv;
    info.head_dim_k = info.head_dim_v = d.hd;
  }
  return info;
}

namespace {

// One decoder layer; returns its LayerInfo.
LayerInfo HybridLayer(ModelBuilder& b, const Quantization& q, const std::string& l,
                      const QwenHybridDims& d, const QwenHybridSpec& s, bool linear, bool moe,
                      ExpertLayout layout, uint32_t state_bits) {
  b.RmsNorm(l + ".input_layernorm", d.h);
  LayerInfo info = EmitQwenHybridMixer(b, q, l, d, s, linear, state_bits);
  if (moe) {
    QwenMoeBlock(b, q, l, d.h, d.experts, d.expert_width, d.shared, layout);
    info.moe = true;
  } else {
    QGatedMlp(b, q, l + ".mlp", d.h, d.inter);
    info.intermediate_size = d.inter;
  }
  b.RmsNorm(l + ".post_attention_layernorm", d.h);
  return info;
}

// lm_head, tied to `embed` or quantized when the checkpoint's quantization covers it
// (nvidia/Qwen3.6-35B-A3B-NVFP4 lists "lm_head" as W4A16_NVFP4; vLLM issue #44081).
void QwenLmHead(ModelBuilder& b, const Quantization& q, const std::string& embed) {
  const auto& hp = b.model().hp;
  if (hp.tie_word_embeddings) {
    LmHead(b, embed);
    return;
  }
  b.SetHead(true);
  QLinear(b, q, "lm_head", hp.hidden_size, hp.vocab_size, false);
  b.SetHead(false);
}

}  // namespace

uint64_t QwenRotaryDim(ModelBuilder& b, const HfConfig& c, uint64_t head_dim) {
  // partial_rotary_factor: at the top level (Qwen3-Next) or in rope_parameters (Qwen3.5).
  double factor = Get(b, c.NumberOr("partial_rotary_factor", 0.25));
  if (auto rope = c.OptionalSub("rope_parameters")) {
    factor = Get(b, rope->NumberOr("partial_rotary_factor", factor));
  }
  if (!(factor > 0.0 && factor <= 1.0)) {
    b.Fail(MakeError("{}: \"partial_rotary_factor\" = {} must be in (0, 1]", c.where(), factor));
    return 0;
  }
  return static_cast<uint64_t>(static_cast<double>(head_dim) * factor);
}

QwenHybridDims ReadQwenHybridDims(ModelBuilder& b, const HfConfig& c) {
  const auto& hp = b.model().hp;
  QwenHybridDims d{.h = hp.hidden_size,
                   .nh = hp.num_attention_heads,
                   .nkv = hp.num_kv_heads,
                   .hd = hp.head_dim,
                   .inter = hp.intermediate_size,
                   .experts = hp.num_experts,
                   .expert_width = hp.moe_intermediate_size,
                   .shared = hp.shared_expert_intermediate_size};
  d.nk = Get(b, c.Uint("linear_num_key_heads"));
  d.nv = Get(b, c.Uint("linear_num_value_heads"));
  d.dk = Get(b, c.Uint("linear_key_head_dim"));
  d.dv = Get(b, c.Uint("linear_value_head_dim"));
  d.kernel = Get(b, c.Uint("linear_conv_kernel_dim"));
  d.output_gate = Get(b, c.BoolOr("attn_output_gate", true));
  d.attn_bias = Get(b, c.BoolOr("attention_bias", false));
  if (b.failed()) return d;
  if (d.nk == 0 || d.nv == 0 || d.dk == 0 || d.dv == 0 || d.kernel == 0) {
    b.Fail(
        MakeError("{}: \"linear_num_key_heads\", \"linear_num_value_heads\", "
                  "\"linear_key_head_dim\", \"linear_value_head_dim\" and "
                  "\"linear_conv_kernel_dim\" must be positive",
                  c.where()));
  } else if (d.nv % d.nk != 0) {
    b.Fail(
        MakeError("{}: \"linear_num_value_heads\" = {} is not a multiple of "
                  "\"linear_num_key_heads\" = {}",
                  c.where(), d.nv, d.nk));
  }
  // Every width below is a product of two config values: check them once.
  MulDims(b, MulDims(b, d.nh, d.hd, "num_attention_heads x head_dim"), 2, "q_proj width");
  MulDims(b, MulDims(b, d.nv, d.dv, "value heads x head dim"), 4, "linear attention width");
  MulDims(b, MulDims(b, d.nk, d.dk, "key heads x head dim"), 4, "linear attention width");
  MulDims(b, d.dk, d.dv, "linear_key_head_dim x linear_value_head_dim");
  return d;
}

void QwenMoeBlock(ModelBuilder& b, const Quantization& q, const std::string& l, uint64_t hidden,
                  uint64_t experts, uint64_t expert_width, uint64_t shared, ExpertLayout layout) {
  b.Linear(l + ".mlp.gate", hidden, experts, false);
  if (layout == ExpertLayout::kPerExpert) {
    RepeatedModules(b, q, l + ".mlp.experts", experts,
                    [&](const std::string& x) { QGatedMlp(b, q, x, hidden, expert_width); });
  } else {
    FusedExperts(b, q,
                 {.path = l + ".mlp.experts",
                  .experts = experts,
                  .hidden = hidden,
                  .width = expert_width,
                  .in_first = layout == ExpertLayout::kFusedInFirst});
  }
  if (shared > 0) {
    const std::string x = l + ".mlp.shared_expert";
    QGatedMlp(b, q, x, hidden, shared);
    b.Linear(l + ".mlp.shared_expert_gate", hidden, 1, false);
  }
}

std::vector<bool> QwenLinearLayers(ModelBuilder& b, const HfConfig& c, uint64_t layers,
                                   std::span<const std::pair<std::string_view, bool>> types) {
  const uint64_t interval = Get(b, c.UintOr("full_attention_interval", 4));
  if (b.failed()) return {};
  if (interval == 0) {
    b.Fail(MakeError("{}: \"full_attention_interval\" must not be zero", c.where()));
    return {};
  }
  if (!Absent(c, "layer_types")) return TypedLayers(b, c, "layer_types", layers, types);
  // One flag per layer: more layers than any tensor cap would be an absurd allocation.
  if (layers > kMaxBuiltTensors) {
    b.Fail(MakeError("{}: \"num_hidden_layers\" = {} is absurd", c.where(), layers));
    return {};
  }
  std::vector<bool> linear(layers);
  for (uint64_t i = 0; i < layers; ++i) linear[i] = (i + 1) % interval != 0;
  return linear;
}

uint64_t EmitQwenHybridText(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                            const QwenHybridSpec& s, const std::string& prefix) {
  auto& hp = b.model().hp;
  const uint64_t step = Get(b, c.UintOr("decoder_sparse_step", 1));
  const uint64_t mtp =
      Get(b, c.UintOr("mtp_num_hidden_layers",
                      Get(b, c.UintOr("num_nextn_predict_layers", s.default_mtp_layers))));
  const std::string ssm_dtype = Get(b, c.StringOr("mamba_ssm_dtype", ""));
  const uint64_t rotary = QwenRotaryDim(b, c, hp.head_dim);
  const std::unordered_set<uint64_t> mlp_only = MlpOnlyLayers(b, c);
  if (b.failed()) return 0;
  if (hp.num_experts > 0 && (hp.moe_intermediate_size == 0 || hp.experts_per_token == 0)) {
    b.Fail(
        MakeError("{}: \"num_experts\" is set but \"moe_intermediate_size\" or "
                  "\"num_experts_per_tok\" is missing or zero",
                  c.where()));
    return 0;
  }
  if (step == 0) {
    b.Fail(MakeError("{}: \"decoder_sparse_step\" must not be zero", c.where()));
    return 0;
  }
  constexpr std::pair<std::string_view, bool> kTypes[] = {{"linear_attention", true},
                                                          {"full_attention", false}};
  const std::vector<bool> linear = QwenLinearLayers(b, c, hp.num_layers, kTypes);
  if (b.failed()) return 0;
  const QwenHybridDims d = ReadQwenHybridDims(b, c);
  if (hp.num_experts == 0 && d.inter == 0) {
    b.Fail(MakeError("{}: field \"intermediate_size\" is missing (no \"num_experts\" either)",
                     c.where()));
  }
  if (b.failed()) return 0;
  const uint32_t state_bits = ssm_dtype == "float32" ? 32 : 0;
  b.Embedding(prefix + ".embed_tokens", hp.vocab_size, hp.hidden_size);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const bool moe = hp.num_experts > 0 && (i + 1) % step == 0 && mlp_only.count(i) == 0;
    hp.layers.push_back(HybridLayer(b, q, Layer(prefix + ".layers", i), d, s, linear[i], moe,
                                    s.layout, state_bits));
  }
  b.RmsNorm(prefix + ".norm", hp.hidden_size);
  // inv_freq = 1 / theta^(arange(0, rotary, 2) / rotary): ceil(rotary / 2) entries.
  b.Buffer(prefix + ".rotary_emb.inv_freq", {(rotary + 1) / 2}, Dtype::kF32, false);
  hp.num_mtp_layers = mtp;
  if (mtp > 0 && Get(b, c.BoolOr("mtp_use_dedicated_embeddings", false))) {
    b.model().assumptions.push_back(
        "\"mtp_use_dedicated_embeddings\": the MTP module's own embeddings are not counted (no "
        "released checkpoint to take their names and shapes from)");
  }
  return mtp;
}

// mtp.fc [H, 2H], mtp.pre_fc_norm_{embedding,hidden}, full-attention decoder layers with experts
// stored per expert, mtp.norm; the embeddings and head are the model's.
void EmitQwenMtp(ModelBuilder& b, const HfConfig& c, const Quantization& q, const QwenHybridSpec& s,
                 uint64_t layers) {
  const auto& hp = b.model().hp;
  const QwenHybridDims d = ReadQwenHybridDims(b, c);
  b.Linear("mtp.fc", 2 * hp.hidden_size, hp.hidden_size, false);
  b.RmsNorm("mtp.pre_fc_norm_embedding", hp.hidden_size);
  b.RmsNorm("mtp.pre_fc_norm_hidden", hp.hidden_size);
  for (uint64_t k = 0; k < layers && !b.failed(); ++k) {
    HybridLayer(b, q, Layer("mtp.layers", k), d, s, /*linear=*/false, hp.num_experts > 0,
                ExpertLayout::kPerExpert, 0);
  }
  b.RmsNorm("mtp.norm", hp.hidden_size);
}

Result<Model> BuildQwenHybrid(const HfConfig& c, const BuildOptions& o, const QwenHybridSpec& s) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, s.composite ? QwenTextConfig(c) : Result<HfConfig>(c));
  std::optional<HfConfig> vision;
  if (s.composite) {
    auto sub = c.Sub("vision_config");
    if (!sub) return sub.error();
    vision = *sub;
  }
  ModelBuilder b(text);
  Model& m = b.model();
  if (s.composite) {
    FillCommon(c, m);  // the top level's model_type, architecture and dtype
    if (!m.config_dtype) m.config_dtype = text.torch_dtype();
  }
  Quantization q = ReadQuantization(b, text, o);
  const std::string prefix = s.composite ? "model.language_model" : "model";
  if (s.composite) b.SetComponent("language_model");
  auto& hp = m.hp;
  ReadDecoderBasics(b, text, {.need_intermediate = false, .rms_gated = true});
  hp.num_experts = Get(b, text.UintOr("num_experts", s.moe_defaults[0]));
  hp.experts_per_token = Get(b, text.UintOr("num_experts_per_tok", s.moe_defaults[1]));
  hp.moe_intermediate_size = Get(b, text.UintOr("moe_intermediate_size", s.moe_defaults[2]));
  hp.shared_expert_intermediate_size =
      Get(b, text.UintOr("shared_expert_intermediate_size", s.moe_defaults[3]));
  hp.num_shared_experts = hp.shared_expert_intermediate_size > 0 ? 1 : 0;
  const uint64_t mtp = s.text(b, text, q, s, prefix);
  if (b.failed()) return b.Finish();
  if (s.composite) {
    hp.text_config_key = c.Has("text_config") ? "text_config" : "";
    b.SetComponent("vision_tower");
    EmitQwenVision(b, *vision, QwenVision::kQwen3Vl, "model.visual", hp.hidden_size, &q);
    b.SetComponent("language_model");
    QwenLmHead(b, q, "model.language_model.embed_tokens");
  } else if (s.task_head) {
    TaskHead(b, c, o, "model.embed_tokens");
  } else {
    QwenLmHead(b, q, "model.embed_tokens");
  }
  if (mtp > 0 && !b.failed()) {
    const size_t begin = m.tensors.size();
    s.mtp(b, text, q, s, mtp);
    if (!b.failed()) {
      m.notes.push_back(fmt::format(
          "{} multi-token-prediction layer(s) (mtp.*, {} bytes) are stored in the checkpoint but "
          "not loaded by transformers",
          mtp, MarkStoredOnly(m, begin)));
    }
  }
  NoteQuantization(b, q);
  if (s.float32_gdn_params) {
    m.assumptions.push_back(
        "linear_attn.A_log and linear_attn.norm.weight stored in float32, as in the Qwen3.5 "
        "checkpoints (Qwen3.6 stores them in bfloat16: a few kilobytes less)");
  }
  m.no_split_patterns = {prefix + ".layers.*"};
  if (s.composite) m.no_split_patterns.push_back("model.visual.blocks.*");
  m.base_model_prefix = "model.";
  return b.Finish();
}

Result<HfConfig> QwenTextConfig(const HfConfig& c) {
  auto sub = c.OptionalSub("text_config");
  if (!sub) return c;
  nlohmann::json text = sub->raw();
  for (const char* key : {"torch_dtype", "dtype", "tie_word_embeddings", "quantization_config"}) {
    if (c.Has(key) && !text.contains(key)) text[key] = c.raw()[key];
  }
  // The top level decides the tie (transformers reads config.tie_word_embeddings).
  if (c.Has("tie_word_embeddings")) text["tie_word_embeddings"] = c.raw()["tie_word_embeddings"];
  return HfConfig::FromJson(std::move(text), c.where() + ": text_config");
}

}  // namespace memfit::arch
