// The per-layer lists of the hybrid DecoderSpec rows (decoder_layer_kinds.h). Sources:
//   attn_type_list                 MiniMax-M1 remote code modeling_minimax_m1.py (MiniMaxM1Model)
//   layer_types (linear/full)      transformers models/minimax/modular_minimax.py (MiniMaxConfig)
//   num_attention_heads_per_layer  transformers models/laguna/modular_laguna.py (LagunaConfig),
//   mlp_layer_types, gating        vLLM models/laguna.py (LagunaAttention: "gating",
//   swa_attention_sink_enabled     "swa_attention_sink_enabled")
// and the recurrent mixers: MiniMaxLightningAttention (transformers modular_minimax.py),
// MiniMaxM1LightningAttention (modeling_minimax_m1.py), OlmoHybridGatedDeltaNet (transformers
// models/olmo_hybrid/modular_olmo_hybrid.py).

#include "model/arch/decoder_layer_kinds.h"

#include <string>

#include "memfit/checked_math.h"
#include "model/arch/decoder_kit.h"

namespace memfit::arch {
namespace {

bool IsString(const nlohmann::json& v, const char* a, const char* b) {
  return v.is_string() && (v.get<std::string>() == a || v.get<std::string>() == b);
}

}  // namespace

// OlmoHybridConfig.__post_init__ defaults.
void LayerKinds::ReadDeltaNet(ModelBuilder& b, const HfConfig& c) {
  const auto& hp = b.model().hp;
  delta_net_ = true;
  delta_types_ = CheckedList(
      b, c, "layer_types", layers_, "\"linear_attention\" or \"full_attention\"",
      [](const nlohmann::json& v) { return IsString(v, "linear_attention", "full_attention"); });
  nk = Get(b, c.UintOr("linear_num_key_heads", hp.num_attention_heads));
  nv = Get(b, c.UintOr("linear_num_value_heads", hp.num_attention_heads));
  if (b.failed()) return;
  if (nk == 0 || nv == 0) {
    b.Fail(
        MakeError("{}: \"linear_num_key_heads\" and \"linear_num_value_heads\" must not be "
                  "zero",
                  c.where()));
    return;
  }
  // int(0.75 * hidden_size / linear_num_key_heads), in integers: floor(3 H / (4 nk)).
  dk =
      Get(b, c.UintOr("linear_key_head_dim", MulDims(b, 3, hp.hidden_size, "3 x hidden") / 4 / nk));
  dv = Get(b, c.UintOr("linear_value_head_dim", MulDims(b, 2, dk, "2 x linear_key_head_dim")));
  conv_kernel = Get(b, c.UintOr("linear_conv_kernel_dim", 4));
  if (!b.failed() && (dk == 0 || dv == 0 || conv_kernel == 0)) {
    b.Fail(
        MakeError("{}: the linear attention head dims and \"linear_conv_kernel_dim\" must not "
                  "be zero",
                  c.where()));
  }
}

void LayerKinds::Read(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s) {
  const auto& hp = b.model().hp;
  const uint64_t layers = hp.num_layers;
  layers_ = layers;
  lightning_kind_ = s.lightning;
  default_heads_ = hp.num_attention_heads;
  rotary_dim =
      s.rotary_dim_key.empty() ? hp.head_dim : Get(b, c.UintOr(s.rotary_dim_key, hp.head_dim));
  if (s.rotary_factor > 0) rotary_dim = RotaryDim(b, c, hp.head_dim, s.rotary_factor);
  if (!b.failed() && rotary_dim > hp.head_dim) {
    b.Fail(MakeError("{}: \"{}\" = {} exceeds head_dim {}", c.where(), s.rotary_dim_key, rotary_dim,
                     hp.head_dim));
  }
  if (s.lightning == Lightning::kMiniMaxM1) {
    shared_m1 = Get(b, c.UintOr("shared_intermediate_size", 0));
    lightning_ = CheckedList(b, c, "attn_type_list", layers, "0 (lightning) or 1 (softmax)",
                             [](const nlohmann::json& v) {
                               return v.is_number_integer() &&
                                      (v.get<int64_t>() == 0 || v.get<int64_t>() == 1);
                             });
    if (!b.failed() && lightning_ == nullptr) {
      b.Fail(MakeError("{}: field \"attn_type_list\" is required", c.where()));
    }
  } else if (s.lightning == Lightning::kMiniMax) {
    block_size = Get(b, c.UintOr("block_size", 256));
    lightning_ = CheckedList(
        b, c, "layer_types", layers, "\"linear_attention\" or \"full_attention\"",
        [](const nlohmann::json& v) { return IsString(v, "linear_attention", "full_attention"); });
  }
  if (!s.heads_per_layer_key.empty()) {
    const uint64_t kv = hp.num_kv_heads;
    heads_ = CheckedList(b, c, s.heads_per_layer_key, layers,
                         "a positive multiple of num_key_value_heads", [kv](const auto& v) {
                           return v.is_number_integer() && v.template get<int64_t>() > 0 &&
                                  v.template get<uint64_t>() <= kMaxConfigDimension && kv > 0 &&
                                  v.template get<uint64_t>() % kv == 0;
                         });
  }
  if (s.moe == MoeLayout::kLaguna) {
    mlp_types_ =
        CheckedList(b, c, "mlp_layer_types", layers, "\"dense\" or \"sparse\"",
                    [](const nlohmann::json& v) { return IsString(v, "dense", "sparse"); });
  }
  if (s.delta_net == DeltaNet::kOlmoHybrid) ReadDeltaNet(b, c);
  if (s.attn_gate == AttnGate::kLaguna && !b.failed()) {
    // LagunaAttention (transformers) always builds a per-head g_proj; vLLM reads "gating":
    // true / "per-head" one gate per head, "per-element" one per channel, false none.
    const auto it = c.raw().find("gating");
    gate_per_head = 1;
    if (it != c.raw().end() && !it->is_null()) {
      if (it->is_boolean()) {
        gate_per_head = it->get<bool>() ? 1 : 0;
      } else if (IsString(*it, "per-head", "per-element")) {
        gate_per_head = it->get<std::string>() == "per-head" ? 1 : hp.head_dim;
      } else {
        b.Fail(MakeError("{}: \"gating\" must be true, false, \"per-head\" or \"per-element\"",
                         c.where()));
      }
    }
    sinks = Get(b, c.BoolOr("swa_attention_sink_enabled", false));
  }
}

bool LayerKinds::IsLightning(uint64_t i) const {
  if (lightning_kind_ == Lightning::kNone) return false;
  if (lightning_ == nullptr) return i % 2 == 1;  // MiniMaxConfig: full when (i + 1) % 2
  const auto& v = (*lightning_)[i];
  return lightning_kind_ == Lightning::kMiniMaxM1 ? v.get<int64_t>() == 0
                                                  : v.get<std::string>() == "linear_attention";
}

bool LayerKinds::IsDeltaNet(uint64_t i) const {
  if (!delta_net_) return false;
  if (delta_types_ != nullptr) return (*delta_types_)[i].get<std::string>() == "linear_attention";
  // OlmoHybridConfig: every 4th layer full; with fewer than 4 layers the last one.
  return i % 4 != 3 && !(layers_ < 4 && i + 1 == layers_);
}

uint64_t LayerKinds::Heads(uint64_t i) const {
  return heads_ == nullptr ? default_heads_ : (*heads_)[i].get<uint64_t>();
}

bool LayerKinds::Sparse(uint64_t i) const {
  // LagunaConfig: without "mlp_layer_types" the first layer is dense, the rest sparse.
  return mlp_types_ == nullptr ? i > 0 : (*mlp_types_)[i].get<std::string>() == "sparse";
}

LayerInfo EmitLightning(ModelBuilder& b, const Quantization& q, const std::string& l,
                        Lightning kind, const LayerKinds& k) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size, n = hp.num_attention_heads, hd = hp.head_dim;
  const uint64_t w = MulDims(b, n, hd, "num_attention_heads x head_dim");
  const uint64_t qkv = MulDims(b, 3, w, "3 x heads x head_dim");
  const std::string a = l + ".self_attn.";
  if (kind == Lightning::kMiniMaxM1) {  // MiniMaxM1LightningAttention
    QLinear(b, q, a + "out_proj", w, h, false);
    b.RmsNorm(a + "norm", w);
    QLinear(b, q, a + "qkv_proj", h, qkv, false);
    QLinear(b, q, a + "output_gate", h, w, false);
  } else {  // MiniMaxLightningAttention
    b.RmsNorm(a + "norm", w);
    QLinear(b, q, a + "qkv_proj", h, qkv, false);
    QLinear(b, q, a + "out_proj", w, h, false);
    QLinear(b, q, a + "output_gate", h, w, false);
    // register_buffer (persistent), computed under the default dtype that from_pretrained sets
    // to the model's.
    const uint64_t block = k.block_size;
    b.Buffer(a + "slope_rate", {n, 1, 1}, b.dtype(), true);
    b.Buffer(a + "query_decay", {n, block, 1}, b.dtype(), true);
    b.Buffer(a + "key_decay", {n, block, 1}, b.dtype(), true);
    b.Buffer(a + "diagonal_decay", {1, n, block, block}, b.dtype(), true);
  }
  LayerInfo info{.attention = AttentionKind::kNone,
                 .mixer = LayerMixer::kLinearAttention,
                 .num_heads = n,
                 .head_dim_k = hd,
                 .head_dim_v = hd,
                 .recurrent = true};
  info.state.heads = n;
  info.state.elements_per_head = MulDims(b, hd, hd, "head_dim x head_dim");
  return info;
}

LayerInfo EmitDeltaNet(ModelBuilder& b, const Quantization& q, const std::string& l,
                       const LayerKinds& k) {
  const uint64_t h = b.model().hp.hidden_size;
  const std::string a = l + ".linear_attn.";
  const uint64_t key = MulDims(b, k.nk, k.dk, "linear key heads x dim");
  const uint64_t value = MulDims(b, k.nv, k.dv, "linear value heads x dim");
  const auto conv = CheckedAdd(MulDims(b, 2, key, "2 x key dim"), value);
  if (!conv) {
    b.Fail(MakeError("config.json: the linear attention conv width overflows"));
    return {};
  }
  QLinear(b, q, a + "q_proj", h, key, false);
  QLinear(b, q, a + "k_proj", h, key, false);
  QLinear(b, q, a + "v_proj", h, value, false);
  QLinear(b, q, a + "a_proj", h, k.nv, false);
  QLinear(b, q, a + "b_proj", h, k.nv, false);
  QLinear(b, q, a + "g_proj", h, value, false);
  QLinear(b, q, a + "o_proj", value, h, false);
  b.Conv(a + "conv1d", *conv, *conv, {k.conv_kernel}, false, *conv);
  b.Param(a + "A_log", {k.nv});
  b.Param(a + "dt_bias", {k.nv});
  b.RmsNorm(a + "o_norm", k.dv);
  LayerInfo info{
      .attention = AttentionKind::kNone, .mixer = LayerMixer::kGatedDeltaNet, .recurrent = true};
  info.state = {.conv_channels = *conv,
                .conv_kernel = k.conv_kernel,
                .heads = k.nv,
                .elements_per_head = MulDims(b, k.dk, k.dv, "linear key x value dim"),
                .state_bits = 0};
  return info;
}

void PerLayerTypeRotary(ModelBuilder& b, const HfConfig& c, uint64_t head_dim) {
  // LagunaConfig.__post_init__: no "layer_types" -> all full; no "rope_parameters" -> full 0.5,
  // sliding 1.0.
  bool full = true, sliding = false;
  if (const auto it = c.raw().find("layer_types"); it != c.raw().end() && it->is_array()) {
    full = false;
    for (const auto& v : *it) {  // checked by the sliding rule (strings, one per layer)
      if (!v.is_string()) continue;
      full = full || v.get<std::string>() != "sliding_attention";
      sliding = sliding || v.get<std::string>() == "sliding_attention";
    }
  }
  // Nested per layer type (transformers v5); a flat dict (older configs, as vLLM reads them)
  // gives one factor to both types.
  const auto rope = c.raw().find("rope_parameters");
  const bool object = rope != c.raw().end() && rope->is_object();
  bool nested = false;
  for (const char* type : {"full_attention", "sliding_attention"}) {
    nested = nested || (object && rope->contains(type));
  }
  for (const char* type : {"full_attention", "sliding_attention"}) {
    if (std::string(type) == "full_attention" ? !full : !sliding) continue;
    double factor = std::string(type) == "full_attention" ? 0.5 : 1.0;
    if (object && !nested) {
      const auto f = rope->find("partial_rotary_factor");
      factor = f != rope->end() && f->is_number() ? f->get<double>() : 1.0;
    } else if (nested) {
      const auto t = rope->find(type);
      if (t == rope->end() || !t->is_object()) {
        b.Fail(MakeError("{}: \"rope_parameters\" has no \"{}\" entry", c.where(), type));
        return;
      }
      const auto f = t->find("partial_rotary_factor");
      factor = f != t->end() && f->is_number() ? f->get<double>() : 1.0;
    }
    if (!(factor > 0.0 && factor <= 1.0)) {
      b.Fail(MakeError("{}: \"rope_parameters\".{}.partial_rotary_factor must be in (0, 1]",
                       c.where(), type));
      return;
    }
    const uint64_t dim = static_cast<uint64_t>(static_cast<double>(head_dim) * factor);
    b.Buffer(std::string("model.rotary_emb.") + type + "_inv_freq", {dim / 2}, Dtype::kF32, false);
    b.Buffer(std::string("model.rotary_emb.") + type + "_original_inv_freq", {dim / 2}, Dtype::kF32,
             false);
  }
}

std::unordered_set<uint64_t> MlpOnlyLayers(ModelBuilder& b, const HfConfig& c) {
  std::unordered_set<uint64_t> out;
  const auto it = c.raw().find("mlp_only_layers");
  if (it == c.raw().end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0) {
      b.Fail(MakeError("{}: \"mlp_only_layers\" must hold layer indices", c.where()));
      break;
    }
    out.insert(static_cast<uint64_t>(v.get<int64_t>()));
  }
  return out;
}

}  // namespace memfit::arch
