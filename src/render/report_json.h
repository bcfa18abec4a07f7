#pragma once
// The JSON documents behind the renderers' --format json (schemas in docs/json.md), for the
// render module's own use and its tests: the public renderers (memfit/render*.h,
// memfit/llamacpp_report.h) return them as strings, so no public header exposes nlohmann::json.

#include <nlohmann/json.hpp>

namespace memfit {

// Declared, not included: each renderer includes the headers of what it renders (fit.h and
// deploy.h both name a Verdict).
struct AccuracyBand;
struct ContextCurve;
struct DeployReportInput;
struct FitReportInput;
struct HardwareVerdict;
struct InferenceEstimate;
struct InferenceOptions;
struct LlamaCppEstimate;
struct LoadEstimate;
struct Model;
struct TrainEstimate;
struct TrainOptions;

// How far the estimate's class has been from measurements (docs/json.md, "accuracy"): every
// estimate's JSON carries it.
nlohmann::json AccuracyJson(const AccuracyBand& band);
// The verdict of a command given hardware (docs/json.md, "verdict").
nlohmann::ordered_json HardwareVerdictJson(const HardwareVerdict& verdict);
// The fields that open the documents describing one model (inspect, estimate-memory): "schema",
// "model", "source", "model_type", "architecture".
nlohmann::json ModelDocumentJson(const char* schema, const Model& model);
// estimate-memory.
nlohmann::json LoadEstimateJson(const Model& model, const LoadEstimate& estimate);
// inspect: tensors grouped by module, dtype histogram, parameter count.
nlohmann::json InspectJson(const Model& model);
// fit (the device map planner) and fit --engine (deployments).
nlohmann::ordered_json FitPlanJson(const FitReportInput& input);
nlohmann::json DeployJson(const DeployReportInput& input);
// inference and train; `curve`: --curve's "curve".
nlohmann::json InferenceJson(const Model& model, const InferenceOptions& options,
                             const InferenceEstimate& estimate,
                             const ContextCurve* curve = nullptr);
nlohmann::json TrainJson(const Model& model, const TrainOptions& options,
                         const TrainEstimate& estimate);
// llama.cpp (GGUF) inference.
nlohmann::json LlamaCppEstimateJson(const Model& model, const LlamaCppEstimate& estimate,
                                    const ContextCurve* curve = nullptr);

}  // namespace memfit
