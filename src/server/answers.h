#pragma once
// The API's answers to typed requests (memfit/requests.h): the library runs the request and the
// renderer writes the JSON `memfit <command> --format json` prints, byte for byte. Failures take
// the status of their error's kind (StatusFor). The server's own directories in the answer become
// $HF_HUB_CACHE, ~, ... (WithoutServerPaths).

#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "memfit/requests.h"
#include "server/api.h"

namespace memfit::server {

ApiResponse AnswerLoad(const LoadRequest& request);
ApiResponse AnswerInference(const InferenceRequest& request);
ApiResponse AnswerTrain(const TrainRequest& request);
ApiResponse AnswerFit(const FitCommandRequest& request);
ApiResponse AnswerInspect(const InspectRequest& request);
ApiResponse AnswerGpus(const GpusRequest& request);
ApiResponse AnswerModels(const ModelsRequest& request);

// A command's body (past CheckApiBody) as its typed request, and the work that answers it; or the
// body's error (answered 400, like the CLI's usage errors).
Result<std::function<ApiResponse()>> TypedApiWork(std::string_view command,
                                                  const nlohmann::json& body);

}  // namespace memfit::server
