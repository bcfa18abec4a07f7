#include "server/answers.h"

#include "cli/llamacpp_cli.h"
#include "memfit/render.h"
#include "memfit/render_fit.h"
#include "memfit/render_memory.h"
#include "server/request_json.h"

namespace memfit::server {
namespace {

ApiResponse Failure(const Error& error) {
  return ErrorResponse(StatusFor(error.kind), WithoutServerPaths(error.message));
}

// A GGUF model (or --engine llama.cpp): `memfit inference`'s llama.cpp path with its flags.
ApiResponse AnswerLlamaCpp(const InferenceRequest& r, std::optional<ResolvedModel> resolved) {
  cli::LlamaCppCliArgs llama = cli::LlamaCppArgsFor(r);
  auto options = cli::ResolveLlamaCppArgs(llama);
  if (!options) return Failure(options.error());
  cli::ModelArgs model{.spec = r.model.spec, .revision = r.model.revision,
                       .offline = r.model.offline, .token = r.model.token,
                       .gguf_file = r.model.gguf_file};
  auto text = cli::LlamaCppInferenceText(model, llama, *options, OutputFormat::kJson,
                                         std::move(resolved));
  if (!text) return Failure(text.error());
  return {200, WithoutServerPaths(std::move(*text))};
}

// A GGUF model (or --engine llama.cpp): `memfit fit`'s llama.cpp --fit path with its flags. A
// model that does not fit is still a plan (its "fits" says so), answered 200; the CLI exits 1.
ApiResponse AnswerLlamaCppFit(const FitCommandRequest& r, const FitAnswer& answer,
                              std::optional<ResolvedModel> resolved) {
  cli::LlamaCppCliArgs llama = cli::LlamaCppFitArgsFor(r, answer.gpus);
  cli::ModelArgs model{.spec = r.model.spec, .revision = r.model.revision,
                       .offline = r.model.offline, .token = r.model.token,
                       .gguf_file = r.model.gguf_file};
  auto report = cli::LlamaCppFitReport(model, llama, OutputFormat::kJson, std::move(resolved));
  if (!report) return Failure(report.error());
  return {200, WithoutServerPaths(std::move(report->text))};
}

}  // namespace

ApiResponse AnswerLoad(const LoadRequest& request) {
  auto answer = RunLoadRequest(request);
  if (!answer) return Failure(answer.error());
  if (answer->accelerate) {
    return {200, WithoutServerPaths(
                     RenderAccelerate(request.model.spec, *answer->accelerate, OutputFormat::kJson))};
  }
  return {200, WithoutServerPaths(RenderLoadEstimate(answer->model->model(), answer->estimate,
                                                     OutputFormat::kJson))};
}

ApiResponse AnswerInference(const InferenceRequest& request) {
  auto answer = RunInferenceRequest(request);
  if (!answer) return Failure(answer.error());
  if (answer->llamacpp) return AnswerLlamaCpp(request, std::move(answer->resolved));
  return {200, WithoutServerPaths(RenderInferenceAnswer(*answer, OutputFormat::kJson))};
}

ApiResponse AnswerTrain(const TrainRequest& request) {
  auto answer = RunTrainRequest(request);
  if (!answer) return Failure(answer.error());
  return {200, WithoutServerPaths(RenderTrainAnswer(*answer, OutputFormat::kJson))};
}

ApiResponse AnswerFit(const FitCommandRequest& request) {
  auto answer = RunFitCommandRequest(request);
  if (!answer) return Failure(answer.error());
  if (answer->kind == FitAnswer::Kind::kLlamaCpp) {
    std::optional<ResolvedModel> resolved = std::move(answer->resolved);
    return AnswerLlamaCppFit(request, *answer, std::move(resolved));
  }
  return {200, WithoutServerPaths(RenderFitAnswer(*answer, OutputFormat::kJson))};
}

ApiResponse AnswerInspect(const InspectRequest& request) {
  auto answer = RunInspectRequest(request);
  if (!answer) return Failure(answer.error());
  return {200, WithoutServerPaths(RenderInspect(answer->model->model(), OutputFormat::kJson,
                                                answer->depth))};
}

ApiResponse AnswerGpus(const GpusRequest& request) {
  auto gpus = RunGpusRequest(request);
  if (!gpus) return Failure(gpus.error());
  return {200, RenderGpuList(*gpus, OutputFormat::kJson)};
}

ApiResponse AnswerModels(const ModelsRequest& request) {
  auto entries = RunModelsRequest(request);
  if (!entries) return Failure(entries.error());
  return {200, RenderModelList(*entries, OutputFormat::kJson)};
}

namespace {

template <typename Request>
Result<std::function<ApiResponse()>> Work(Result<Request> request,
                                          ApiResponse (*answer)(const Request&)) {
  if (!request) return request.error();
  return std::function<ApiResponse()>([r = std::move(*request), answer] { return answer(r); });
}

}  // namespace

Result<std::function<ApiResponse()>> TypedApiWork(std::string_view command,
                                                  const nlohmann::json& body) {
  if (command == "estimate-memory") return Work(LoadRequestFromJson(body), AnswerLoad);
  if (command == "inference") return Work(InferenceRequestFromJson(body), AnswerInference);
  if (command == "train") return Work(TrainRequestFromJson(body), AnswerTrain);
  if (command == "fit") return Work(FitRequestFromJson(body), AnswerFit);
  if (command == "inspect") return Work(InspectRequestFromJson(body), AnswerInspect);
  if (command == "gpus") return Work(GpusRequestFromJson(body), AnswerGpus);
  if (command == "models") return Work(ModelsRequestFromJson(body), AnswerModels);
  return MakeError("unknown command \"{}\"", command);
}

}  // namespace memfit::server
