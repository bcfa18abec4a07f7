// MLX-packed tensors read from headers (mlx_logical_params.h).

#include "model/mlx_logical_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "memfit/checked_math.h"
#include "model/arch/mlx_quantization.h"

namespace memfit {
namespace {

using arch::MlxMode;
using arch::MlxQuantSpec;

// A uint32 weight [..., out, words] and its scales [..., out, groups] (biases, affine: the same).
struct Packed {
  Tensor* weight = nullptr;
  Tensor* scales = nullptr;
  Tensor* biases = nullptr;
  uint64_t words = 0, groups = 0;
};

// Whether the scales line up with the weight: the same rank (2, or 3 for stacked experts), the
// same leading dims, words and groups not 0, biases (when present) shaped as the scales.
bool LinesUp(const Packed& p) {
  const auto& w = p.weight->shape;
  const auto& s = p.scales->shape;
  if (w.size() < 2 || w.size() > 3 || s.size() != w.size()) return false;
  if (!std::equal(w.begin(), w.end() - 1, s.begin())) return false;
  if (p.biases && p.biases->shape != s) return false;
  return w.back() > 0 && s.back() > 0;
}

// The out x in (x experts) parameters of `p` stored under `spec`, or nullopt when the spec does
// not fit: in = groups x group_size must equal words x 32 / bits, and affine stores float scales
// and biases, the other modes uint8 scales and no biases.
std::optional<uint64_t> LogicalUnder(const Packed& p, const MlxQuantSpec& spec) {
  const bool affine = spec.mode == MlxMode::kAffine;
  if (affine != (IsFloatingPoint(p.scales->dtype) && p.biases != nullptr)) return std::nullopt;
  if (!affine && p.scales->dtype != Dtype::kU8) return std::nullopt;
  const auto in = CheckedMul(p.groups, spec.group_size);
  const auto in_bits = in ? CheckedMul(*in, spec.bits) : std::nullopt;
  const auto word_bits = CheckedMul(p.words, 32);
  if (!in_bits || !word_bits || *in_bits != *word_bits) return std::nullopt;
  return CheckedMul(p.weight->numel / p.words, *in);
}

std::string SpecLabel(const MlxQuantSpec& s) {
  if (s.mode != MlxMode::kAffine) return std::string(arch::MlxModeName(s.mode));
  return fmt::format("affine {}-bit group {}", s.bits, s.group_size);
}

// What was found, for the note and the assumptions: counts and a first example of each case.
struct Tally {
  std::map<std::string, size_t> by_spec;  // weights read as MLX-packed, per spec
  size_t metadata = 0;                    // scales and biases set to none
  size_t inferred = 0, ambiguous = 0, unreadable = 0;
  std::string first_inferred, first_ambiguous, candidates, first_unreadable;
};

void Note(const std::string& name, size_t& count, std::string& first) {
  if (count++ == 0) first = name;
}

// Reads one packed weight: the config's spec when it fits, else the one supported spec that fits
// the shapes; scales and biases count none unless no spec fits at all.
void ReadPacked(Packed& p, std::string_view module, const arch::MlxQuantization* block,
                Tally& tally) {
  // Plain values, not optionals: g++ 12 -O2 warns on an optional<uint64_t> read after a branch.
  MlxQuantSpec spec;
  uint64_t logical = 0;
  bool known = false;
  if (block) {
    const auto* entry = arch::MlxModuleEntry(*block, module);
    const std::optional<MlxQuantSpec> configured = entry ? *entry : std::optional(block->base);
    if (configured) {
      if (auto n = LogicalUnder(p, *configured)) {
        spec = *configured;
        logical = *n;
        known = true;
      }
    }
  }
  if (!known) {
    std::vector<std::pair<MlxQuantSpec, uint64_t>> fits;
    for (const MlxQuantSpec& s : arch::MlxSupportedSpecs()) {
      if (auto n = LogicalUnder(p, s)) fits.emplace_back(s, *n);
    }
    if (fits.empty()) {
      Note(p.weight->name, tally.unreadable, tally.first_unreadable);
      return;
    }
    if (fits.size() > 1) {
      if (tally.ambiguous == 0) {
        for (const auto& [s, n] : fits) {
          tally.candidates += (tally.candidates.empty() ? "" : ", ") + SpecLabel(s);
        }
      }
      Note(p.weight->name, tally.ambiguous, tally.first_ambiguous);
    } else {
      Note(p.weight->name, tally.inferred, tally.first_inferred);
      std::tie(spec, logical) = fits[0];
      known = true;
    }
  }
  if (known) {
    p.weight->logical_params = logical;
    ++tally.by_spec[SpecLabel(spec)];
  }
  for (Tensor* meta : {p.scales, p.biases}) {
    if (!meta) continue;
    meta->logical_params = 0;
    ++tally.metadata;
  }
}

void Report(const Tally& tally, bool block, const std::string& block_error,
            LogicalParamsReport& report) {
  size_t packed = 0;
  std::string specs;
  for (const auto& [label, n] : tally.by_spec) {
    packed += n;
    specs += fmt::format("{}{}: {}", specs.empty() ? "" : ", ", label, n);
  }
  if (packed == 0 && tally.metadata > 0) {
    report.notes.push_back(
        fmt::format("MLX: {} scales and biases of packed weights count none", tally.metadata));
  } else if (packed > 0) {
    report.notes.push_back(fmt::format(
        "MLX: {} uint32 weight(s) read as MLX-packed ({}) count the out x in parameters of their "
        "layer, {} scales and biases count none; bytes as stored",
        packed, specs, tally.metadata));
  }
  const std::string why =
      block ? "the config's MLX quantization spec for them does not fit their shapes"
            : "config.json has no readable MLX quantization block" +
                  (block_error.empty() ? std::string() : " (" + block_error + ")");
  if (tally.inferred > 0) {
    report.assumptions.push_back(fmt::format(
        "MLX: bits of {} packed weight(s) (e.g. {}) inferred from the ratio of scales to words "
        "(in = scales x group size = words x 32 / bits; the one spec mlx.core.quantize accepts "
        "that fits): {}",
        tally.inferred, tally.first_inferred, why));
  }
  if (tally.ambiguous > 0) {
    report.assumptions.push_back(fmt::format(
        "MLX: {} packed weight(s) (e.g. {}: {}) fit several specs, so their parameters are "
        "counted as stored uint32 words (too few, by 32 / bits): {}",
        tally.ambiguous, tally.first_ambiguous, tally.candidates, why));
  }
  if (tally.unreadable > 0) {
    report.assumptions.push_back(fmt::format(
        "MLX: {} uint32 weight(s) with scales beside them (e.g. {}) fit no MLX layout (scales "
        "that do not line up with the words, or sizes that overflow): counted as stored",
        tally.unreadable, tally.first_unreadable));
  }
}

}  // namespace

LogicalParamsReport InferMlxLogicalParams(std::vector<Tensor>& tensors, const HfConfig* config) {
  LogicalParamsReport report;
  // Most checkpoints hold no uint32 weight: no block to read, no name index to build.
  const auto packed = [](const Tensor& t) {
    return t.dtype == Dtype::kU32 && t.name.ends_with(".weight");
  };
  if (std::none_of(tensors.begin(), tensors.end(), packed)) return report;
  std::optional<arch::MlxQuantization> block;
  std::string block_error;
  if (config) {
    auto read = arch::ReadMlxQuantization(*config);
    if (read) {
      block = std::move(*read);
    } else {
      block_error = read.error().message;
    }
  }
  TensorSiblings siblings(tensors);
  Tally tally;
  for (Tensor& t : tensors) {
    if (!packed(t)) continue;
    const std::string_view module = std::string_view(t.name).substr(0, t.name.size() - 7);
    Packed p{.weight = &t, .scales = siblings.Find(module, "scales")};
    if (!p.scales) continue;
    p.biases = siblings.Find(module, "biases");
    if (!LinesUp(p)) {
      Note(t.name, tally.unreadable, tally.first_unreadable);
      continue;
    }
    p.words = t.shape.back();
    p.groups = p.scales->shape.back();
    ReadPacked(p, module, block ? &*block : nullptr, tally);
  }
  Report(tally, block.has_value(), block_error, report);
  return report;
}

}  // namespace memfit
