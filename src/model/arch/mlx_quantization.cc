// MLX quantization blocks read and stored as mlx-lm writes them (mlx_quantization.h).

#include "model/arch/mlx_quantization.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "formats/hf_config_json.h"
#include "memfit/checked_math.h"
#include "memfit/model.h"
#include "model/arch/builder_kit.h"

namespace memfit::arch {
namespace {

thread_local std::shared_ptr<const MlxQuantization> t_mlx;

struct ModeInfo {
  std::string_view name;
  MlxMode mode;
  uint64_t group_size, bits;  // _defaults_for_mode; the only values mxfp4, nvfp4, mxfp8 take
};
// mlx python/mlx/nn/layers/quantized.py _defaults_for_mode.
constexpr std::array<ModeInfo, 4> kModes{{{"affine", MlxMode::kAffine, 64, 4},
                                          {"mxfp4", MlxMode::kMxfp4, 32, 4},
                                          {"nvfp4", MlxMode::kNvfp4, 16, 4},
                                          {"mxfp8", MlxMode::kMxfp8, 32, 8}}};

// mlx.core.quantize: affine groups of 32, 64 or 128, 2, 3, 4, 5, 6 or 8 bits.
constexpr std::array<uint64_t, 3> kAffineGroups{32, 64, 128};
constexpr std::array<uint64_t, 6> kAffineBits{2, 3, 4, 5, 6, 8};

const ModeInfo& Info(MlxMode mode) {
  return *std::find_if(kModes.begin(), kModes.end(),
                       [&](const ModeInfo& m) { return m.mode == mode; });
}

// The MLX block: "quantization" first (mlx-lm load_model), else an MLX-shaped
// "quantization_config".
const nlohmann::json* MlxBlock(const HfConfig& config, std::string_view& key) {
  const nlohmann::json& raw = config.raw();
  if (auto it = raw.find("quantization"); it != raw.end() && !it->is_null()) {
    key = "quantization";
    return &*it;
  }
  const nlohmann::json* qc = QuantizationConfigJson(config);
  if (qc && !qc->contains("quant_method") && qc->contains("group_size") && qc->contains("bits")) {
    key = "quantization_config";
    return qc;
  }
  return nullptr;
}

// An integer field of a spec: `fallback` when absent (a per-module entry), else a positive
// integer or an error naming it.
Result<uint64_t> SpecInt(const nlohmann::json& j, const char* field,
                         std::optional<uint64_t> fallback, const std::string& where) {
  auto it = j.find(field);
  if (it == j.end() || (it->is_null() && fallback)) {
    if (fallback) return *fallback;
    return MakeError("{} needs \"{}\"", where, field);
  }
  if (!it->is_number_integer() || it->get<int64_t>() <= 0) {
    return MakeError("{}: \"{}\" must be a positive integer, got {}", where, field,
                     OneLine(it->dump()).substr(0, 40));
  }
  return it->get<uint64_t>();
}

// One spec ({"group_size", "bits", "mode"}): `base` says the block's own fields (required, as
// load_model indexes them); an entry's absent fields take the defaults of its mode, as
// to_quantized(**entry) does.
Result<MlxQuantSpec> ReadSpec(const nlohmann::json& j, bool base, const std::string& where) {
  MlxQuantSpec s;
  if (auto it = j.find("mode"); it != j.end() && !it->is_null()) {
    const std::string name = it->is_string() ? it->get<std::string>() : it->dump();
    auto mode = std::find_if(kModes.begin(), kModes.end(),
                             [&](const ModeInfo& m) { return m.name == name; });
    if (mode == kModes.end()) {
      return MakeError("{}: \"mode\" {} is not supported (affine, mxfp4, nvfp4, mxfp8)", where,
                       OneLine(fmt::format("\"{}\"", name)).substr(0, 60));
    }
    s.mode = mode->mode;
  }
  const ModeInfo& info = Info(s.mode);
  auto group =
      SpecInt(j, "group_size", base ? std::nullopt : std::optional(info.group_size), where);
  if (!group) return group.error();
  auto bits = SpecInt(j, "bits", base ? std::nullopt : std::optional(info.bits), where);
  if (!bits) return bits.error();
  s.group_size = *group;
  s.bits = *bits;
  if (s.mode == MlxMode::kAffine) {
    if (std::find(kAffineGroups.begin(), kAffineGroups.end(), s.group_size) ==
        kAffineGroups.end()) {
      return MakeError("{}: \"group_size\" = {} is not supported in mode \"affine\" (32, 64, 128)",
                       where, s.group_size);
    }
    if (std::find(kAffineBits.begin(), kAffineBits.end(), s.bits) == kAffineBits.end()) {
      return MakeError("{}: \"bits\" = {} is not supported in mode \"affine\" (2, 3, 4, 5, 6, 8)",
                       where, s.bits);
    }
  } else if (s.group_size != info.group_size || s.bits != info.bits) {
    return MakeError("{}: mode \"{}\" takes \"group_size\" {} and \"bits\" {} (got {} and {})",
                     where, info.name, info.group_size, info.bits, s.group_size, s.bits);
  }
  return s;
}

// mlx-vlm's convert keeps vision and audio towers in floating point (Blaizzy/mlx-vlm
// mlx_vlm/utils.py skip_multimodal_module: "vision_model", "vision_tower", "sam_model",
// "audio_model", "audio_tower" in the path; its Qwen-VL models load transformers' "visual" as
// "vision_tower"). memfit's component names the tower whatever the checkpoint calls it.
bool MultimodalTower(std::string_view module, std::string_view component) {
  constexpr std::array<std::string_view, 4> kTowers{"vision_model", "vision_tower", "audio_model",
                                                    "audio_tower"};
  for (std::string_view tower : kTowers) {
    if (component == tower || module.find(tower) != std::string_view::npos) return true;
  }
  return module.find("sam_model") != std::string_view::npos || module.starts_with("visual.") ||
         module.find(".visual.") != std::string_view::npos;
}

}  // namespace

bool HasMlxQuantization(const HfConfig& config) {
  std::string_view key;
  return MlxBlock(config, key) != nullptr;
}

Result<std::optional<MlxQuantization>> ReadMlxQuantization(const HfConfig& config) {
  std::string_view key;
  const nlohmann::json* block = MlxBlock(config, key);
  if (!block) return std::optional<MlxQuantization>();
  const std::string where = fmt::format("{}: \"{}\"", config.where(), key);
  if (!block->is_object()) return MakeError("{} must be an object", where);
  MlxQuantization q;
  auto base = ReadSpec(*block, true, where);
  if (!base) return base.error();
  q.base = *base;
  for (auto it = block->begin(); it != block->end(); ++it) {
    // Per-module entries (module path -> {group_size, bits, mode} or a bool, as the
    // class_predicate of mlx-lm's load_model returns them); other scalar keys are not modules.
    if (it.value().is_boolean()) {
      q.modules.emplace_back(it.key(),
                             it.value().get<bool>() ? std::optional(q.base) : std::nullopt);
    } else if (it.value().is_object()) {
      auto spec = ReadSpec(it.value(), false,
                           fmt::format("{}.\"{}\"", where, OneLine(it.key()).substr(0, 200)));
      if (!spec) return spec.error();
      q.modules.emplace_back(it.key(), *spec);
    }
  }
  std::sort(q.modules.begin(), q.modules.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return std::optional(std::move(q));
}

std::string_view MlxModeName(MlxMode mode) { return Info(mode).name; }

std::vector<MlxQuantSpec> MlxSupportedSpecs() {
  std::vector<MlxQuantSpec> specs;
  for (uint64_t group : kAffineGroups) {
    for (uint64_t bits : kAffineBits) specs.push_back({MlxMode::kAffine, bits, group});
  }
  for (const ModeInfo& m : kModes) {
    if (m.mode != MlxMode::kAffine) specs.push_back({m.mode, m.bits, m.group_size});
  }
  return specs;
}

const std::optional<MlxQuantSpec>* MlxModuleEntry(const MlxQuantization& q,
                                                  std::string_view module) {
  auto it = std::lower_bound(q.modules.begin(), q.modules.end(), module,
                             [](const auto& entry, std::string_view m) { return entry.first < m; });
  return it != q.modules.end() && it->first == module ? &it->second : nullptr;
}

std::optional<MlxQuantSpec> MlxSpecFor(const MlxQuantization& q, const std::string& module,
                                       uint64_t in, std::string_view component) {
  if (const auto* entry = MlxModuleEntry(q, module)) {
    // load_model quantizes a listed module with its entry; an input the group does not divide
    // cannot have been quantized (mx.quantize refuses it).
    if (*entry && in % (*entry)->group_size == 0) return *entry;
    return std::nullopt;
  }
  if (in == 0 || in % q.base.group_size != 0 || MultimodalTower(module, component)) {
    return std::nullopt;
  }
  return q.base;
}

void EmitMlxQuantized(ModelBuilder& b, const std::string& m, uint64_t in, uint64_t out,
                      const MlxQuantSpec& s, uint64_t experts) {
  const auto logical =
      CheckedProduct(std::vector<uint64_t>{std::max<uint64_t>(experts, 1), out, in});
  const auto packed_bits = CheckedMul(in, s.bits);
  if (!logical || !packed_bits) {
    b.Fail(MakeError("{}: size overflows 64 bits", m));
    return;
  }
  // [out, x] or, stacked, [experts, out, x].
  auto shape = [&](uint64_t x) {
    return experts ? std::vector<uint64_t>{experts, out, x} : std::vector<uint64_t>{out, x};
  };
  const uint64_t groups = in / s.group_size;
  const Dtype scale = s.mode == MlxMode::kAffine ? b.dtype() : Dtype::kU8;
  b.Packed(m + ".weight", shape(CeilDivOrZero(*packed_bits, 32)), Dtype::kU32, *logical);
  b.Packed(m + ".scales", shape(groups), scale, 0);
  if (s.mode == MlxMode::kAffine) b.Packed(m + ".biases", shape(groups), b.dtype(), 0);
}

void NoteMlxQuantization(Model& model) {
  // The quantized modules: their packed uint32 weights stand for out x in parameters (a compact
  // run of experts counts every copy).
  uint64_t quantized = 0;
  for (const Tensor& t : model.tensors) {
    if (t.dtype == Dtype::kU32 && t.logical_params && t.name.ends_with(".weight")) {
      quantized += t.copies;
    }
  }
  model.notes.push_back(fmt::format(
      "MLX (mlx-lm) quantization: {} linear and embedding weights stored as uint32 [out, in x "
      "bits / 32] with scales (and, in affine mode, biases) per group of inputs; parameters are "
      "logical (out x in per layer), bytes as stored",
      quantized));
  model.assumptions.push_back(
      "MLX: a linear or embedding is quantized when the group size divides its input dimension "
      "(mlx-lm convert's predicate) unless the block lists it, vision and audio towers excepted "
      "(mlx-vlm's skip_multimodal_module); a model's own quant_predicate that kept a module in "
      "floating point is not recorded in config.json and is not known here; affine scales and "
      "biases in the checkpoint dtype (mlx-lm convert casts to the config's); parameters that "
      "are not a linear, an embedding or stacked experts (routers held as raw weights, "
      "convolutions, norms) stay in floating point");
}

MlxQuantizationScope::MlxQuantizationScope(std::shared_ptr<const MlxQuantization> q)
    : previous_(std::move(t_mlx)) {
  t_mlx = std::move(q);
}

MlxQuantizationScope::~MlxQuantizationScope() { t_mlx = std::move(previous_); }

std::shared_ptr<const MlxQuantization> CurrentMlxQuantization() { return t_mlx; }

}  // namespace memfit::arch
