#pragma once
// Renderers for `memfit fit` and `memfit gpus`: strings out, never printing.

#include <span>
#include <string>

#include "memfit/fit.h"
#include "memfit/gpu.h"
#include "memfit/render.h"

namespace memfit {

struct FitReportInput {
  const Model* model = nullptr;
  const FitRequest* request = nullptr;
  const RuntimeModel* runtime = nullptr;
  const FitPlan* plan = nullptr;
};
std::string RenderFitPlan(const FitReportInput& input, OutputFormat format);

// "model.layers.0-13, model.norm": numbered siblings in a row collapsed into a range.
std::string CompressModuleList(const std::vector<std::string>& modules);

std::string RenderGpuList(std::span<const GpuSpec* const> gpus, OutputFormat format);

}  // namespace memfit
