// The measured error band of each class of estimate (memfit/accuracy.h). The numbers are data,
// generated from validation/results/*.csv (accuracy_bands.inc), never typed by hand.

#include "memfit/accuracy.h"

#include <array>

#include <fmt/format.h>

namespace memfit {
namespace {

struct MeasuredBand {
  AccuracyClass accuracy_class;
  double min_error, max_error;
  uint64_t rows;
};

// Every measured class, from validation/results/*.csv; a class absent here is not measured.
constexpr MeasuredBand kMeasured[] = {
#include "estimate/accuracy_bands.inc"
};

constexpr std::string_view kSource = "validation/results";

}  // namespace

std::string_view AccuracyClassName(AccuracyClass c) {
  switch (c) {
    case AccuracyClass::kWeights: return "weights";
    case AccuracyClass::kInference: return "inference";
    case AccuracyClass::kTraining: return "training";
    case AccuracyClass::kServing: return "serving";
    case AccuracyClass::kLlamaCpp: return "llama.cpp";
  }
  return "?";
}

AccuracyClass AccuracyClassFor(Engine engine) {
  switch (engine) {
    case Engine::kTransformers: return AccuracyClass::kInference;
    case Engine::kVllm:
    case Engine::kSglang: return AccuracyClass::kServing;
    case Engine::kLlamaCpp: return AccuracyClass::kLlamaCpp;
  }
  return AccuracyClass::kServing;
}

AccuracyBand AccuracyFor(AccuracyClass c) {
  for (const MeasuredBand& m : kMeasured) {
    if (m.accuracy_class == c && m.rows > 0) {
      return {.accuracy_class = c, .min_error = m.min_error, .max_error = m.max_error,
              .rows = m.rows, .source = kSource};
    }
  }
  AccuracyBand none;
  none.accuracy_class = c;
  return none;
}

std::string AccuracyLine(const AccuracyBand& b) {
  if (b.rows == 0) {
    return fmt::format("accuracy ({}): not measured", AccuracyClassName(b.accuracy_class));
  }
  return fmt::format("accuracy ({}): CPU-measured {:+.1f}% .. {:+.1f}% over {} rows ({})",
                     AccuracyClassName(b.accuracy_class), b.min_error * 100, b.max_error * 100,
                     b.rows, b.source);
}

}  // namespace memfit
