// MiMo-V2-Flash (MiMoV2FlashForCausalLM): layers of sliding-window (with the swa_* head counts
// and dims) or global attention by "hybrid_layer_pattern", K and V of different head dims, an
// optional attention_sink_bias [heads] per kind, o_proj never biased; dense MLPs or routed experts
// (router mlp.gate.weight with a float32 e_score_correction_bias, no shared experts) by the
// per-layer "moe_layer_freq"; untied lm_head; the MTP layers model.mtp.layers.K (enorm, hnorm,
// eh_proj [H, 2H], a sliding attention layer with pre_mlp_layernorm and a dense MLP,
// final_layernorm) stored, not loaded. Sources: vLLM models/mimo_v2_flash.py (its loader skips
// "mtp") and mimo_v2_flash_mtp.py (the checkpoint's names); the model card
// (XiaomiMiMo/MiMo-V2-Flash: "309B total parameters", "3-layer MTP weights").
// MiMo-V2.5/V2.6 (mimo_v2, MiMoV2ForCausalLM; vLLM models/mimo_v2.py) is the same model as its
// releases store it (MimoStorage): one fused qkv_proj when "attention_projection_layout" is
// "fused_qkv", its FP8 scale grid per tensor-parallel shard; the router in "moe_router_dtype";
// MXFP4 experts when quantization_config's "store_dtype" is "mxfp4"; the MTP o_proj unquantized.

#include "formats/hf_config_json.h"
#include "memfit/checked_math.h"
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

// How a mimo_v2 release stores what MiMo-V2-Flash's layout says (mimo_v2_flash: the defaults).
struct MimoStorage {
  bool fused_qkv = false;  // "attention_projection_layout": "fused_qkv" (class default "split")
  // The checkpoint's tensor-parallel shards: each shard's slice of a fused FP8 qkv_proj starts a
  // new 128-row scale block. The index's metadata.tp_size, not in config.json; both releases
  // checked (V2.5-Pro: 8, V2.6-Flash: 4) have one shard per global-attention KV head.
  uint64_t qkv_shards = 1;
  std::optional<Dtype> router;    // "moe_router_dtype" (vLLM's default float32); none: model dtype
  bool mxfp4_experts = false;     // quantization_config "store_dtype": "mxfp4"
  bool plain_mtp_o_proj = false;  // vLLM MiMoV2Attention: no quant_config for "mtp.layers" o_proj
};

// A fused qkv_proj [rows, hidden]; under block FP8 its weight_scale_inv has, per shard, the
// shard's rows / 128 rounded up (vLLM mimo_v2.py _shard_fp8_qkv_proj reads it so).
void FusedQkv(ModelBuilder& b, const Quantization& q, const std::string& m, uint64_t rows,
              uint64_t shards, bool bias) {
  const uint64_t h = b.model().hp.hidden_size;
  if (q.method != QuantMethod::kFp8Block || SkipsModule(q, m)) {
    QLinear(b, q, m, h, rows, bias);
    return;
  }
  if (rows % shards != 0) {
    b.Fail(MakeError("{}: {} = {} rows do not split into \"num_key_value_heads\" = {} shards",
                     b.where(), m, rows, shards));
    return;
  }
  b.ParamAs(m + ".weight", {rows, h}, Dtype::kF8E4M3);
  b.Packed(m + ".weight_scale_inv",
           {shards * CeilDivOrZero(rows / shards, q.block_out), CeilDivOrZero(h, q.block_in)},
           Dtype::kF32, 0);
  if (bias) b.Param(m + ".bias", {rows});
}

void MimoV2FlashAttention(ModelBuilder& b, const Quantization& q, const std::string& l,
                          const MimoAttention& a, bool bias, const MimoStorage& s, bool mtp) {
  const uint64_t h = b.model().hp.hidden_size;
  const std::string x = l + ".self_attn";
  const uint64_t q_width = MulDims(b, a.heads, a.head_dim, "heads x head_dim");
  const uint64_t o_width = MulDims(b, a.heads, a.v_head_dim, "heads x v_head_dim");
  const uint64_t k_width = MulDims(b, a.kv_heads, a.head_dim, "kv heads x head_dim");
  const uint64_t v_width = MulDims(b, a.kv_heads, a.v_head_dim, "kv heads x v_head_dim");
  if (s.fused_qkv) {
    const auto rows = CheckedAdd(q_width, k_width + v_width);  // each at most 2^40 x 2^40 / 2
    FusedQkv(b, q, x + ".qkv_proj", rows.value_or(0), s.qkv_shards, bias);
  } else {
    QLinear(b, q, x + ".q_proj", h, q_width, bias);
    QLinear(b, q, x + ".k_proj", h, k_width, bias);
    QLinear(b, q, x + ".v_proj", h, v_width, bias);
  }
  if (mtp && s.plain_mtp_o_proj) {
    b.Linear(x + ".o_proj", o_width, h, false);
  } else {
    QLinear(b, q, x + ".o_proj", o_width, h, false);
  }
  if (a.sink) b.Param(x + ".attention_sink_bias", {a.heads});
}

// An expert's projection as MiMo-V2.6 stores it ("store_dtype": "mxfp4"): E2M1 values two a byte,
// weight [out, in/2] uint8, and a UE8M0 weight_scale [out, in/32] uint8 per 32 inputs; checked
// against MiMo-V2.6-Pro-RL's and V2.6-Flash-RL's U8 header totals (mimo_v2_flash_test.cc).
void Mxfp4Linear(ModelBuilder& b, const std::string& m, uint64_t in, uint64_t out) {
  b.Packed(m + ".weight", {out, CeilDivOrZero(in, 2)}, Dtype::kU8, MulDims(b, out, in, m));
  b.Packed(m + ".weight_scale", {out, CeilDivOrZero(in, 32)}, Dtype::kU8, 0);
}

void MimoExperts(ModelBuilder& b, const Quantization& q, const std::string& l,
                 const MimoStorage& s) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size, width = hp.moe_intermediate_size;
  if (s.router) {
    b.ParamAs(l + ".mlp.gate.weight", {hp.num_experts, h}, *s.router);
  } else {
    b.Param(l + ".mlp.gate.weight", {hp.num_experts, h});
  }
  b.Buffer(l + ".mlp.gate.e_score_correction_bias", {hp.num_experts}, Dtype::kF32, true);
  RepeatedModules(b, q, l + ".mlp.experts", hp.num_experts, [&](const std::string& x) {
    if (!s.mxfp4_experts) {
      QGatedMlp(b, q, x, h, width);
      return;
    }
    Mxfp4Linear(b, x + ".gate_proj", h, width);
    Mxfp4Linear(b, x + ".up_proj", h, width);
    Mxfp4Linear(b, x + ".down_proj", width, h);
  });
}

// mimo_v2's storage keys (MimoStorage); `s` keeps its defaults for mimo_v2_flash.
void ReadMimoStorage(ModelBuilder& b, const HfConfig& c, const Quantization& q, MimoStorage& s) {
  const std::string layout = Get(b, c.StringOr("attention_projection_layout", "split"));
  if (!b.failed() && layout != "split" && layout != "fused_qkv") {
    b.Fail(
        MakeError("{}: field \"attention_projection_layout\" = \"{}\" is neither \"split\" nor "
                  "\"fused_qkv\"",
                  c.where(), layout));
  }
  s.fused_qkv = layout == "fused_qkv";
  s.qkv_shards = b.model().hp.num_kv_heads;
  const std::string router = Get(b, c.StringOr("moe_router_dtype", "float32"));
  if (b.failed()) return;
  auto router_dtype = ParseDtypeName(router);
  if (!router_dtype) {
    b.Fail(MakeError("{}: field \"moe_router_dtype\" = \"{}\" is not a dtype", c.where(), router));
    return;
  }
  s.router = *router_dtype;
  const nlohmann::json* qc = QuantizationConfigJson(c);
  if (q.method != QuantMethod::kNone && qc != nullptr) {
    const auto store = qc->find("store_dtype");
    s.mxfp4_experts = store != qc->end() && store->is_string() && *store == "mxfp4";
  }
  s.plain_mtp_o_proj = true;
}

// The MTP layers model.mtp.layers.K, stored, not loaded (vLLM's loaders skip "mtp").
struct MimoMtpLayer {
  MimoAttention swa;
  bool bias = false;
  MimoStorage storage;
};

void MimoMtp(ModelBuilder& b, const Quantization& q, const MimoMtpLayer& x, bool stated) {
  Model& m = b.model();
  const uint64_t h = m.hp.hidden_size, mtp = m.hp.num_mtp_layers;
  const size_t mtp_begin = m.tensors.size();
  for (uint64_t k = 0; k < mtp && !b.failed(); ++k) {
    const std::string l = Layer("model.mtp.layers", k);
    b.RmsNorm(l + ".enorm", h);
    b.RmsNorm(l + ".hnorm", h);
    b.Linear(l + ".eh_proj", MulDims(b, h, 2, "2 x hidden_size"), h, false);
    b.RmsNorm(l + ".input_layernorm", h);
    MimoV2FlashAttention(b, q, l, x.swa, x.bias, x.storage, /*mtp=*/true);
    b.RmsNorm(l + ".pre_mlp_layernorm", h);
    QGatedMlp(b, q, l + ".mlp", h, m.hp.intermediate_size);
    b.RmsNorm(l + ".final_layernorm", h);
  }
  if (mtp == 0 || b.failed()) return;
  const uint64_t bytes = MarkStoredOnly(m, mtp_begin);
  m.notes.push_back(fmt::format(
      "{} multi-token-prediction layer(s) (model.mtp.layers.*, {} bytes) are stored in the "
      "checkpoint but not loaded by the main model (vLLM skips \"mtp\")",
      mtp, bytes));
  if (!stated) {
    m.assumptions.push_back(fmt::format(
        "{} MTP layers assumed (the config names none; the MiMo-V2-Flash model card: \"3-layer "
        "MTP weights\")",
        mtp));
  }
}

// What mimo_v2's build assumes, and the multimodal releases' towers it does not build.
void MimoV2Notes(const HfConfig& c, Model& m, const MimoStorage& s) {
  if (s.fused_qkv) {
    m.assumptions.push_back(fmt::format(
        "the fused qkv_proj's FP8 scale grid assumes {} tensor-parallel shards (the index's "
        "metadata.tp_size; one per \"num_key_value_heads\", as MiMo-V2.5-Pro and V2.6 store it)",
        s.qkv_shards));
  }
  if (s.mxfp4_experts) {
    m.notes.push_back(
        "store_dtype mxfp4: routed experts stored as uint8 weight (two E2M1 values a byte) with a "
        "uint8 (UE8M0) weight_scale per 32 inputs; parameters are logical (out x in)");
  }
  if (c.Has("vision_config") || c.Has("audio_config")) {
    // MiMo-V2.6-Pro-RL's headers hold 1,033,761,792 bf16 elements beyond the text model.
    m.source =
        "config.json (text model built exactly; vision and audio towers not counted: "
        "approximate)";
    m.assumptions.insert(m.assumptions.begin(),
                         "approximate: the vision and audio towers (\"vision_config\", "
                         "\"audio_config\") are not counted: their tensor names and shapes were "
                         "not available (docs/architectures.md, mimo_v2)");
  }
}

}  // namespace

Result<Model> BuildMiMo(const HfConfig& c, const BuildOptions& o, bool v2) {
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
  MimoStorage storage;
  if (v2) ReadMimoStorage(b, c, q, storage);
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
    MimoV2FlashAttention(b, q, l, a, bias, storage, /*mtp=*/false);
    b.RmsNorm(l + ".post_attention_layernorm", h);
    if (moe) {
      MimoExperts(b, q, l, storage);
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
  MimoMtp(b, q, {.swa = swa, .bias = bias, .storage = storage}, mtp_stated);
  if (v2) {
    MimoV2Notes(c, m, storage);
  } else {
    m.assumptions.push_back(
        "the MoE router (mlp.gate.weight) and attention_sink_bias are assumed stored in the model "
        "dtype, e_score_correction_bias in float32 and the MTP eh_proj unquantized (the config "
        "names no unquantized modules; vLLM builds eh_proj as a plain nn.Linear)");
  }
  NoteQuantization(b, q);
  m.no_split_patterns = {"model.layers.*", "model.mtp.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
