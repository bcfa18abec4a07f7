#pragma once
// SGLang's NEXTN speculative draft: the checkpoint's multi-token-prediction layers, which the
// target model never loads, run as a draft model beside it (docs/estimates.md, "Speculative
// decoding"). Pure.

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/estimate_inference.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit::estimate {

// SGLang's auto_choose_speculative_params: (num_steps, eagle_topk, num_draft_tokens) for a model
// whose --speculative-num-steps is unset: (3, 1, 4) for the DeepSeek, GLM-4-MoE and GPT-OSS
// classes, (5, 4, 8) for the rest in the 2025 releases.
struct SpeculativeParams {
  uint64_t num_steps = 0;
  uint64_t eagle_topk = 0;
  uint64_t num_draft_tokens = 0;
};
SpeculativeParams SglangSpeculativeDefaults(const std::string& architecture);

// The draft of `o.speculative_algorithm` NEXTN on `e`'s layout: the MTP layers' stored bytes per
// GPU, their KV bytes per token (the model's largest attention layer's, per MTP layer) and the
// headroom tokens SGLang's draft_runner_cache_size adds to the pools. Zero for any other
// algorithm (an EAGLE/EAGLE3/STANDALONE draft is another checkpoint); an error naming the flag
// for NEXTN on a model without MTP layers. Assumption lines go to `assumptions`.
Result<SpeculativeDraft> NextnDraft(const Model& model, const InferenceOptions& o,
                                    const InferenceEstimate& e,
                                    std::vector<std::string>& assumptions);

}  // namespace memfit::estimate
