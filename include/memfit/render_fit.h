#pragma once
// Renderers for `memfit fit` and `memfit gpus`: strings out, never printing.

#include <span>
#include <string>

#include "memfit/fit.h"
#include "memfit/gpu.h"
#include "memfit/render.h"
#include "memfit/verdict.h"

namespace memfit {

struct FitReportInput {
  const Model* model = nullptr;
  const FitRequest* request = nullptr;
  const RuntimeModel* runtime = nullptr;
  const FitPlan* plan = nullptr;
  const HardwareVerdict* verdict = nullptr;  // the first line, and JSON's "verdict_detail"
  TextLayout layout{};                       // the terminal's width; --wide
};
// The command that applies a piece of advice: `memfit train MODEL ... FLAGS --gpu ...` for
// training (its flags are train's), `memfit fit MODEL --gpu ... FLAGS` otherwise; "" without flags.
std::string AdviceCommand(const FitReportInput& input, const Advice& advice);
std::string RenderFitPlan(const FitReportInput& input, OutputFormat format);

// "model.layers.0-13, model.norm": numbered siblings in a row collapsed into a range.
std::string CompressModuleList(const std::vector<std::string>& modules);

// Memory in GiB as it is (MemoryBytes: the vendor's "GB" are binary); the source column is left
// out first when the table is wider than layout.width.
std::string RenderGpuList(std::span<const GpuSpec* const> gpus, OutputFormat format,
                          const TextLayout& layout = {});

}  // namespace memfit
