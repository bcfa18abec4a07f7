// vLLM's profile-run terms (estimate/vllm_profile_run.h); docs/estimates.md, "vLLM's profile run".

#include "estimate/vllm_profile_run.h"

#include <algorithm>

#include "estimate/saturating_math.h"

namespace memfit::estimate {

using saturating::Add;
using saturating::Mul;

uint64_t VllmSamplerBytesPerLogit(VllmSampler sampler, uint64_t c) {
  switch (sampler) {
    case VllmSampler::kTorchSort: return c + 4 + 4 + 8 + 1 + 4 + 1 + 4;
    case VllmSampler::kFlashInfer: return c + 4 + 4 + 4;
    case VllmSampler::kNone: return c + 4;
  }
  return c + 4;
}

uint64_t VllmFusedMoeBytes(uint64_t tokens, uint64_t num_experts, uint64_t top_k,
                           uint64_t expert_width, uint64_t hidden, bool gated, uint64_t c) {
  const uint64_t n = gated ? Mul({2, expert_width}) : expert_width;
  const uint64_t rows = Mul({tokens, top_k});
  const uint64_t router = Mul({tokens, num_experts, c});
  const uint64_t topk = Mul({rows, 4 + 4});
  const uint64_t cache13 = Mul({rows, std::max(n, hidden), c});
  const uint64_t cache2 = Mul({rows, gated ? n / 2 : n, c});
  return Add({router, topk, cache13, cache2});
}

bool HasMoeLayers(const Model& model) {
  return std::any_of(model.hp.layers.begin(), model.hp.layers.end(),
                     [](const LayerInfo& l) { return l.moe; });
}

bool HasMultimodalEncoder(const Model& model) {
  return std::any_of(model.tensors.begin(), model.tensors.end(), [](const Tensor& t) {
    return t.component.starts_with("vision") || t.component.find("audio") != std::string::npos ||
           t.component == "embed_vision";
  });
}

uint64_t VllmEncoderCacheBytes(uint64_t budget_tokens, uint64_t hidden, uint64_t c) {
  return Mul({budget_tokens, hidden, c});
}

}  // namespace memfit::estimate
