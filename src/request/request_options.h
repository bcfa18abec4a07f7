#pragma once
// The words of a request -> estimator options (everything that does not need the model): the
// stage of RunInferenceRequest / RunTrainRequest before the model, shared with `memfit
// validate`, which builds the same requests from its rows (memfit/validation.h). Errors name the
// flag ("--dtype: ...").

#include <cstdint>
#include <string>

#include "memfit/describe.h"
#include "memfit/requests.h"

namespace memfit {

// InferenceOptions::context_tokens is left at its default: the model chooses it (ChooseContext).
Result<InferenceOptions> InferenceOptionsFor(const InferenceRequest& request);
// TrainOptions::seq is the request's context (0 until the model chooses it).
Result<TrainOptions> TrainOptionsFor(const TrainRequest& request);

// --speculative-algorithm for `engine`: SGLang's word upper-cased, "" for none; an error for
// another engine (no rule of theirs is modelled) or an unknown word.
Result<std::string> SpeculativeAlgorithmFor(const std::string& word, Engine engine);

// What SGLang's mem_fraction_static rule reads from config.json's vision_config
// (adjust_mem_fraction_for_vlm); nullopt without one. Errors name the key.
Result<std::optional<SglangVisionConfig>> SglangVisionFor(const ModelInputs& inputs);
// Whether SGLang runs the model on its MLA attention backend (a layer's attention is MLA), which
// its mem_fraction_static rule reads (InferenceOptions::sglang_mla).
bool SglangMla(const Model& model);

// A warning for a per-GPU total no machine has (over 64 TiB, several times the largest GPU
// cluster node): "" below. The settings behind it are usually a context or batch typed too large.
std::string AbsurdTotalWarning(uint64_t bytes_per_gpu);

}  // namespace memfit
