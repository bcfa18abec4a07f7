#pragma once
// Load memory: what the weights take once loaded, per dtype, with the largest indivisible block
// and the training-with-Adam figure (model states only). Pure functions; see docs/estimates.md.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/dtype.h"
#include "memfit/model.h"

namespace memfit {

// A what-if precision for the weights.
enum class LoadDtype : uint8_t { kAsStored, kFloat32, kFloat16, kBFloat16, kInt8, kInt4 };
std::string_view LoadDtypeName(LoadDtype dtype);  // "float32", ..., "as stored"
Result<LoadDtype> ParseLoadDtype(std::string_view name);
// Bytes of a tensor loaded at `dtype`: floating-point parameters are cast, integer tensors
// (already quantized weights, index buffers), block-quantized data and buffers keep their stored
// size.
uint64_t LoadedTensorBytes(const Tensor& tensor, LoadDtype dtype);

struct LoadOptions {
  std::vector<LoadDtype> dtypes = {LoadDtype::kFloat32, LoadDtype::kFloat16, LoadDtype::kBFloat16,
                                   LoadDtype::kInt8, LoadDtype::kInt4};
};

struct LoadRow {
  LoadDtype dtype = LoadDtype::kFloat32;
  uint64_t total_bytes = 0;          // resident weights and buffers at this dtype
  uint64_t largest_block_bytes = 0;
  // Weights + gradients + AdamW states for full training at this precision, no activations:
  // 16 B/param in float32, 18 B/param in fp16/bf16 mixed precision (HF model_memory_anatomy);
  // nullopt for int8/int4 (full training of quantized weights is not possible: use QLoRA).
  std::optional<uint64_t> training_adam_bytes{};
};

struct LoadEstimate {
  ModelTotals totals;
  std::optional<Block> largest_block;  // at the stored dtypes
  std::vector<LoadRow> rows;
  std::vector<std::pair<std::string, uint64_t>> dtype_bytes;  // stored bytes per stored dtype label
  std::vector<std::string> notes;  // what the numbers include
};

LoadEstimate EstimateLoad(const Model& model, const LoadOptions& options = {});
// The same, with the model's blocks for every resident tensor (AssignBlocks(model, {})) computed
// once by the caller: a model kept for many estimates (the server) pays for its tree once.
LoadEstimate EstimateLoad(const Model& model, const LoadOptions& options,
                          const BlockAssignment& resident_blocks);

// Reproduces `accelerate estimate-memory` (accelerate 0.31+/transformers 4.42 semantics, see
// docs/estimates.md): base model unless auto_map names AutoModelFor*, every buffer counted, bool
// buffers at 1/8 byte, floating tensors at float32 then divided by 2/4/8.
struct AccelerateRow {
  std::string dtype;  // "float32", "float16", "int8", "int4"
  double largest_layer_bytes = 0;
  double total_bytes = 0;
  std::optional<double> training_adam_bytes{};  // "N/A" for int8/int4
};
struct AccelerateEstimate {
  std::string constructor_class;  // what accelerate would build, e.g. "BertModel"
  std::vector<std::string> largest_layer_names;
  std::vector<AccelerateRow> rows;
};
struct AccelerateOptions {
  std::vector<std::string> dtypes = {"float32", "float16", "int8", "int4"};
};
Result<AccelerateEstimate> EstimateAccelerate(const Model& model,
                                              const AccelerateOptions& options = {});

}  // namespace memfit
