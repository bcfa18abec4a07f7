#pragma once
// Logical parameter counts for tensors read from safetensors headers (issue 15): a packed
// quantized weight stands for the out x in parameters of the unquantized layer, and
// quantization metadata (scales, zero points, g_idx, bitsandbytes quant state) for none.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/hf_config_json.h"
#include "memfit/model.h"

namespace memfit {

// What InferLogicalParams found, for the model's notes and assumptions.
struct LogicalParamsReport {
  std::vector<std::string> notes;
  std::vector<std::string> assumptions;
};

// The tensors by name, to find a tensor's siblings ("<module>.<leaf>"); views into `tensors`,
// which must outlive it and not grow.
class TensorSiblings {
 public:
  explicit TensorSiblings(std::vector<Tensor>& tensors);
  // "<module>.<leaf>", or null.
  Tensor* Find(std::string_view module, std::string_view leaf);

 private:
  std::vector<Tensor>& tensors_;
  std::unordered_map<std::string_view, size_t> by_name_;
  std::string key_;
};

// Sets Tensor::logical_params from names, dtypes and sibling shapes, as the storage formulas of
// docs/architectures.md lay them out: NVFP4 (uint8 `weight` with a float8_e4m3 `weight_scale` per
// 16 inputs), MXFP4 (`*_blocks` with `*_scales`), DeepSeek-V4 FP4 (int8 `weight` with a
// float8_e8m0 `scale` per 32 inputs), bitsandbytes 4-bit (uint8 `weight` with `weight.absmax`),
// GPTQ/AWQ (`qweight` with `qzeros` and `scales`: bits and layout from their shapes) and
// compressed-tensors pack-quantized (`weight_packed`: bits from `quantization_config`, null when
// absent). Shapes that do not fit a formula are left as stored.
LogicalParamsReport InferLogicalParams(std::vector<Tensor>& tensors,
                                       const nlohmann::json* quantization_config);

}  // namespace memfit
