#pragma once
// The API's answers to typed requests (memfit/requests.h): the library runs the request and the
// renderer writes the JSON `memfit <command> --format json` prints, byte for byte. Failures take
// the status of their error's kind (StatusFor). The server's own directories in the answer become
// $HF_HUB_CACHE, ~, ... (WithoutServerPaths).

#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "memfit/render.h"
#include "memfit/requests.h"
#include "api/body.h"

namespace memfit::api {

ApiResponse AnswerLoad(const LoadRequest& request, OutputFormat format = OutputFormat::kJson);
ApiResponse AnswerInference(const InferenceRequest& request, OutputFormat format = OutputFormat::kJson);
ApiResponse AnswerTrain(const TrainRequest& request, OutputFormat format = OutputFormat::kJson);
ApiResponse AnswerFit(const FitCommandRequest& request, OutputFormat format = OutputFormat::kJson);
ApiResponse AnswerInspect(const InspectRequest& request, OutputFormat format = OutputFormat::kJson);
ApiResponse AnswerGpus(const GpusRequest& request, OutputFormat format = OutputFormat::kJson);
ApiResponse AnswerModels(const ModelsRequest& request, OutputFormat format = OutputFormat::kJson);

// A command's body (past CheckApiBody) as its typed request, and the work that answers it; or the
// body's error (answered 400, like the CLI's usage errors).
// `format`: json (the API's body) or the CLI's table, csv or markdown for the same request.
Result<std::function<ApiResponse()>> TypedApiWork(std::string_view command,
                                                  const nlohmann::json& body,
                                                  OutputFormat format = OutputFormat::kJson);

}  // namespace memfit::api
