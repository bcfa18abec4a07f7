#pragma once
// MLX quantization as mlx-community checkpoints store it (mlx-lm `convert -q`, which calls
// mlx.nn.quantize). config.json holds
//   "quantization": {"group_size": 64, "bits": 4, "mode": "affine",
//                    "<module path>": {"group_size": 64, "bits": 8} | false, ...}
// (mlx-lm's save_config repeats the block as "quantization_config", without "quant_method").
// Each quantized nn.Linear / nn.Embedding (weight [out, in]) stores
//   weight  uint32 [out, in x bits / 32]   (values packed from the low bits of each word)
//   scales  [out, in / group_size]: the model dtype (affine), uint8 (mxfp4, mxfp8: E8M0;
//           nvfp4: E4M3)
//   biases  [out, in / group_size] in the model dtype (affine only)
// and its bias unchanged. Sources: ml-explore/mlx python/mlx/nn/layers/quantized.py
// (QuantizedLinear, QuantizedEmbedding, _defaults_for_mode), the mlx.core.quantize docs (modes
// table), ml-explore/mlx-lm mlx_lm/utils.py (quantize_model's predicate: a module with
// to_quantized() whose weight.shape[-1] divides by group_size; load_model's per-module entries).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memfit/hf_config.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit::arch {

class ModelBuilder;

enum class MlxMode : uint8_t { kAffine, kMxfp4, kNvfp4, kMxfp8 };

struct MlxQuantSpec {
  MlxMode mode = MlxMode::kAffine;  // "mode"
  uint64_t bits = 4;                // "bits"
  uint64_t group_size = 64;         // "group_size"
};

struct MlxQuantization {
  MlxQuantSpec base;
  // The block's per-module entries, sorted by module path: a spec, or nullopt for `false` (kept
  // in floating point).
  std::vector<std::pair<std::string, std::optional<MlxQuantSpec>>> modules;
};

// Whether the config names an MLX block: "quantization" present and not null (mlx-lm's
// load_model reads it first), or a "quantization_config" object without "quant_method" holding
// "group_size" and "bits".
bool HasMlxQuantization(const HfConfig& config);

// The config's MLX block (nullopt when it has none). Errors name the key: "bits" 0 or 7,
// group_size 0, huge or a string, an unknown "mode".
Result<std::optional<MlxQuantization>> ReadMlxQuantization(const HfConfig& config);

// "affine", "mxfp4", "nvfp4", "mxfp8".
std::string_view MlxModeName(MlxMode mode);

// Every spec mlx.core.quantize accepts: affine groups of 32, 64 or 128 at 2, 3, 4, 5, 6 or 8
// bits, and each of mxfp4, nvfp4, mxfp8 at its one group size and width.
std::vector<MlxQuantSpec> MlxSupportedSpecs();

// The block's per-module entry for `module`: null when it lists none, else the entry (nullopt
// for `false`).
const std::optional<MlxQuantSpec>* MlxModuleEntry(const MlxQuantization& q,
                                                  std::string_view module);

// How `module` (weight [out, in], built in the multimodal `component`) is stored: its per-module
// entry, else nothing for a vision or audio tower (mlx-vlm's skip_multimodal_module), else `base`
// when `in` divides by the group size (mlx-lm's predicate); nullopt when it stays in floating
// point.
std::optional<MlxQuantSpec> MlxSpecFor(const MlxQuantization& q, const std::string& module,
                                       uint64_t in, std::string_view component = "");

// Emits weight, scales and biases of `module` (weight [out, in], or [experts, out, in] when
// `experts` is not 0) under `spec`; the packed weight counts its out x in (x experts)
// parameters, scales and biases none.
void EmitMlxQuantized(ModelBuilder& b, const std::string& module, uint64_t in, uint64_t out,
                      const MlxQuantSpec& spec, uint64_t experts = 0);

// Adds the note and assumption of a model built under an MLX block.
void NoteMlxQuantization(Model& model);

// Sets the MLX quantization of every ModelBuilder constructed on this thread while it lives
// (BuildFromConfig reads it from the top config), so that ModelBuilder::Linear and ::Embedding
// store every family's linears, embeddings and LM head as mlx-lm does, in one place.
class MlxQuantizationScope {
 public:
  explicit MlxQuantizationScope(std::shared_ptr<const MlxQuantization> q);
  ~MlxQuantizationScope();
  MlxQuantizationScope(const MlxQuantizationScope&) = delete;
  MlxQuantizationScope& operator=(const MlxQuantizationScope&) = delete;

 private:
  std::shared_ptr<const MlxQuantization> previous_;
};

// The innermost scope's quantization (null outside any scope).
std::shared_ptr<const MlxQuantization> CurrentMlxQuantization();

}  // namespace memfit::arch
