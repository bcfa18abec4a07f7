#pragma once
// How far memfit's estimates have been from measurements, per class of estimate: the lowest and
// highest relative error (estimate - measured) / measured over the measured rows of that class
// in validation/results/*.csv (real transformers code on PyTorch's CPU allocator, compared by
// `memfit validate`). The table is generated from those rows (src/estimate/accuracy_bands.inc,
// rewritten by MEMFIT_UPDATE_ACCURACY_BANDS=1 build/memfit_tests
// --gtest_filter='AccuracyBands*'; a test fails when it is stale). docs/accuracy.md.

#include <cstdint>
#include <string>
#include <string_view>

#include "memfit/engine.h"

namespace memfit {

enum class AccuracyClass : uint8_t {
  kWeights,    // the weights as loaded (estimate-memory, fit --task load): validate's load rows
  kInference,  // transformers inference (weights, KV cache, activation peak): inference rows
  kTraining,   // a training step (forward, backward, optimizer step): training rows
  kServing,    // vLLM / SGLang budgets (inference/fit --engine vllm|sglang): not measured
  kLlamaCpp,   // llama.cpp buffers of a GGUF model: not measured
};
std::string_view AccuracyClassName(AccuracyClass c);  // "weights", "inference", ...
// An inference estimate's class by engine: transformers is kInference, vLLM and SGLang are
// kServing, llama.cpp is kLlamaCpp.
AccuracyClass AccuracyClassFor(Engine engine);

struct AccuracyBand {
  AccuracyClass accuracy_class = AccuracyClass::kWeights;
  double min_error = 0;  // relative, (estimate - measured) / measured; 0 when rows == 0
  double max_error = 0;
  uint64_t rows = 0;     // measured rows behind the band; 0: not measured
  std::string_view source;  // where the rows are ("validation/results"); "" when not measured
};

// The band of a class (rows 0: no measurement of that class).
AccuracyBand AccuracyFor(AccuracyClass c);

// One line for tables: "accuracy (training): CPU-measured -2.7% .. +3.3% over 28 rows
// (validation/results)" or "accuracy (serving): not measured".
std::string AccuracyLine(const AccuracyBand& band);

}  // namespace memfit
