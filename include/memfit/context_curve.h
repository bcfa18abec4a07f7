#pragma once
// Memory against context for one inference setting, and where each GPU stops fitting: the
// question "how much context fits on my card?" in one call (the web page's chart, `memfit
// inference --curve`). Pure: every point and every crossing is an exact inference estimate at that
// context, never an extrapolation (docs/estimates.md, "Context curve").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/estimate_inference.h"
#include "memfit/llamacpp.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit {

struct CurveGpu {
  std::string name;
  uint64_t memory_bytes = 0;
  uint32_t compute_capability = 0;  // 0 = unknown
};

struct CurvePoint {
  uint64_t context = 0;
  uint64_t bytes = 0;  // the curve's metric at this context
};

struct CurveLimit {
  std::string gpu;
  // What the metric is held against: the GPU's memory (transformers), or the KV pool the engine
  // leaves on it (vLLM, SGLang); 0 when the engine does not run there (see `note`).
  uint64_t budget_bytes = 0;
  // The longest context whose metric stays within the budget: nullopt when every context up to
  // the curve's end fits, 0 when none does.
  std::optional<uint64_t> longest_context{};
  std::string note{};
};

struct ContextCurve {
  // "total_per_gpu" (transformers: everything per GPU), "kv_cache" (vLLM, SGLang: the batch's
  // KV cache, held against the engine's pre-allocated pool) or "largest_gpu" (llama.cpp: the
  // largest GPU's allocations with every layer offloaded).
  std::string metric;
  uint64_t max_context = 0;  // the curve's last point: the model's longest context
  std::vector<CurvePoint> points;
  std::vector<CurveLimit> limits;
  std::vector<std::string> assumptions;
};

// The curve for `options` at contexts 256, 512, ... up to the model's max_position_embeddings
// (131,072 when the config names none, said in `assumptions`), plus options.context_tokens; one
// limit per GPU, found by bisection on exact estimates.
Result<ContextCurve> EstimateContextCurve(const Model& model, const InferenceOptions& options,
                                          const std::vector<CurveGpu>& gpus);
// The same for llama.cpp (GGUF): every layer on the GPU(s) (-ngl all) and the largest GPU's
// allocations (weights, KV cache, compute buffers, CUDA context) against its memory.
Result<ContextCurve> EstimateLlamaCppContextCurve(const Model& model, const LlamaCppOptions& options,
                                                  const std::vector<CurveGpu>& gpus);

}  // namespace memfit
