#pragma once
// Renderers for `memfit inference` and `memfit train`: component tables (per GPU, plus CPU RAM
// when offloading), JSON (schemas in docs/json.md), CSV and Markdown. They never print.

#include <string>

#include "memfit/context_curve.h"
#include "memfit/estimate_inference.h"
#include "memfit/estimate_train.h"
#include "memfit/model.h"
#include "memfit/render.h"
#include "memfit/verdict.h"

namespace memfit {

// `curve` (memfit inference --curve): memory against context and each GPU's longest context,
// as JSON's "curve" and, in the table, one row per point and a line per GPU.
// `verdict` (--gpu): the first line of the table and JSON's "verdict" (null without one).
// `layout`: rows whose bytes are zero are left out of the table unless layout.wide.
std::string RenderInference(const Model& model, const InferenceOptions& options,
                            const InferenceEstimate& estimate, OutputFormat format,
                            const ContextCurve* curve = nullptr,
                            const HardwareVerdict* verdict = nullptr,
                            const TextLayout& layout = {});

std::string RenderTrain(const Model& model, const TrainOptions& options,
                        const TrainEstimate& estimate, OutputFormat format,
                        const HardwareVerdict* verdict = nullptr, const TextLayout& layout = {});

}  // namespace memfit

#include "memfit/validation.h"

namespace memfit {

// `memfit validate`: one row per measurement (estimate, measured, error, tolerance, status),
// a summary per class, and the rows memfit cannot express with the reason.
std::string RenderValidation(const std::vector<RowResult>& results, OutputFormat format);

}  // namespace memfit
