// The Mamba-1 mixer shared by mamba, falcon_mamba and jamba; see mamba1_mixer.h.

#include "model/arch/mamba1_mixer.h"
#include "formats/hf_config_json.h"

namespace memfit::arch {

uint64_t ReadTimeStepRank(ModelBuilder& b, const HfConfig& c, std::string_view key, uint64_t h) {
  const auto it = c.raw().find(std::string(key));
  if (it == c.raw().end() || it->is_null() || (it->is_string() && it->get<std::string>() == "auto")) {
    return (h + 15) / 16;  // math.ceil(hidden_size / 16)
  }
  return Get(b, c.Uint(key));
}

Status ResolveMamba1(ModelBuilder& b, const HfConfig& c, const Mamba1Dims& d,
                     std::string_view keys) {
  if (b.failed()) return Ok{};
  if (d.d_inner == 0 || d.d_state == 0 || d.kernel == 0 || d.dt_rank == 0) {
    return MakeError("{}: {} must be positive", c.where(), keys);
  }
  if (d.d_inner > kMaxConfigDimension || d.d_state > kMaxConfigDimension ||
      d.dt_rank > kMaxConfigDimension || d.kernel > kMaxConfigDimension) {
    return MakeError("{}: {} are absurd", c.where(), keys);
  }
  auto& hp = b.model().hp;
  hp.ssm_conv_kernel = d.kernel;
  hp.ssm_inner_size = d.d_inner;
  hp.ssm_state_size = d.d_state;
  return Ok{};
}

LayerInfo EmitMamba1(ModelBuilder& b, const Quantization& q, const std::string& x, uint64_t h,
                     const Mamba1Dims& d) {
  b.Conv(x + ".conv1d", d.d_inner, d.d_inner, {d.kernel}, d.conv_bias, d.d_inner);
  QLinear(b, q, x + ".in_proj", h, MulDims(b, 2, d.d_inner, "2 x d_inner"), d.proj_bias);
  QLinear(b, q, x + ".x_proj", d.d_inner, d.dt_rank + 2 * d.d_state, false);
  QLinear(b, q, x + ".dt_proj", d.dt_rank, d.d_inner, true);
  b.Param(x + ".A_log", {d.d_inner, d.d_state});
  b.Param(x + ".D", {d.d_inner});
  QLinear(b, q, x + ".out_proj", d.d_inner, h, d.proj_bias);
  if (d.norms == Mamba1Norms::kFalconBuffers) {
    b.Buffer(x + ".b_c_rms", {d.d_state}, b.dtype(), false);
    b.Buffer(x + ".dt_rms", {d.d_inner}, b.dtype(), false);
  } else if (d.norms == Mamba1Norms::kJamba) {
    b.RmsNorm(x + ".dt_layernorm", d.dt_rank);
    b.RmsNorm(x + ".b_layernorm", d.d_state);
    b.RmsNorm(x + ".c_layernorm", d.d_state);
  }
  LayerInfo info;
  info.attention = AttentionKind::kNone;
  info.mixer = LayerMixer::kMamba;
  info.recurrent = true;
  info.state.conv_channels = d.d_inner;
  info.state.conv_kernel = d.kernel;
  info.state.heads = d.d_inner;  // one state row per channel: splits under TP like the channels
  info.state.elements_per_head = d.d_state;
  return info;
}

}  // namespace memfit::arch
