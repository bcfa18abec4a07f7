// The Mamba-2 mixer (BambaMixer) shared by bamba, granitemoehybrid and falcon_h1; see
// mamba2_mixer.h.

#include "model/arch/mamba2_mixer.h"
#include "formats/hf_config_json.h"

namespace memfit::arch {

Mamba2Dims ReadMamba2(ModelBuilder& b, const HfConfig& c) {
  Mamba2Dims d;
  d.heads = Get(b, c.UintOr("mamba_n_heads", 128));
  d.groups = Get(b, c.UintOr("mamba_n_groups", 1));
  d.d_state = Get(b, c.UintOr("mamba_d_state", 256));
  d.kernel = Get(b, c.UintOr("mamba_d_conv", 4));
  d.expand = Get(b, c.UintOr("mamba_expand", 2));
  d.conv_bias = Get(b, c.BoolOr("mamba_conv_bias", true));
  d.proj_bias = Get(b, c.BoolOr("mamba_proj_bias", false));
  d.out_bias = d.proj_bias;
  return d;
}

Status ResolveMamba2(ModelBuilder& b, const HfConfig& c, uint64_t h, Mamba2Dims& d) {
  if (d.heads == 0 || d.groups == 0 || d.d_state == 0 || d.kernel == 0) {
    return MakeError("{}: \"mamba_n_heads\", \"mamba_n_groups\", \"mamba_d_state\" and "
                     "\"mamba_d_conv\" must be positive", c.where());
  }
  d.d_inner = d.d_ssm > 0 ? d.d_ssm : MulDims(b, d.expand, h, "mamba_expand x hidden_size");
  // mamba_d_head "auto" (or absent): d_inner / mamba_n_heads, which must divide.
  d.head_dim = 0;
  auto head = c.raw().find("mamba_d_head");
  // A number parsed from JSON text is unsigned when non-negative; one set in code is signed.
  if (head != c.raw().end() && head->is_number_integer()) {
    if (head->get<int64_t>() <= 0) {
      return MakeError("{}: \"mamba_d_head\" must be positive or \"auto\"", c.where());
    }
    d.head_dim = static_cast<uint64_t>(head->get<int64_t>());
  } else if (d.d_inner % d.heads == 0) {
    d.head_dim = d.d_inner / d.heads;
  }
  if (!b.failed() && (d.head_dim == 0 || MulDims(b, d.heads, d.head_dim, "mamba heads") != d.d_inner)) {
    return MakeError("{}: \"mamba_n_heads\" x \"mamba_d_head\" must equal the Mamba inner size "
                     "({}) = {}", c.where(),
                     d.d_ssm > 0 ? "\"mamba_d_ssm\"" : "\"mamba_expand\" x \"hidden_size\"",
                     d.d_inner);
  }
  const uint64_t bc = MulDims(b, 2 * d.groups, d.d_state, "2 x mamba_n_groups x mamba_d_state");
  if (!b.failed() && (d.d_inner > kMaxModelElements || bc > kMaxModelElements)) {
    return MakeError("{}: Mamba dimensions are absurd", c.where());
  }
  d.conv = d.d_inner + bc;
  auto& hp = b.model().hp;
  hp.ssm_conv_kernel = d.kernel;
  hp.ssm_inner_size = d.d_inner;
  hp.ssm_state_size = d.d_state;
  hp.ssm_group_count = d.groups;
  // The SSD chunk of transformers' torch_forward scan: BambaConfig / GraniteMoeHybridConfig
  // "mamba_chunk_size", default 256 in both classes (a builder that read it already, falcon_h1,
  // keeps its own value and assumption line).
  if (hp.ssm_chunk_size == 0) {
    hp.ssm_chunk_size = Get(b, c.UintOr("mamba_chunk_size", 256));
    if (!b.failed() && hp.ssm_chunk_size == 0) {
      return MakeError("{}: \"mamba_chunk_size\" must be positive", c.where());
    }
    if (!c.Has("mamba_chunk_size")) {
      b.model().assumptions.push_back(
          "no \"mamba_chunk_size\": the config class's default 256 (Mamba-2 scan chunk)");
    }
  }
  return Ok{};
}

LayerInfo EmitMamba2(ModelBuilder& b, const Quantization& q, const std::string& x, uint64_t h,
                     const Mamba2Dims& d) {
  QLinear(b, q, x + ".in_proj", h, d.d_inner + d.conv + d.heads, d.proj_bias);
  b.Conv(x + ".conv1d", d.conv, d.conv, {d.kernel}, d.conv_bias, d.conv);
  b.Param(x + ".dt_bias", {d.heads});
  b.Param(x + ".A_log", {d.heads});
  b.Param(x + ".D", {d.heads});
  if (d.gated_norm) b.RmsNorm(x + ".norm", d.d_inner);
  QLinear(b, q, x + ".out_proj", d.d_inner, h, d.out_bias);
  LayerInfo info;
  info.attention = AttentionKind::kNone;
  info.mixer = LayerMixer::kMamba2;
  info.recurrent = true;
  info.state.conv_channels = d.conv;
  info.state.conv_kernel = d.kernel;
  info.state.heads = d.heads;
  info.state.elements_per_head = MulDims(b, d.head_dim, d.d_state, "mamba_d_head x mamba_d_state");
  return info;
}

}  // namespace memfit::arch
