#pragma once
// The API's answers to typed requests (memfit/requests.h): the library runs the request and the
// renderer writes the JSON `memfit <command> --format json` prints, byte for byte. Failures take
// the status of their error's kind (StatusFor). The server's own directories in the answer become
// $HF_HUB_CACHE, ~, ... (WithoutServerPaths).

#include <functional>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "memfit/requests.h"
#include "server/api.h"

namespace memfit::server {

ApiResponse AnswerLoad(const LoadRequest& request);
ApiResponse AnswerInference(const InferenceRequest& request);
ApiResponse AnswerTrain(const TrainRequest& request);

// For a command the API answers through a typed request (estimate-memory, inference, train): the work to run,
// or the body's error (answered 400, like the CLI's usage errors). nullopt for the commands that
// still run the CLI (RunApiCommand).
std::optional<Result<std::function<ApiResponse()>>> TypedApiWork(std::string_view command,
                                                                const nlohmann::json& body);

}  // namespace memfit::server
