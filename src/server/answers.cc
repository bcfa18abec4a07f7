#include "server/answers.h"

#include "cli/llamacpp_cli.h"
#include "memfit/render.h"
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
  return {200, WithoutServerPaths(RenderInference(answer->model->model(), answer->options,
                                                  answer->estimate, OutputFormat::kJson,
                                                  answer->curve ? &*answer->curve : nullptr))};
}

ApiResponse AnswerTrain(const TrainRequest& request) {
  auto answer = RunTrainRequest(request);
  if (!answer) return Failure(answer.error());
  return {200, WithoutServerPaths(RenderTrain(answer->model->model(), answer->options,
                                              answer->estimate, OutputFormat::kJson))};
}

std::optional<Result<std::function<ApiResponse()>>> TypedApiWork(std::string_view command,
                                                                const nlohmann::json& body) {
  using Work = std::function<ApiResponse()>;
  if (command == "estimate-memory") {
    auto request = LoadRequestFromJson(body);
    if (!request) return Result<Work>(request.error());
    return Result<Work>(Work([r = std::move(*request)] { return AnswerLoad(r); }));
  }
  if (command == "inference") {
    auto request = InferenceRequestFromJson(body);
    if (!request) return Result<Work>(request.error());
    return Result<Work>(Work([r = std::move(*request)] { return AnswerInference(r); }));
  }
  if (command == "train") {
    auto request = TrainRequestFromJson(body);
    if (!request) return Result<Work>(request.error());
    return Result<Work>(Work([r = std::move(*request)] { return AnswerTrain(r); }));
  }
  return std::nullopt;
}

}  // namespace memfit::server
