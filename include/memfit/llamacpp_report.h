#pragma once
// Rendering llama.cpp estimates and fit plans (strings only; the CLI prints them).

#include <string>

#include "memfit/context_curve.h"
#include "memfit/llamacpp.h"
#include "memfit/model.h"
#include "memfit/render.h"

namespace memfit {

// `curve` (--curve): memory against context and each GPU's longest context, as JSON's "curve"
// and, in the table, lines after it.
std::string RenderLlamaCppEstimate(const Model& model, const LlamaCppEstimate& estimate, OutputFormat format,
                                   const ContextCurve* curve = nullptr);
// `model_flags`: how the printed llama-server command names the model: "-m PATH", or
// "--hf-repo ORG/NAME --hf-file FILE" for a Hub repository.
std::string RenderLlamaCppFit(const Model& model, const LlamaCppFitPlan& plan,
                              const std::string& model_flags, OutputFormat format);

}  // namespace memfit
