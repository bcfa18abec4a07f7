#include "api/request_json.h"

#include "api/options.h"

#include <charconv>
#include <cstdlib>
#include <variant>

#include <fmt/format.h>

#include "formats/json.h"
#include "memfit/api.h"
#include "memfit/suggest.h"

namespace memfit::api {
namespace {

// A scalar's text, as the CLI would have read it ("4", "0.9", "h100").
std::string Text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());
  return value.dump();
}

Status SetFrom(const Option& option, const nlohmann::json& value, std::string_view key) {
  const Target& target = option.target;
  const std::string text = Text(value);
  auto bad = [&](std::string_view what) {
    return MakeError("option \"{}\": \"{}\" is not {}", key, text, what);
  };
  if (auto* u = std::get_if<uint64_t*>(&target)) {
    MEMFIT_ASSIGN_OR_RETURN(**u, ParseCount(option, text));
  } else if (auto* d = std::get_if<double*>(&target)) {
    char* end = nullptr;
    **d = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) return bad("a number");
  } else if (auto* s = std::get_if<std::string*>(&target)) {
    **s = text;
  } else if (auto* b = std::get_if<bool*>(&target)) {
    if (text == "true" || text == "1" || text == "on" || text == "yes") **b = true;
    else if (text == "false" || text == "0" || text == "off" || text == "no") **b = false;
    else return bad("true or false");
  } else if (auto* list = std::get_if<std::vector<std::string>*>(&target)) {
    (*list)->push_back(text);
  }
  return Ok{};
}

// A body that is no request of this command (a key it lacks, a key twice, a flag given a value): a
// usage error, as the CLI's (HTTP 400); a value its option refuses stays bad input (HTTP 422).
Error Usage(Error error) { return WithKind(std::move(error), ErrorKind::kUsage); }

template <typename Request>
Result<Request> FromJson(const nlohmann::json& body) {
  Request request;
  constexpr bool kHasModel = requires { request.model.spec; };
  if constexpr (kHasModel) {
    auto model = body.find("model");
    if (model == body.end() || !model->is_string()) return Usage(MakeError("\"model\" is required"));
    request.model.spec = model->template get<std::string>();
    // The Hub's summary line goes to the server's stderr, as the CLI's does.
    request.model.summary = [](const std::string& line) {
      fmt::print(stderr, "memfit: {}\n", line);
    };
  }
  std::vector<Option> fields = Options(request);
  std::vector<const Option*> given;
  for (const auto& [key, value] : body.items()) {
    if ((kHasModel && key == "model") || value.is_null() || (value.is_boolean() && !value.template get<bool>())) continue;
    const Option* field = nullptr;
    for (const Option& f : fields) {
      for (std::string_view name : f.names) {
        if (name == key) field = &f;
      }
    }
    if (!field) {
      std::vector<std::string> names = OptionNames(fields);
      if (kHasModel) names.push_back("model");
      return Usage(MakeError("option \"{}\": not an option of this command{}", key,
                       DidYouMean(key, names)));
    }
    for (const Option* g : given) {
      if (g == field) return Usage(MakeError("option \"{}\": given twice (under another name)", key));
    }
    given.push_back(field);
    const bool is_flag = std::holds_alternative<bool*>(field->target);
    const bool is_list = std::holds_alternative<std::vector<std::string>*>(field->target);
    if (value.is_boolean()) {
      if (!is_flag) return Usage(MakeError("option \"{}\": expected a value", key));
      *std::get<bool*>(field->target) = true;
      continue;
    }
    if (value.is_array()) {
      if (!is_list && value.size() != 1) return Usage(MakeError("option \"{}\": one value only", key));
      for (const auto& item : value) MEMFIT_RETURN_IF_ERROR(SetFrom(*field, item, key));
      continue;
    }
    MEMFIT_RETURN_IF_ERROR(SetFrom(*field, value, key));
  }
  // The same checks as the CLI's, on the options given: accepted values, ranges, sizes, GPUs.
  for (const Option* g : given) MEMFIT_RETURN_IF_ERROR(CheckOption(*g));
  return request;
}

template <typename Request>
std::vector<std::string> Keys() {
  Request request;
  std::vector<std::string> keys;
  for (const Option& f : Options(request)) {
    for (std::string_view name : f.names) keys.emplace_back(name);
  }
  return keys;
}

// The JSON Schema of one option's value, from the option table (the canonical form: the parser
// also takes a number as text and a scalar as a one-element array).
nlohmann::json ValueSchema(const Option& o) {
  nlohmann::json schema;
  if (std::holds_alternative<uint64_t*>(o.target)) {
    schema = {{"type", "integer"}, {"minimum", static_cast<uint64_t>(o.min)},
              {"maximum", static_cast<uint64_t>(o.max)}};
  } else if (std::holds_alternative<double*>(o.target)) {
    schema = {{"type", "number"}, {"minimum", o.min}, {"maximum", o.max}};
  } else if (std::holds_alternative<std::string*>(o.target)) {
    schema = {{"type", "string"}};
  } else if (std::holds_alternative<bool*>(o.target)) {
    schema = {{"type", "boolean"}};
  } else {
    schema = {{"oneOf", {{{"type", "string"}}, {{"type", "array"}, {"items", {{"type", "string"}}}}}}};
  }
  std::string description(o.help);
  if (!o.unit.empty()) description += " [" + std::string(o.unit) + "]";
  if (!o.choices.empty()) {
    description += " (values: ";
    for (size_t i = 0; i < o.choices.size(); ++i) description += (i ? ", " : "") + std::string(o.choices[i]);
    description += ")";
  }
  if (std::holds_alternative<std::vector<std::string>*>(o.target)) description += "; repeatable: one value or an array of values";
  schema["description"] = description;
  return schema;
}

template <typename Request>
nlohmann::json Schema() {
  Request request;
  nlohmann::json properties = nlohmann::json::object();
  nlohmann::json schema = {{"type", "object"}};
  if constexpr (requires { request.model.spec; }) {
    properties["model"] = {{"type", "string"},
                           {"description", "Hub id, Hub URL or catalog name (local paths are refused)"}};
    schema["required"] = {"model"};
  }
  for (const Option& f : Options(request)) {
    for (size_t i = 0; i < f.names.size(); ++i) {
      nlohmann::json value = ValueSchema(f);
      if (i > 0) value["description"] = fmt::format("alias of \"{}\"", f.names[0]);
      properties[std::string(f.names[i])] = std::move(value);
    }
  }
  schema["properties"] = std::move(properties);
  schema["additionalProperties"] = false;
  return schema;
}

nlohmann::json ValueOf(const Target& target) {
  return std::visit([](auto* p) { return nlohmann::json(*p); }, target);
}

template <typename Request>
nlohmann::json OptionList() {
  Request request;  // its defaults, stated once in memfit/requests.h
  nlohmann::json list = nlohmann::json::array();
  for (const Option& o : Options(request)) {
    nlohmann::json aliases = nlohmann::json::array();
    for (size_t i = 1; i < o.names.size(); ++i) aliases.push_back(o.names[i]);
    nlohmann::json choices = nlohmann::json::array();
    for (std::string_view c : o.choices) choices.push_back(c);
    nlohmann::json entry = {{"name", o.names[0]}, {"aliases", aliases}, {"type", TypeName(o)},
                            {"default", ValueOf(o.target)}, {"help", o.help}, {"unit", o.unit},
                            {"choices", choices}, {"group", o.group}};
    if (std::holds_alternative<uint64_t*>(o.target) || std::holds_alternative<double*>(o.target)) {
      entry["min"] = o.min;
      entry["max"] = o.max;
    }
    if (!o.short_name.empty()) entry["short"] = o.short_name;
    list.push_back(std::move(entry));
  }
  return list;
}

}  // namespace

nlohmann::json OptionTable() {
  return {{"schema", "memfit.options/v1"},
          {"commands",
           {{"estimate-memory", OptionList<LoadRequest>()},
            {"inspect", OptionList<InspectRequest>()},
            {"inference", OptionList<InferenceRequest>()},
            {"train", OptionList<TrainRequest>()},
            {"fit", OptionList<FitCommandRequest>()},
            {"gpus", OptionList<GpusRequest>()},
            {"models", OptionList<ModelsRequest>()},
            {"options", nlohmann::json::array()}}}};
}

nlohmann::json RequestBodySchemas() {
  return {{"LoadRequest", Schema<LoadRequest>()},
          {"InferenceRequest", Schema<InferenceRequest>()},
          {"TrainRequest", Schema<TrainRequest>()},
          {"FitRequest", Schema<FitCommandRequest>()},
          {"InspectRequest", Schema<InspectRequest>()},
          {"GpusRequest", Schema<GpusRequest>()},
          {"ModelsRequest", Schema<ModelsRequest>()}};
}

Result<LoadRequest> LoadRequestFromJson(const nlohmann::json& body) {
  return FromJson<LoadRequest>(body);
}
Result<InferenceRequest> InferenceRequestFromJson(const nlohmann::json& body) {
  return FromJson<InferenceRequest>(body);
}
Result<TrainRequest> TrainRequestFromJson(const nlohmann::json& body) {
  return FromJson<TrainRequest>(body);
}
Result<FitCommandRequest> FitRequestFromJson(const nlohmann::json& body) {
  return FromJson<FitCommandRequest>(body);
}
Result<InspectRequest> InspectRequestFromJson(const nlohmann::json& body) {
  return FromJson<InspectRequest>(body);
}
Result<GpusRequest> GpusRequestFromJson(const nlohmann::json& body) {
  return FromJson<GpusRequest>(body);
}
Result<ModelsRequest> ModelsRequestFromJson(const nlohmann::json& body) {
  return FromJson<ModelsRequest>(body);
}
std::vector<std::string> FitRequestKeys() { return Keys<FitCommandRequest>(); }
std::vector<std::string> InspectRequestKeys() { return Keys<InspectRequest>(); }
std::vector<std::string> GpusRequestKeys() { return Keys<GpusRequest>(); }
std::vector<std::string> ModelsRequestKeys() { return Keys<ModelsRequest>(); }
std::vector<std::string> LoadRequestKeys() { return Keys<LoadRequest>(); }
std::vector<std::string> InferenceRequestKeys() { return Keys<InferenceRequest>(); }
std::vector<std::string> TrainRequestKeys() { return Keys<TrainRequest>(); }

}  // namespace memfit::api

namespace memfit {

std::string ApiOptionsJson() { return DumpJson(api::OptionTable()); }

}  // namespace memfit
