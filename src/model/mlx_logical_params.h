#pragma once
// Logical parameter counts of MLX-quantized tensors read from safetensors headers
// (model/arch/mlx_quantization.h lays out what mlx-lm stores): a uint32 `<m>.weight` with a
// `<m>.scales` sibling stands for the out x in (x experts) parameters of its layer, its scales and
// biases for none.

#include <vector>

#include "memfit/hf_config.h"
#include "memfit/model.h"
#include "model/logical_params.h"

namespace memfit {

// Sets Tensor::logical_params of the MLX-packed tensors. Bits come from the config's MLX block
// (the module's per-module entry, else the base; null `config` or no block: none) when they fit
// the shapes (in = scales' last dim x group size = words x 32 / bits); otherwise from the shapes
// alone, among the specs mlx.core.quantize accepts (affine when float scales and biases sit
// beside the weight, mxfp4 / nvfp4 / mxfp8 when uint8 scales do): one fitting spec is used and an
// assumption says so; several leave the words counted as stored, said too. A weight whose scales
// do not line up with it (other leading dims, zero or overflowing sizes) is left as stored, with
// an assumption. The note counts the tensors read as MLX-packed, per spec.
LogicalParamsReport InferMlxLogicalParams(std::vector<Tensor>& tensors, const HfConfig* config);

}  // namespace memfit
