#include "api/answers.h"

#include "api/llamacpp_answer.h"
#include "memfit/api.h"
#include "memfit/render.h"
#include "memfit/render_fit.h"
#include "memfit/render_memory.h"
#include "api/request_json.h"

namespace memfit::api {
namespace {

ApiResponse Failure(const Error& error) {
  ApiResponse response = ErrorResponse(StatusFor(error.kind), WithoutServerPaths(error.message));
  response.kind = error.kind;
  return response;
}

// A GGUF model (or --engine llama.cpp): `memfit inference`'s llama.cpp path with its flags.
ApiResponse AnswerLlamaCpp(const InferenceRequest& r, std::optional<ResolvedModel> resolved,
                           OutputFormat format) {
  LlamaCppArgs llama = LlamaCppArgsFor(r);
  auto options = ResolveLlamaCppArgs(llama);
  if (!options) return Failure(options.error());
  auto text = LlamaCppInferenceText(r.model, llama, *options, format, std::move(resolved));
  if (!text) return Failure(text.error());
  return {200, WithoutServerPaths(std::move(*text))};
}

// A GGUF model (or --engine llama.cpp): `memfit fit`'s llama.cpp --fit path with its flags. A
// model that does not fit is still a plan (its "fits" says so), answered 200; the CLI exits 1.
ApiResponse AnswerLlamaCppFit(const FitCommandRequest& r, const FitAnswer& answer,
                              std::optional<ResolvedModel> resolved, OutputFormat format) {
  LlamaCppArgs llama = LlamaCppFitArgsFor(r, answer.gpus);
  auto report = LlamaCppFitReport(r.model, llama, format, std::move(resolved));
  if (!report) return Failure(report.error());
  ApiResponse response{200, WithoutServerPaths(std::move(report->text))};
  response.fits = report->fits;
  return response;
}

}  // namespace

ApiResponse AnswerLoad(const LoadRequest& request, OutputFormat format) {
  auto answer = RunLoadRequest(request);
  if (!answer) return Failure(answer.error());
  if (answer->accelerate) {
    return {200, WithoutServerPaths(
                     RenderAccelerate(request.model.spec, *answer->accelerate, format))};
  }
  return {200, WithoutServerPaths(RenderLoadEstimate(answer->model->model(), answer->estimate,
                                                     format))};
}

ApiResponse AnswerInference(const InferenceRequest& request, OutputFormat format) {
  auto answer = RunInferenceRequest(request);
  if (!answer) return Failure(answer.error());
  if (answer->llamacpp) return AnswerLlamaCpp(request, std::move(answer->resolved), format);
  return {200, WithoutServerPaths(RenderInferenceAnswer(*answer, format))};
}

ApiResponse AnswerTrain(const TrainRequest& request, OutputFormat format) {
  auto answer = RunTrainRequest(request);
  if (!answer) return Failure(answer.error());
  return {200, WithoutServerPaths(RenderTrainAnswer(*answer, format))};
}

ApiResponse AnswerFit(const FitCommandRequest& request, OutputFormat format) {
  auto answer = RunFitCommandRequest(request);
  if (!answer) return Failure(answer.error());
  if (answer->kind == FitAnswer::Kind::kLlamaCpp) {
    std::optional<ResolvedModel> resolved = std::move(answer->resolved);
    return AnswerLlamaCppFit(request, *answer, std::move(resolved), format);
  }
  return {200, WithoutServerPaths(RenderFitAnswer(*answer, format))};
}

ApiResponse AnswerInspect(const InspectRequest& request, OutputFormat format) {
  auto answer = RunInspectRequest(request);
  if (!answer) return Failure(answer.error());
  return {200, WithoutServerPaths(RenderInspect(answer->model->model(), format,
                                                answer->depth))};
}

ApiResponse AnswerGpus(const GpusRequest& request, OutputFormat format) {
  auto gpus = RunGpusRequest(request);
  if (!gpus) return Failure(gpus.error());
  return {200, RenderGpuList(*gpus, format)};
}

ApiResponse AnswerModels(const ModelsRequest& request, OutputFormat format) {
  auto entries = RunModelsRequest(request);
  if (!entries) return Failure(entries.error());
  return {200, RenderModelList(*entries, format)};
}

namespace {

template <typename Request>
Result<std::function<ApiResponse()>> Work(Result<Request> request,
                                          ApiResponse (*answer)(const Request&, OutputFormat),
                                          OutputFormat format) {
  if (!request) return request.error();
  return std::function<ApiResponse()>(
      [r = std::move(*request), answer, format] { return answer(r, format); });
}

}  // namespace

Result<std::function<ApiResponse()>> TypedApiWork(std::string_view command,
                                                  const nlohmann::json& body,
                                                  OutputFormat format) {
  if (command == "estimate-memory") return Work(LoadRequestFromJson(body), AnswerLoad, format);
  if (command == "inference") return Work(InferenceRequestFromJson(body), AnswerInference, format);
  if (command == "train") return Work(TrainRequestFromJson(body), AnswerTrain, format);
  if (command == "fit") return Work(FitRequestFromJson(body), AnswerFit, format);
  if (command == "inspect") return Work(InspectRequestFromJson(body), AnswerInspect, format);
  if (command == "gpus") return Work(GpusRequestFromJson(body), AnswerGpus, format);
  if (command == "models") return Work(ModelsRequestFromJson(body), AnswerModels, format);
  if (command == "options") {
    if (!body.empty()) return MakeError("options: the request body must be {{}}");
    return std::function<ApiResponse()>([] { return ApiResponse{200, ApiOptionsJson()}; });
  }
  return MakeError("unknown command \"{}\"", command);
}

}  // namespace memfit::api
