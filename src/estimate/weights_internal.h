#pragma once
// Shared passes over a model's tensors for the estimators that need several of them (the
// inference weights: stored format, roles, quantized bytes, parallel splits), so that a large MoE
// (~100k tensors) is classified once. Private to src/estimate.

#include <vector>

#include "estimate/modules.h"
#include "memfit/parallel.h"
#include "memfit/quantization.h"
#include "memfit/stored_format.h"

namespace memfit::estimate {

// EstimateQuantizedWeights over precomputed DetectStoredQuantization and ClassifyTensors.
Result<QuantizedWeights> QuantizedWeightsFrom(const Model& model, const QuantOptions& options,
                                              const StoredQuantization& stored,
                                              const std::vector<RoleTensor>& roles);
// ClassifySplits over precomputed ClassifyTensors.
std::vector<TensorSplit> SplitsFrom(const Model& model, const std::vector<RoleTensor>& roles);

}  // namespace memfit::estimate
