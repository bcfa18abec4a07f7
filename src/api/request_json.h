#pragma once
// A JSON request body -> the typed request the CLI builds from its flags (memfit/requests.h), so
// the API and the CLI hand the library the same request. The body has already passed
// CheckApiBody's checks (option names, refused options, value shapes, a model that is no local
// path). Keys are the CLI's long flags without "--" ("kv-dtype", "curve-gpu", and the aliases:
// "ctx-size", "ctx", "micro-batch", "mem-fraction-static", "library_name", ...); a string or a number is one
// value, true sets a flag, false and null leave the default, an array repeats the option. An
// unknown key or one option given twice (under two names) is a usage error (ErrorKind::kUsage:
// the server answers 400); a value its option refuses (type, set, range) is bad input (422).

#include <nlohmann/json.hpp>

#include "memfit/requests.h"
#include "memfit/result.h"

namespace memfit::api {

Result<LoadRequest> LoadRequestFromJson(const nlohmann::json& body);
Result<InferenceRequest> InferenceRequestFromJson(const nlohmann::json& body);
Result<TrainRequest> TrainRequestFromJson(const nlohmann::json& body);
Result<FitCommandRequest> FitRequestFromJson(const nlohmann::json& body);
Result<InspectRequest> InspectRequestFromJson(const nlohmann::json& body);
Result<GpusRequest> GpusRequestFromJson(const nlohmann::json& body);    // no "model"
Result<ModelsRequest> ModelsRequestFromJson(const nlohmann::json& body);  // no "model"

// The long option names (without "--") each request reads, aliases included: for the test that
// the API and the CLI accept the same words.
std::vector<std::string> LoadRequestKeys();
std::vector<std::string> InferenceRequestKeys();
std::vector<std::string> TrainRequestKeys();
std::vector<std::string> FitRequestKeys();
std::vector<std::string> InspectRequestKeys();
std::vector<std::string> GpusRequestKeys();
std::vector<std::string> ModelsRequestKeys();

// Each request body's JSON Schema, from the same field table the parsers read, keyed by the
// component name docs/openapi.json gives it ("LoadRequest", "InferenceRequest", "TrainRequest",
// "FitRequest", "InspectRequest", "GpusRequest", "ModelsRequest"): the test that keeps the
// document equal to what the server accepts compares them.
nlohmann::json RequestBodySchemas();

// The option table of every command (memfit/api.h: ApiOptionsJson): names, aliases, type, default.
nlohmann::json OptionTable();

}  // namespace memfit::api
