#pragma once
// The words of a request -> estimator options (everything that does not need the model): the
// stage of RunInferenceRequest / RunTrainRequest before the model, shared with `memfit
// validate`, which builds the same requests from its rows (memfit/validation.h). Errors name the
// flag ("--dtype: ...").

#include <cstdint>
#include <string>

#include "memfit/requests.h"

namespace memfit {

// InferenceOptions::context_tokens is left at its default: the model chooses it (ChooseContext).
Result<InferenceOptions> InferenceOptionsFor(const InferenceRequest& request);
// TrainOptions::seq is the request's context (0 until the model chooses it).
Result<TrainOptions> TrainOptionsFor(const TrainRequest& request);

// A warning for a per-GPU total no machine has (over 64 TiB, several times the largest GPU
// cluster node): "" below. The settings behind it are usually a context or batch typed too large.
std::string AbsurdTotalWarning(uint64_t bytes_per_gpu);

}  // namespace memfit
