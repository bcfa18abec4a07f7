// MiMo-V2-Flash (MiMoV2FlashForCausalLM): layers of sliding-window (with the swa_* head counts
// and dims) or global attention by "hybrid_layer_pattern", K and V of different head dims, an
// optional attention_sink_bias [heads] per kind, o_proj never biased; dense MLPs or routed experts
// (router mlp.gate.weight with a float32 e_score_correction_bias, no shared experts) by the
// per-layer "moe_layer_freq"; untied lm_head; the MTP layers model.mtp.layers.K (enorm, hnorm,
// eh_proj [H, 2H], a sliding attention layer with pre_mlp_layernorm and a dense MLP,
// final_layernorm) stored, not loaded. Sources: vLLM models/mimo_v2_flash.py (its loader skips
// "mtp") and mimo_v2_flash_mtp.py (the checkpoint's names); the model card
// (XiaomiMiMo/MiMo-V2-Flash: "309B total parameters", "3-layer MTP weights").

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/decoder_layer_kinds.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

// The checkpoint stores three MTP layers; the config does not say so (model card).
constexpr uint64_t kDefaultMtpLayers = 3;

struct MimoAttention {
  uint64_t heads = 0, kv_heads = 0, head_dim = 0, v_head_dim = 0;
  bool sink = false;  // attention_sink_bias [heads]
};

void MimoV2FlashAttention(ModelBuilder& b, const Quantization& q, const std::string& l,
                          const MimoAttention& a, bool bias) {
  const uint64_t h = b.model().hp.hidden_size;
  const std::string x = l + ".self_attn";
  const uint64_t q_width = MulDims(b, a.heads, a.head_dim, "heads x head_dim");
  const uint64_t o_width = MulDims(b, a.heads, a.v_head_dim, "heads x v_head_dim");
  QLinear(b, q, x + ".q_proj", h, q_width, bias);
  QLinear(b, q, x + ".k_proj", h, MulDims(b, a.kv_heads, a.head_dim, "kv heads x head_dim"), bias);
  QLinear(b, q, x + ".v_proj", h, MulDims(b, a.kv_heads, a.v_head_dim, "kv heads x v_head_dim"),
          bias);
  QLinear(b, q, x + ".o_proj", o_width, h, false);
  if (a.sink) b.Param(x + ".attention_sink_bias", {a.heads});
}

}  // namespace

Result<Model> BuildMiMoV2Flash(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadDecoderBasics(b, c, {.rms_gated = true});
  MimoAttention full{
      .heads = hp.num_attention_heads, .kv_heads = hp.num_kv_heads, .head_dim = hp.head_dim};
  full.v_head_dim = Get(b, c.UintOr("v_head_dim", hp.head_dim));
  full.sink = Get(b, c.BoolOr("add_full_attention_sink_bias", false));
  MimoAttention swa;
  swa.heads = Get(b, c.UintOr("swa_num_attention_heads", hp.num_attention_heads));
  swa.kv_heads = Get(b, c.UintOr("swa_num_key_value_heads", hp.num_kv_heads));
  swa.head_dim = Get(b, c.UintOr("swa_head_dim", hp.head_dim));
  swa.v_head_dim = Get(b, c.UintOr("swa_v_head_dim", full.v_head_dim));
  swa.sink = Get(b, c.BoolOr("add_swa_attention_sink_bias", false));
  // vLLM reads "sliding_window_size"; "sliding_window" holds the same value in the release.
  const uint64_t window =
      Get(b, c.UintOr("sliding_window_size", Get(b, c.UintOr("sliding_window", 0))));
  const bool bias = Get(b, c.BoolOr("attention_bias", false));
  hp.num_experts = Get(b, c.UintOr("n_routed_experts", 0));
  hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", 0));
  hp.moe_intermediate_size = Get(b, c.UintOr("moe_intermediate_size", 0));
  const bool mtp_stated = c.Has("num_nextn_predict_layers");
  const uint64_t mtp = Get(b, c.UintOr("num_nextn_predict_layers", kDefaultMtpLayers));
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  // The list bounds the layer count before anything is sized by it.
  const auto flag = [](const nlohmann::json& v) {
    return v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1);
  };
  const nlohmann::json* sliding =
      CheckedList(b, c, "hybrid_layer_pattern", hp.num_layers, "0 or 1", flag);
  if (!b.failed() && sliding == nullptr) {
    b.Fail(MakeError("{}: field \"hybrid_layer_pattern\" is required", c.where()));
  }
  // An integer moe_layer_freq makes no layer sparse in MiMoV2FlashDecoderLayer.is_moe_layer.
  const auto freq = c.raw().find("moe_layer_freq");
  const nlohmann::json* moe_list =
      freq != c.raw().end() && freq->is_array()
          ? CheckedList(b, c, "moe_layer_freq", hp.num_layers, "0 or 1", flag)
          : nullptr;
  if (b.failed()) return b.Finish();
  const auto is_sliding = [&](uint64_t i) { return (*sliding)[i] == 1; };
  const auto is_moe = [&](uint64_t i) { return moe_list && (*moe_list)[i] == 1; };
  for (const MimoAttention* a : {&full, &swa}) {
    if (a->heads == 0 || a->kv_heads == 0 || a->head_dim == 0 || a->v_head_dim == 0) {
      return MakeError(
          "{}: attention heads, KV heads and head dims (swa_* included) must be "
          "positive",
          c.where());
    }
  }
  bool any_moe = false, any_sliding = false;
  for (uint64_t i = 0; i < hp.num_layers; ++i) {
    any_moe = any_moe || is_moe(i);
    any_sliding = any_sliding || is_sliding(i);
  }
  if (any_moe && (hp.num_experts == 0 || hp.moe_intermediate_size == 0)) {
    return MakeError(
        "{}: \"moe_layer_freq\" marks MoE layers but \"n_routed_experts\" or "
        "\"moe_intermediate_size\" is missing or zero",
        c.where());
  }
  if ((any_sliding || mtp > 0) && window == 0) {
    return MakeError("{}: sliding-window layers need \"sliding_window_size\"", c.where());
  }
  hp.v_head_dim = full.v_head_dim;
  hp.sliding_window = window;
  hp.num_mtp_layers = mtp;
  const uint64_t h = hp.hidden_size;

  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    const bool swa_layer = is_sliding(i), moe = is_moe(i);
    const MimoAttention& a = swa_layer ? swa : full;
    b.RmsNorm(l + ".input_layernorm", h);
    MimoV2FlashAttention(b, q, l, a, bias);
    b.RmsNorm(l + ".post_attention_layernorm", h);
    if (moe) {
      b.Param(l + ".mlp.gate.weight", {hp.num_experts, h});
      b.Buffer(l + ".mlp.gate.e_score_correction_bias", {hp.num_experts}, Dtype::kF32, true);
      RepeatedModules(b, q, l + ".mlp.experts", hp.num_experts, [&](const std::string& x) {
        QGatedMlp(b, q, x, h, hp.moe_intermediate_size);
      });
    } else {
      QGatedMlp(b, q, l + ".mlp", h, hp.intermediate_size);
    }
    LayerInfo info{.num_heads = a.heads,
                   .num_kv_heads = a.kv_heads,
                   .head_dim_k = a.head_dim,
                   .head_dim_v = a.v_head_dim,
                   .moe = moe,
                   .intermediate_size = moe ? 0 : hp.intermediate_size};
    if (swa_layer) {
      info.attention = AttentionKind::kSliding;
      info.window_tokens = window;
    }
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.norm", h);
  TaskHead(b, c, o, "model.embed_tokens");
  const size_t mtp_begin = m.tensors.size();
  for (uint64_t k = 0; k < mtp && !b.failed(); ++k) {
    const std::string l = Layer("model.mtp.layers", k);
    b.RmsNorm(l + ".enorm", h);
    b.RmsNorm(l + ".hnorm", h);
    b.Linear(l + ".eh_proj", MulDims(b, h, 2, "2 x hidden_size"), h, false);
    b.RmsNorm(l + ".input_layernorm", h);
    MimoV2FlashAttention(b, q, l, swa, bias);
    b.RmsNorm(l + ".pre_mlp_layernorm", h);
    QGatedMlp(b, q, l + ".mlp", h, hp.intermediate_size);
    b.RmsNorm(l + ".final_layernorm", h);
  }
  if (mtp > 0 && !b.failed()) {
    const uint64_t bytes = MarkStoredOnly(m, mtp_begin);
    m.notes.push_back(fmt::format(
        "{} multi-token-prediction layer(s) (model.mtp.layers.*, {} bytes) are stored in the "
        "checkpoint but not loaded by the main model (vLLM skips \"mtp\")",
        mtp, bytes));
    if (!mtp_stated) {
      m.assumptions.push_back(fmt::format(
          "{} MTP layers assumed (the config names none; the MiMo-V2-Flash model card: \"3-layer "
          "MTP weights\")",
          mtp));
    }
  }
  m.assumptions.push_back(
      "the MoE router (mlp.gate.weight) and attention_sink_bias are assumed stored in the model "
      "dtype, e_score_correction_bias in float32 and the MTP eh_proj unquantized (the config "
      "names no unquantized modules; vLLM builds eh_proj as a plain nn.Linear)");
  NoteQuantization(b, q);
  m.no_split_patterns = {"model.layers.*", "model.mtp.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
