// The skeleton every HybridSpec row is built by (hybrid_spec.h): the mixer kits, the layer rules,
// one layer loop, the tail.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "formats/hf_config_json.h"
#include "model/arch/config_defaults.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/hybrid_spec.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

// The hyperparameters of a model without attention heads.
void ReadSsmBasics(ModelBuilder& b, const HfConfig& c, const HybridSpec& s) {
  auto& hp = b.model().hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  if (!s.layers_key.empty()) hp.num_layers = Get(b, c.Uint(s.layers_key));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 0));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", s.tie_default));
  hp.activation = Get(b, c.StringOr(s.act_key, std::string(s.act_default)));
  hp.norm = "rmsnorm";
  if (!b.failed() && (hp.hidden_size == 0 || hp.hidden_size > kMaxConfigDimension)) {
    b.Fail(MakeError("{}: field \"hidden_size\" must be positive and sane", c.where()));
  }
}

// int(expand x hidden), as MambaConfig / Mamba2Mixer compute it; `key` may be a float (1.5).
uint64_t ExpandedWidth(ModelBuilder& b, const HfConfig& c, std::string_view key, uint64_t h) {
  const double size = Get(b, c.NumberOr(key, 2)) * static_cast<double>(h);
  if (!b.failed() &&
      !(std::isfinite(size) && size >= 1 && size <= static_cast<double>(kMaxConfigDimension))) {
    b.Fail(MakeError("{}: field \"{}\" x \"hidden_size\" must be a positive size", c.where(), key));
    return 0;
  }
  return static_cast<uint64_t>(size);
}

// Reads the Mamba-1 keys; checks them and records the ssm_* hyperparameters when `used`.
Status ReadMamba1(ModelBuilder& b, const HfConfig& c, const Mamba1Keys& k, bool used,
                  Mamba1Dims& d) {
  const uint64_t h = b.model().hp.hidden_size;
  d.d_inner = !k.inner.empty() && c.Has(k.inner) ? Get(b, c.Uint(k.inner))
                                                 : ExpandedWidth(b, c, k.expand, h);
  d.d_state = Get(b, c.UintOr(k.state, 16));
  d.kernel = Get(b, c.UintOr(k.kernel, 4));
  const auto rank = c.raw().find(std::string(k.rank));
  const bool auto_rank = rank == c.raw().end() || rank->is_null() ||
                         (rank->is_string() && rank->get<std::string>() == "auto");
  d.dt_rank = auto_rank ? (h + 15) / 16 : Get(b, c.Uint(k.rank));  // math.ceil(hidden / 16)
  d.conv_bias = Get(b, c.BoolOr(k.conv_bias, true));
  d.proj_bias = Get(b, c.BoolOr(k.proj_bias, k.proj_bias_default));
  if (!used || b.failed()) return Ok{};
  const std::string keys =
      fmt::format(R"("{}", "{}", "{}" and "{}")", k.inner.empty() ? k.expand : k.inner, k.state,
                  k.kernel, k.rank);
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
  if (k.norms == Mamba1Norms::kFalconBuffers) {
    b.model().assumptions.push_back(
        "Falcon-Mamba's b_c_rms / dt_rms (all-ones weights the mamba_ssm kernels take) counted "
        "as non-persistent buffers in the model dtype");
  }
  return Ok{};
}

// Reads the Mamba-2 keys (the heads, when required, only if `used`); when `used` checks them,
// derives d_inner, head_dim and conv_dim, records the ssm_* hyperparameters and the SSD chunk of
// transformers' torch_forward scan (unless a hook read it already).
Status ReadMamba2(ModelBuilder& b, const HfConfig& c, const Mamba2Keys& k, bool used,
                  Mamba2Dims& d) {
  d.heads =
      Get(b, k.heads_default > 0 || !used ? c.UintOr(k.heads, k.heads_default) : c.Uint(k.heads));
  const auto head = c.raw().find(std::string(k.head_dim));
  // A number parsed from JSON text is unsigned when non-negative; one set in code is signed.
  if (head != c.raw().end() && head->is_number_integer()) {
    d.head_dim = head->get<int64_t>() > 0 ? static_cast<uint64_t>(head->get<int64_t>()) : 0;
  } else {
    d.head_dim = k.head_dim_default;  // 0: "auto"
  }
  d.groups = Get(b, c.UintOr(k.groups, k.groups_default));
  d.d_state = Get(b, c.UintOr(k.state, k.state_default));
  d.kernel = Get(b, c.UintOr(k.kernel, 4));
  d.conv_bias = Get(b, c.BoolOr(k.conv_bias, true));
  d.proj_bias = Get(b, c.BoolOr(k.proj_bias, false));
  d.out_bias = k.out_bias.empty() ? d.proj_bias : Get(b, c.BoolOr(k.out_bias, false));
  if (!k.heads_times_dim && d.d_ssm == 0) {
    d.d_inner = ExpandedWidth(b, c, k.expand, b.model().hp.hidden_size);
  }
  if (!k.cache_dtype.empty()) {
    d.state_bits = Get(b, c.StringOr(k.cache_dtype, "")) == "float32" ? 32 : 0;
  }
  if (!used || b.failed()) return Ok{};
  if (d.heads == 0 || d.groups == 0 || d.d_state == 0 || d.kernel == 0 ||
      (k.head_dim_default > 0 && d.head_dim == 0)) {
    return MakeError(R"({}: "{}", "{}", "{}", "{}" and "{}" must be positive)", c.where(), k.heads,
                     k.head_dim, k.groups, k.state, k.kernel);
  }
  const std::string heads_x_dim = fmt::format("{} x {}", k.heads, k.head_dim);
  if (k.heads_times_dim) {
    d.d_inner = MulDims(b, d.heads, d.head_dim, heads_x_dim);
  } else if (d.d_ssm > 0) {
    d.d_inner = d.d_ssm;
  }
  if (d.head_dim == 0 && d.d_inner % d.heads == 0) d.head_dim = d.d_inner / d.heads;  // "auto"
  const bool fits = d.head_dim > 0 && MulDims(b, d.heads, d.head_dim, heads_x_dim) == d.d_inner;
  if (!b.failed() && !fits) {
    const std::string inner =
        d.d_ssm > 0 ? "\"mamba_d_ssm\"" : fmt::format(R"("{}" x "hidden_size")", k.expand);
    return MakeError(R"({}: "{}" x "{}" must equal the Mamba inner size ({}) = {})", c.where(),
                     k.heads, k.head_dim, inner, d.d_inner);
  }
  const uint64_t bc =
      MulDims(b, 2 * d.groups, d.d_state, fmt::format("2 x {} x {}", k.groups, k.state));
  if (!b.failed() && (d.d_inner > kMaxModelElements || bc > kMaxModelElements)) {
    return MakeError(R"({}: Mamba dimensions ("{}" x "{}", "{}" x "{}") are absurd)", c.where(),
                     k.heads, k.head_dim, k.groups, k.state);
  }
  d.conv = d.d_inner + bc;  // both at most 2^56: no wrap
  auto& hp = b.model().hp;
  hp.ssm_conv_kernel = d.kernel;
  hp.ssm_inner_size = d.d_inner;
  hp.ssm_state_size = d.d_state;
  hp.ssm_group_count = d.groups;
  if (hp.ssm_chunk_size != 0) return Ok{};
  const std::string_view key = c.Has(k.chunk) || k.chunk_alias.empty() ? k.chunk : k.chunk_alias;
  hp.ssm_chunk_size = Get(b, c.UintOr(key, k.chunk_default));
  if (!b.failed() && hp.ssm_chunk_size == 0) {
    return MakeError("{}: \"{}\" must be positive", c.where(), key);
  }
  if (!c.Has(k.chunk) && (k.chunk_alias.empty() || !c.Has(k.chunk_alias))) {
    b.model().assumptions.push_back(fmt::format(
        "no \"{}\": the config class's default {} (Mamba-2 scan chunk)", k.chunk, k.chunk_default));
  }
  return Ok{};
}

// Per layer: true where `key`'s list of indices names the layer.
std::vector<bool> IndexedLayers(ModelBuilder& b, const HfConfig& c, std::string_view key,
                                uint64_t layers) {
  std::vector<bool> out(layers, false);
  const auto it = c.raw().find(std::string(key));
  if (!it->is_array()) {
    b.Fail(MakeError("{}: \"{}\" must be a list of layer indices", c.where(), key));
    return {};
  }
  for (const auto& v : *it) {
    // A number parsed from JSON text is unsigned when non-negative; one set in code is signed.
    if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
        static_cast<uint64_t>(v.get<int64_t>()) >= layers) {
      b.Fail(MakeError("{}: \"{}\" holds {}, not a layer index below {}", c.where(), key, v.dump(),
                       layers));
      return {};
    }
    out[static_cast<uint64_t>(v.get<int64_t>())] = true;
  }
  return out;
}

}  // namespace

std::vector<bool> TypedLayers(ModelBuilder& b, const HfConfig& c, std::string_view key,
                              uint64_t layers,
                              std::span<const std::pair<std::string_view, bool>> types) {
  const auto it = c.raw().find(std::string(key));
  if (!it->is_array() || it->size() != layers) {
    b.Fail(
        MakeError("{}: \"{}\" must list one type per layer ({} layers)", c.where(), key, layers));
    return {};
  }
  std::vector<bool> out;
  for (uint64_t i = 0; i < layers; ++i) {
    const auto& v = (*it)[i];
    // The string itself is compared, not a json built from the literal (json's operator== over
    // every value type, which g++ 12 at -O3 reports as -Warray-bounds).
    const std::string* type = v.is_string() ? &v.get_ref<const std::string&>() : nullptr;
    const auto hit = std::find_if(types.begin(), types.end(),
                                  [&](const auto& t) { return type && *type == t.first; });
    if (hit == types.end()) {
      std::string names;  // "a" or "b"; "a", "b" or "c"
      for (size_t k = 0; k < types.size(); ++k) {
        if (k > 0) names += k + 1 == types.size() ? " or " : ", ";
        names += fmt::format("\"{}\"", types[k].first);
      }
      b.Fail(MakeError("{}: \"{}\"[{}] must be {}", c.where(), key, i, names));
      return {};
    }
    out.push_back(hit->second);
  }
  return out;
}

namespace {

// Per layer: true for attention, by the row's rule (kAllSsm / kBoth: none).
constexpr std::pair<std::string_view, bool> kMambaTypes[] = {{"mamba", false}, {"attention", true}};
constexpr std::pair<std::string_view, bool> kConvTypes[] = {{"conv", false},
                                                            {"full_attention", true}};
std::vector<bool> AttentionLayers(ModelBuilder& b, const HfConfig& c, LayerRule rule,
                                  uint64_t layers) {
  switch (rule) {
    case LayerRule::kAttnIndices:
      if (Absent(c, "attn_layer_indices")) return std::vector<bool>(layers, false);
      return IndexedLayers(b, c, "attn_layer_indices", layers);
    case LayerRule::kMambaTypes: {
      const char* key = c.Has("layer_types") ? "layer_types" : "layers_block_type";
      if (Absent(c, key)) return std::vector<bool>(layers, false);
      return TypedLayers(b, c, key, layers, kMambaTypes);
    }
    case LayerRule::kConvTypes:
      if (!Absent(c, "layer_types")) {
        return TypedLayers(b, c, "layer_types", layers, kConvTypes);
      }
      if (Absent(c, "full_attn_idxs")) {
        b.Fail(
            MakeError("{}: field \"full_attn_idxs\" (or \"layer_types\") is missing", c.where()));
        return {};
      }
      return IndexedLayers(b, c, "full_attn_idxs", layers);
    default:
      return std::vector<bool>(layers, false);
  }
}

LayerInfo SsmInfo(LayerMixer mixer, uint64_t channels, uint64_t kernel, uint64_t heads,
                  uint64_t per_head, uint32_t bits) {
  LayerInfo info;
  info.attention = AttentionKind::kNone;
  info.mixer = mixer;
  info.recurrent = true;
  info.state = {.conv_channels = channels,
                .conv_kernel = kernel,
                .heads = heads,
                .elements_per_head = per_head,
                .state_bits = bits};
  return info;
}

LayerInfo EmitMamba1(ModelBuilder& b, const Quantization& q, const std::string& x, uint64_t h,
                     const Mamba1Dims& d, Mamba1Norms norms) {
  b.Conv(x + ".conv1d", d.d_inner, d.d_inner, {d.kernel}, d.conv_bias, d.d_inner);
  QLinear(b, q, x + ".in_proj", h, MulDims(b, 2, d.d_inner, "2 x d_inner"), d.proj_bias);
  QLinear(b, q, x + ".x_proj", d.d_inner, d.dt_rank + 2 * d.d_state, false);
  QLinear(b, q, x + ".dt_proj", d.dt_rank, d.d_inner, true);
  b.Param(x + ".A_log", {d.d_inner, d.d_state});
  b.Param(x + ".D", {d.d_inner});
  QLinear(b, q, x + ".out_proj", d.d_inner, h, d.proj_bias);
  if (norms == Mamba1Norms::kFalconBuffers) {
    b.Buffer(x + ".b_c_rms", {d.d_state}, b.dtype(), false);
    b.Buffer(x + ".dt_rms", {d.d_inner}, b.dtype(), false);
  } else if (norms == Mamba1Norms::kJamba) {
    b.RmsNorm(x + ".dt_layernorm", d.dt_rank);
    b.RmsNorm(x + ".b_layernorm", d.d_state);
    b.RmsNorm(x + ".c_layernorm", d.d_state);
  }
  // One state row per channel: splits under TP like the channels.
  return SsmInfo(LayerMixer::kMamba, d.d_inner, d.kernel, d.d_inner, d.d_state, 0);
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
  return SsmInfo(LayerMixer::kMamba2, d.conv, d.kernel, d.heads,
                 MulDims(b, d.head_dim, d.d_state, "mamba_d_head x mamba_d_state"), d.state_bits);
}

LayerInfo EmitSsm(ModelBuilder& b, const Quantization& q, const HybridSpec& s, const HybridPlan& p,
                  const std::string& l) {
  const uint64_t h = b.model().hp.hidden_size;
  const std::string x = l + "." + std::string(s.ssm_name);
  if (s.ssm == SsmKind::kMamba1) return EmitMamba1(b, q, x, h, p.m1, s.m1.norms);
  if (s.ssm == SsmKind::kMamba2) {
    LayerInfo info = EmitMamba2(b, q, x, h, p.m2);
    if (s.mup_vector) {
      const Mamba2Dims& d = p.m2;
      b.Buffer(x + ".mup_vector", {1, 1, 2 * d.d_inner + 2 * d.groups * d.d_state + d.heads},
               b.dtype(), false);
    }
    return info;
  }
  b.Conv(x + ".conv", h, h, {p.conv_kernel}, p.conv_bias, h);
  QLinear(b, q, x + ".in_proj", h, 3 * h, p.conv_bias);
  QLinear(b, q, x + ".out_proj", h, h, p.conv_bias);
  return SsmInfo(LayerMixer::kShortConv, h, p.conv_kernel, 0, 0, 0);
}

LayerInfo EmitAttention(ModelBuilder& b, const Quantization& q, const HybridSpec& s,
                        const HybridPlan& p, const std::string& l) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size;
  const std::string a = l + "." + std::string(s.attn_name);
  QLinear(b, q, a + ".q_proj", h, p.q_width, p.attn_bias);
  QLinear(b, q, a + ".k_proj", h, p.kv_width, p.attn_bias);
  QLinear(b, q, a + ".v_proj", h, p.kv_width, p.attn_bias);
  QLinear(b, q, a + "." + std::string(s.o_proj), p.q_width, h, p.attn_bias);
  if (s.qk_layernorm) {
    b.RmsNorm(a + ".q_layernorm", hp.head_dim);
    b.RmsNorm(a + ".k_layernorm", hp.head_dim);
  }
  return AttentionInfo(hp, false, 0);
}

// An MLP of the row's names under `x`, or (`moe`) the routed experts: the router, its bias
// buffer, experts.N of `p.expert_width` (of the latent width's input when "moe_latent_size"), and
// Nemotron-H's shared expert and fc1/fc2_latent_proj. Records the width or MoE in `info`.
void EmitMlp(ModelBuilder& b, const Quantization& q, const HybridSpec& s, const HybridPlan& p,
             const std::string& x, bool moe, LayerInfo& info) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size;
  const auto mlp = [&](const std::string& y, uint64_t in, uint64_t width) {
    if (!s.mlp.gate.empty())
      QLinear(b, q, y + "." + std::string(s.mlp.gate), in, width, p.mlp_bias);
    QLinear(b, q, y + "." + std::string(s.mlp.up), in, width, p.mlp_bias);
    QLinear(b, q, y + "." + std::string(s.mlp.down), width, in, p.mlp_bias);
  };
  info.moe = moe;
  info.intermediate_size = moe ? 0 : hp.intermediate_size;
  if (!moe) {
    mlp(x, h, hp.intermediate_size);
    return;
  }
  const std::string router = x + "." + std::string(s.router);
  if (s.router_quantized) {
    QLinear(b, q, router, h, p.experts, false);
  } else {
    b.Linear(router, h, p.experts, false);
  }
  if (p.expert_bias) b.Buffer(x + "." + std::string(s.router_bias), {p.experts}, Dtype::kF32, true);
  const uint64_t in = p.latent > 0 ? p.latent : h;
  RepeatedModules(b, q, x + ".experts", p.experts,
                  [&](const std::string& ex) { mlp(ex, in, p.expert_width); });
  if (p.shared > 0) mlp(x + ".shared_experts", h, p.shared);
  if (p.latent > 0) {
    QLinear(b, q, x + ".fc1_latent_proj", h, p.latent, p.mlp_bias);
    QLinear(b, q, x + ".fc2_latent_proj", p.latent, h, p.mlp_bias);
  }
}

// granitemoeshared's feed-forward: block_sparse_moe (GraniteMoeParallelExperts keep all experts
// in one 3-D weight [E, out, in]) on MoE layers, shared_mlp always.
void EmitGraniteFfn(ModelBuilder& b, const HybridPlan& p, const std::string& l, bool moe,
                    LayerInfo& info) {
  const uint64_t h = b.model().hp.hidden_size;
  info.moe = moe;
  info.intermediate_size = moe ? 0 : p.shared;
  if (moe) {
    b.StackedLinear(l + ".block_sparse_moe.input_linear.weight", {p.experts, 2 * p.expert_width, h},
                    p.experts, h, 2 * p.expert_width);
    b.StackedLinear(l + ".block_sparse_moe.output_linear.weight", {p.experts, h, p.expert_width},
                    p.experts, p.expert_width, h);
    b.Linear(l + ".block_sparse_moe.router.layer", h, p.experts, false);
  }
  b.Linear(l + ".shared_mlp.input_linear", h, 2 * p.shared, false);
  b.Linear(l + ".shared_mlp.output_linear", p.shared, h, false);
}

void ReadHybridBasics(ModelBuilder& b, const HfConfig& c, const HybridSpec& s) {
  auto& hp = b.model().hp;
  if (!s.decoder_basics) {
    ReadSsmBasics(b, c, s);
    return;
  }
  ReadDecoderBasics(b, c,
                    {.tie = s.tie_default,
                     .act_key = s.act_key,
                     .act_default = s.act_default,
                     .need_intermediate = s.need_intermediate});
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
}

// The SSM's keys, checked when a layer uses it.
Status ResolveSsm(ModelBuilder& b, const HfConfig& c, const HybridSpec& s, HybridPlan& p) {
  auto& hp = b.model().hp;
  const bool used = std::any_of(p.blocks.begin(), p.blocks.end(), [](HybridBlock k) {
    return k == HybridBlock::kSsm || k == HybridBlock::kBoth;
  });
  if (b.failed()) return Ok{};
  if (s.ssm == SsmKind::kMamba1) {
    MEMFIT_RETURN_IF_ERROR(ReadMamba1(b, c, s.m1, used, p.m1));
    if (used && s.layers == LayerRule::kAllSsm) hp.intermediate_size = p.m1.d_inner;
  } else if (s.ssm == SsmKind::kMamba2) {
    MEMFIT_RETURN_IF_ERROR(ReadMamba2(b, c, s.m2, used, p.m2));
    if (used && s.layers == LayerRule::kAllSsm) hp.intermediate_size = p.m2.d_inner;
  }
  return Ok{};
}

uint64_t RotaryDims(ModelBuilder& b, const HfConfig& c, const HybridSpec& s) {
  const uint64_t hd = b.model().hp.head_dim;
  switch (s.rotary) {
    case HybridRotary::kHeadDim:
      return hd;
    case HybridRotary::kPartial:
      return RotaryDim(b, c, hd, 0.5);
    case HybridRotary::kWhenRopeNamed: {
      const auto pe = c.raw().find("position_embedding_type");  // None / "nope" / "rope"
      return pe != c.raw().end() && pe->is_string() && *pe == "rope" ? hd : 0;
    }
    default:
      return 0;
  }
}

// Reads the config as the row says; the layers' blocks into p.blocks.
Status ReadHybrid(ModelBuilder& b, const HfConfig& c, const BuildOptions& o, const HybridSpec& s,
                  HybridPlan& p) {
  auto& hp = b.model().hp;
  ReadHybridBasics(b, c, s);
  if (b.failed()) return Ok{};
  // Layer kinds are read only once the layer count has passed the tensor-cap guard.
  if (hp.num_layers > o.max_tensors) {
    return MakeError("{}: \"num_hidden_layers\" = {} is absurd", c.where(), hp.num_layers);
  }
  if (!s.attn_bias_key.empty()) p.attn_bias = Get(b, c.BoolOr(s.attn_bias_key, false));
  if (!s.mlp_bias_key.empty()) p.mlp_bias = Get(b, c.BoolOr(s.mlp_bias_key, false));
  if (s.read) s.read(b, c, s, p);
  return Ok{};
}

}  // namespace

LayerInfo EmitHybridLayer(ModelBuilder& b, const Quantization& q, const HybridSpec& s,
                          const HybridPlan& p, const std::string& l, HybridBlock block, bool moe) {
  const uint64_t h = b.model().hp.hidden_size;
  if (!s.norms_last) b.RmsNorm(l + "." + std::string(s.in_norm), h);
  if (block == HybridBlock::kMlp || block == HybridBlock::kMoe) {  // Nemotron-H's lone blocks
    LayerInfo info;
    info.attention = AttentionKind::kNone;
    info.mixer = LayerMixer::kNone;
    EmitMlp(b, q, s, p, l + ".mixer", block == HybridBlock::kMoe, info);
    return info;
  }
  LayerInfo info =
      block == HybridBlock::kAttention ? EmitAttention(b, q, s, p, l) : EmitSsm(b, q, s, p, l);
  if (block == HybridBlock::kBoth) {
    // Both caches: the SSM state and this layer's attention KV.
    const LayerInfo attn = EmitAttention(b, q, s, p, l);
    info.attention = attn.attention;
    info.num_heads = attn.num_heads;
    info.num_kv_heads = attn.num_kv_heads;
    info.head_dim_k = attn.head_dim_k;
    info.head_dim_v = attn.head_dim_v;
  }
  if (s.ffn == HybridFfn::kNone) return info;
  if (!s.norms_last) b.RmsNorm(l + "." + std::string(s.ff_norm), h);
  if (s.ffn == HybridFfn::kGranite) {
    EmitGraniteFfn(b, p, l, moe, info);
  } else {
    EmitMlp(b, q, s, p, l + ".feed_forward", moe, info);
  }
  if (s.norms_last) {
    b.RmsNorm(l + "." + std::string(s.in_norm), h);
    b.RmsNorm(l + "." + std::string(s.ff_norm), h);
  }
  return info;
}

Result<Model> BuildHybrid(const HfConfig& c, const BuildOptions& o, const HybridSpec& s) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  HybridPlan p;
  MEMFIT_RETURN_IF_ERROR(ReadHybrid(b, c, o, s, p));
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  if (s.layers != LayerRule::kHook) {
    const std::vector<bool> attention = AttentionLayers(b, c, s.layers, hp.num_layers);
    for (uint64_t i = 0; i < attention.size(); ++i) {
      p.blocks.push_back(attention[i]                   ? HybridBlock::kAttention
                         : s.layers == LayerRule::kBoth ? HybridBlock::kBoth
                                                        : HybridBlock::kSsm);
    }
  }
  MEMFIT_RETURN_IF_ERROR(ResolveSsm(b, c, s, p));
  if (s.layers != LayerRule::kAllSsm) {
    p.q_width = MulDims(b, hp.num_attention_heads, hp.head_dim, "num_attention_heads x head_dim");
    p.kv_width = MulDims(b, hp.num_kv_heads, hp.head_dim, "num_key_value_heads x head_dim");
  }
  const uint64_t rotary = RotaryDims(b, c, s);
  if (b.failed()) return b.Finish();
  const std::string prefix(s.prefix);
  b.Embedding(prefix + "." + std::string(s.embed), hp.vocab_size, hp.hidden_size);
  for (uint64_t i = 0; i < p.blocks.size() && !b.failed(); ++i) {
    const bool moe = !p.moe.empty() && p.moe[i];
    const std::string l = Layer(prefix + ".layers", i);
    hp.layers.push_back(EmitHybridLayer(b, q, s, p, l, p.blocks[i], moe));
  }
  b.RmsNorm(prefix + "." + std::string(s.final_norm), hp.hidden_size);
  if (rotary > 0) {
    b.Buffer(prefix + "." + std::string(s.rotary_module) + ".inv_freq", {rotary / 2}, Dtype::kF32,
             false);
  }
  TaskHead(b, c, o, prefix + "." + std::string(s.embed));
  if (s.after_head) s.after_head(b, c, q, s, p);
  NoteQuantization(b, q);
  m.no_split_patterns = {prefix + ".layers.*"};
  m.base_model_prefix = prefix + ".";
  return b.Finish();
}

}  // namespace memfit::arch
