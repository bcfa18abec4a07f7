// Gemma 3n's audio encoder (transformers models/gemma3n/modeling_gemma3n.py Gemma3nAudioEncoder,
// the Universal Speech Model conformer; configuration_gemma3n.py Gemma3nAudioConfig): two
// subsampling convolutions with cumulative group norms and input_proj_linear [H, C_1 x F] (F:
// input_feat_size after both frequency strides, padding 1 + 1 each), then conformer.N blocks
// (ffw_layer_start, attention, lconv1d, ffw_layer_end, norm). Every linear is unbiased, every
// norm a Gemma3nRMSNorm with a weight. Non-persistent buffers: the gradient_clipping scalars, the
// attention's q_scale, softcap and local_causal_valid_mask (bool [chunk, chunk + max(0, left - 1)
// + right]), the position embedding's inv_timescales (float32 [1, 1, H / 2]).

#include <fmt/format.h>

#include <vector>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/gemma3n_family.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

// `key` as `count` non-negative integers, nested lists flattened ([[3, 3], [3, 3]] -> 3, 3, 3,
// 3); `fallback` when absent (named in `defaulted`). Errors are recorded in `b`.
std::vector<uint64_t> FlatList(ModelBuilder& b, const HfConfig& c, const char* key,
                               std::vector<uint64_t> fallback, std::string& defaulted) {
  const size_t count = fallback.size();
  auto it = c.raw().find(key);
  if (it == c.raw().end() || it->is_null()) {
    defaulted +=
        fmt::format("{}{} = {}", defaulted.empty() ? "" : ", ", key, fmt::join(fallback, "/"));
    return fallback;
  }
  std::vector<uint64_t> out;
  bool valid = it->is_array();
  // Parsed files give unsigned numbers; JSON built in code may hold signed ones.
  const auto take = [&](const nlohmann::json& v) {
    valid = valid && v.is_number_integer() && (v.is_number_unsigned() || v.get<int64_t>() >= 0) &&
            v.get<uint64_t>() <= kMaxConfigDimension;
    if (valid) out.push_back(v.get<uint64_t>());
  };
  if (valid) {
    for (const auto& item : *it) {
      if (item.is_array()) {
        for (const auto& inner : item) take(inner);
      } else {
        take(item);
      }
    }
  }
  if (!valid || out.size() != count) {
    b.Fail(
        MakeError("{}: \"{}\" must hold {} non-negative integers (as Gemma3nAudioConfig's "
                  "default {})",
                  c.where(), key, count, fmt::join(fallback, "/")));
    return fallback;
  }
  return out;
}

void FeedForward(ModelBuilder& b, const Quantization& q, const std::string& p, uint64_t h) {
  b.RmsNorm(p + ".pre_layer_norm", h);
  QLinear(b, q, p + ".ffw_layer_1", h, MulDims(b, 4, h, "4 x audio hidden_size"), false);
  QLinear(b, q, p + ".ffw_layer_2", MulDims(b, 4, h, "4 x audio hidden_size"), h, false);
  b.RmsNorm(p + ".post_layer_norm", h);
  b.Buffer(p + ".gradient_clipping", {}, b.dtype(), false);
}

}  // namespace

uint64_t DefaultedUint(ModelBuilder& b, const HfConfig& c, const char* key, uint64_t fallback,
                       std::string& defaulted) {
  if (!c.Has(key)) {
    defaulted += fmt::format("{}{} = {}", defaulted.empty() ? "" : ", ", key, fallback);
  }
  return Get(b, c.UintOr(key, fallback));
}

void EmitGemma3nAudioEncoder(ModelBuilder& b, const Quantization& q, const HfConfig& audio,
                             const std::string& prefix, std::string& defaulted) {
  // Gemma3nAudioConfig's defaults (configuration_gemma3n.py).
  const uint64_t h = DefaultedUint(b, audio, "hidden_size", 1536, defaulted);
  const uint64_t heads = DefaultedUint(b, audio, "conf_num_attention_heads", 8, defaulted);
  const uint64_t layers = DefaultedUint(b, audio, "conf_num_hidden_layers", 12, defaulted);
  const uint64_t kernel = DefaultedUint(b, audio, "conf_conv_kernel_size", 5, defaulted);
  const uint64_t feat = DefaultedUint(b, audio, "input_feat_size", 128, defaulted);
  const uint64_t chunk = DefaultedUint(b, audio, "conf_attention_chunk_size", 12, defaulted);
  const uint64_t left = DefaultedUint(b, audio, "conf_attention_context_left", 13, defaulted);
  const uint64_t right = DefaultedUint(b, audio, "conf_attention_context_right", 0, defaulted);
  const auto channels = FlatList(b, audio, "sscp_conv_channel_size", {128, 32}, defaulted);
  const auto kernels = FlatList(b, audio, "sscp_conv_kernel_size", {3, 3, 3, 3}, defaulted);
  const auto strides = FlatList(b, audio, "sscp_conv_stride_size", {2, 2, 2, 2}, defaulted);
  if (b.failed()) return;
  if (heads == 0 || h % heads != 0 || h % 2 != 0) {
    b.Fail(
        MakeError("{}: audio \"hidden_size\" = {} must be even and divisible by "
                  "\"conf_num_attention_heads\" = {}",
                  audio.where(), h, heads));
    return;
  }
  const uint64_t head_dim = h / heads;
  // Subsampling convolutions over (time, frequency); only the frequency extent shapes weights.
  uint64_t freq = feat;
  const std::string s = prefix + ".subsample_conv_projection";
  for (size_t i = 0; i < 2; ++i) {
    const uint64_t kh = kernels[2 * i], kw = kernels[2 * i + 1], sw = strides[2 * i + 1];
    if (kw == 0 || sw == 0 || freq + 2 < kw) {
      b.Fail(
          MakeError("{}: sscp convolution {} (kernel {}x{}, stride {}) does not fit {} "
                    "frequency bins",
                    audio.where(), i, kh, kw, sw, freq));
      return;
    }
    freq = (freq + 2 - kw) / sw + 1;
    const std::string conv = s + ".conv_" + std::to_string(i);
    b.Conv(conv + ".conv", i == 0 ? 1 : channels[0], channels[i], {kh, kw}, false);
    b.RmsNorm(conv + ".norm", channels[i]);
  }
  QLinear(b, q, s + ".input_proj_linear", MulDims(b, channels[1], freq, "sscp channels x bins"), h,
          false);
  const uint64_t context = chunk + (left > 0 ? left - 1 : 0) + right;
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    const std::string l = Layer(prefix + ".conformer", i);
    FeedForward(b, q, l + ".ffw_layer_start", h);
    const std::string a = l + ".attention";
    b.Buffer(a + ".gradient_clipping", {}, b.dtype(), false);
    b.RmsNorm(a + ".pre_attn_norm", h);
    b.Param(a + ".attn.per_dim_scale", {head_dim});
    QLinear(b, q, a + ".attn.relative_position_embedding.pos_proj", h, h, false);
    b.Buffer(a + ".attn.relative_position_embedding.inv_timescales", {1, 1, h / 2}, Dtype::kF32,
             false);
    for (const char* proj : {".attn.q_proj", ".attn.k_proj", ".attn.v_proj"}) {
      QLinear(b, q, a + proj, h, h, false);
    }
    b.Buffer(a + ".attn.q_scale", {}, b.dtype(), false);
    b.Buffer(a + ".attn.local_causal_valid_mask", {chunk, context}, Dtype::kBool, false);
    b.Buffer(a + ".attn.softcap", {}, Dtype::kF32, false);
    QLinear(b, q, a + ".post", h, h, false);
    b.RmsNorm(a + ".post_norm", h);
    const std::string c = l + ".lconv1d";
    b.RmsNorm(c + ".pre_layer_norm", h);
    QLinear(b, q, c + ".linear_start", h, MulDims(b, 2, h, "2 x audio hidden_size"), false);
    b.Conv(c + ".depthwise_conv1d", h, h, {kernel}, false, h);
    b.Buffer(c + ".gradient_clipping", {}, b.dtype(), false);
    b.RmsNorm(c + ".conv_norm", h);
    QLinear(b, q, c + ".linear_end", h, h, false);
    FeedForward(b, q, l + ".ffw_layer_end", h);
    b.Buffer(l + ".gradient_clipping", {}, b.dtype(), false);
    b.RmsNorm(l + ".norm", h);
  }
}

}  // namespace memfit::arch
