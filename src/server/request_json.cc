#include "server/request_json.h"

#include <charconv>
#include <cstdlib>
#include <variant>

#include <fmt/format.h>

namespace memfit::server {
namespace {

using Target = std::variant<uint64_t*, double*, std::string*, bool*, std::vector<std::string>*>;

// One option: its names (the CLI's long flags without "--") and the request field it sets.
struct Field {
  std::vector<std::string_view> names;
  Target target;
};

// MODEL's flags, shared by every request.
void AddModelFields(ModelQuery& q, std::vector<Field>& fields) {
  fields.push_back({{"revision"}, &q.revision});
  fields.push_back({{"offline"}, &q.offline});
  fields.push_back({{"token"}, &q.token});
  fields.push_back({{"gguf-file"}, &q.gguf_file});
}

// A serving engine's options, shared by inference and fit (vLLM's and SGLang's words).
template <typename Request>
void AddServingFields(Request& r, std::vector<Field>& f) {
  f.push_back({{"gpu-memory-utilization", "mem-fraction-static"}, &r.gpu_memory_utilization});
  f.push_back({{"block-size"}, &r.block_size});
  f.push_back({{"max-num-seqs"}, &r.max_num_seqs});
  f.push_back({{"max-batched-tokens"}, &r.max_batched_tokens});
  f.push_back({{"tp"}, &r.tp});
  f.push_back({{"dp"}, &r.dp});
  f.push_back({{"ep"}, &r.ep});
  f.push_back({{"pp"}, &r.pp});
  f.push_back({{"enable-dp-attention"}, &r.dp_attention});
}

// The order of `memfit estimate-memory --help`.
std::vector<Field> Fields(LoadRequest& r) {
  std::vector<Field> f;
  AddModelFields(r.model, f);
  f.push_back({{"dtypes"}, &r.dtypes});
  f.push_back({{"accelerate"}, &r.accelerate});
  f.push_back({{"library_name", "library-name"}, &r.library_name});
  f.push_back({{"trust_remote_code", "trust-remote-code"}, &r.trust_remote_code});
  return f;
}

// The order of `memfit inference --help`.
std::vector<Field> Fields(InferenceRequest& r) {
  std::vector<Field> f;
  AddModelFields(r.model, f);
  f.push_back({{"context", "ctx-size", "ctx"}, &r.context});
  f.push_back({{"batch"}, &r.batch});
  f.push_back({{"gpus"}, &r.gpus});
  f.push_back({{"dtype"}, &r.dtype});
  f.push_back({{"quant"}, &r.quant});
  f.push_back({{"kv-dtype"}, &r.kv_dtype});
  f.push_back({{"attn"}, &r.attn});
  f.push_back({{"engine"}, &r.engine});
  f.push_back({{"gpu-memory"}, &r.gpu_memory});
  AddServingFields(r, f);
  f.push_back({{"gpu"}, &r.gpu});
  f.push_back({{"encoder-tokens"}, &r.encoder_tokens});
  f.push_back({{"decoder-tokens"}, &r.decoder_tokens});
  f.push_back({{"cuda-context"}, &r.cuda_context});
  f.push_back({{"allocator-reserve"}, &r.allocator_reserve});
  f.push_back({{"all-logits"}, &r.all_logits});
  f.push_back({{"torch-version"}, &r.torch_version});
  f.push_back({{"transformers-version"}, &r.transformers_version});
  f.push_back({{"mamba-scan"}, &r.mamba_scan});
  f.push_back({{"curve"}, &r.curve});
  f.push_back({{"curve-gpu"}, &r.curve_gpus});
  return f;
}

// The order of `memfit train --help`.
std::vector<Field> Fields(TrainRequest& r) {
  std::vector<Field> f;
  AddModelFields(r.model, f);
  f.push_back({{"method"}, &r.method});
  f.push_back({{"optimizer"}, &r.optimizer});
  f.push_back({{"precision"}, &r.precision});
  f.push_back({{"batch", "micro-batch"}, &r.batch});
  f.push_back({{"context", "ctx-size", "ctx", "seq"}, &r.context});
  f.push_back({{"decoder-tokens"}, &r.decoder_tokens});
  f.push_back({{"grad-accum"}, &r.grad_accum});
  f.push_back({{"checkpointing"}, &r.checkpointing});
  f.push_back({{"attn"}, &r.attn});
  f.push_back({{"gpus"}, &r.gpus});
  f.push_back({{"gpu"}, &r.gpu});
  f.push_back({{"strategy"}, &r.strategy});
  f.push_back({{"offload"}, &r.offload});
  f.push_back({{"tp"}, &r.tp});
  f.push_back({{"pp"}, &r.pp});
  f.push_back({{"lora-rank"}, &r.lora_rank});
  f.push_back({{"lora-alpha"}, &r.lora_alpha});
  f.push_back({{"lora-dropout"}, &r.lora_dropout});
  f.push_back({{"lora-targets"}, &r.lora_targets});
  f.push_back({{"qlora-quant"}, &r.qlora_quant});
  f.push_back({{"freeze-layers"}, &r.freeze_layers});
  f.push_back({{"head"}, &r.head});
  f.push_back({{"cuda-context"}, &r.cuda_context});
  f.push_back({{"allocator-reserve"}, &r.allocator_reserve});
  f.push_back({{"no-foreach"}, &r.no_foreach});
  f.push_back({{"keep-grads"}, &r.keep_grads});
  f.push_back({{"torch-version"}, &r.torch_version});
  f.push_back({{"transformers-version"}, &r.transformers_version});
  f.push_back({{"mamba-scan"}, &r.mamba_scan});
  f.push_back({{"loss"}, &r.loss});
  return f;
}

// The order of `memfit fit --help`.
std::vector<Field> Fields(FitCommandRequest& r) {
  std::vector<Field> f;
  AddModelFields(r.model, f);
  f.push_back({{"gpu"}, &r.gpus});
  f.push_back({{"ram"}, &r.ram});
  f.push_back({{"disk"}, &r.disk});
  f.push_back({{"reserve"}, &r.reserve});
  f.push_back({{"dtype"}, &r.dtype});
  f.push_back({{"task"}, &r.task});
  f.push_back({{"context", "ctx-size", "ctx"}, &r.context});
  f.push_back({{"batch"}, &r.batch});
  f.push_back({{"gpus"}, &r.gpu_count});
  f.push_back({{"strategy"}, &r.strategy});
  f.push_back({{"pcie-gbps"}, &r.pcie_gb_s});
  f.push_back({{"disk-gbps"}, &r.disk_gb_s});
  f.push_back({{"no-advice"}, &r.no_advice});
  f.push_back({{"device-map"}, &r.device_map_only});
  f.push_back({{"engine"}, &r.engine});
  f.push_back({{"search"}, &r.search});
  f.push_back({{"all-gpus"}, &r.all_gpus});
  f.push_back({{"max-gpus"}, &r.max_gpus});
  f.push_back({{"top"}, &r.top});
  f.push_back({{"quant"}, &r.quant});
  f.push_back({{"kv-dtype"}, &r.kv_dtype});
  AddServingFields(r, f);
  f.push_back({{"method"}, &r.method});
  return f;
}

std::vector<Field> Fields(InspectRequest& r) {
  std::vector<Field> f;
  AddModelFields(r.model, f);
  f.push_back({{"depth"}, &r.depth});
  return f;
}

std::vector<Field> Fields(GpusRequest& r) {
  return {{{"min-memory"}, &r.min_memory}, {{"vendor"}, &r.vendor}};
}

// --export-configs writes files: the CLI's alone.
std::vector<Field> Fields(ModelsRequest& r) { return {{{"family"}, &r.family}}; }

// A scalar's text, as the CLI would have read it ("4", "0.9", "h100").
std::string Text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());
  return value.dump();
}

Status SetFrom(const Target& target, const nlohmann::json& value, std::string_view key) {
  const std::string text = Text(value);
  auto bad = [&](std::string_view what) {
    return MakeError("option \"{}\": \"{}\" is not {}", key, text, what);
  };
  if (auto* u = std::get_if<uint64_t*>(&target)) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), **u);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
      return bad("a whole number");
    }
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

template <typename Request>
Result<Request> FromJson(const nlohmann::json& body) {
  Request request;
  constexpr bool kHasModel = requires { request.model.spec; };
  if constexpr (kHasModel) {
    auto model = body.find("model");
    if (model == body.end() || !model->is_string()) return MakeError("\"model\" is required");
    request.model.spec = model->template get<std::string>();
    // The Hub's summary line goes to the server's stderr, as the CLI's does.
    request.model.summary = [](const std::string& line) {
      fmt::print(stderr, "memfit: {}\n", line);
    };
  }
  std::vector<Field> fields = Fields(request);
  std::vector<const Field*> given;
  for (const auto& [key, value] : body.items()) {
    if ((kHasModel && key == "model") || value.is_null() || (value.is_boolean() && !value.template get<bool>())) continue;
    const Field* field = nullptr;
    for (const Field& f : fields) {
      for (std::string_view name : f.names) {
        if (name == key) field = &f;
      }
    }
    if (!field) return MakeError("option \"{}\": not an option of this command", key);
    for (const Field* g : given) {
      if (g == field) return MakeError("option \"{}\": given twice (under another name)", key);
    }
    given.push_back(field);
    const bool is_flag = std::holds_alternative<bool*>(field->target);
    const bool is_list = std::holds_alternative<std::vector<std::string>*>(field->target);
    if (value.is_boolean()) {
      if (!is_flag) return MakeError("option \"{}\": expected a value", key);
      *std::get<bool*>(field->target) = true;
      continue;
    }
    if (value.is_array()) {
      if (!is_list && value.size() != 1) return MakeError("option \"{}\": one value only", key);
      for (const auto& item : value) MEMFIT_RETURN_IF_ERROR(SetFrom(field->target, item, key));
      continue;
    }
    MEMFIT_RETURN_IF_ERROR(SetFrom(field->target, value, key));
  }
  return request;
}

template <typename Request>
std::vector<std::string> Keys() {
  Request request;
  std::vector<std::string> keys;
  for (const Field& f : Fields(request)) {
    for (std::string_view name : f.names) keys.emplace_back(name);
  }
  return keys;
}

// The JSON Schema of one option's value, from its target's type (the canonical form: the parser
// also takes a number as text and a scalar as a one-element array).
nlohmann::json ValueSchema(const Target& target) {
  if (std::holds_alternative<uint64_t*>(target)) return {{"type", "integer"}, {"minimum", 0}};
  if (std::holds_alternative<double*>(target)) return {{"type", "number"}};
  if (std::holds_alternative<std::string*>(target)) return {{"type", "string"}};
  if (std::holds_alternative<bool*>(target)) return {{"type", "boolean"}};
  return {{"oneOf", {{{"type", "string"}}, {{"type", "array"}, {"items", {{"type", "string"}}}}}},
          {"description", "repeatable: one value or an array of values"}};
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
  for (const Field& f : Fields(request)) {
    for (size_t i = 0; i < f.names.size(); ++i) {
      nlohmann::json value = ValueSchema(f.target);
      if (i > 0) value["description"] = fmt::format("alias of \"{}\"", f.names[0]);
      properties[std::string(f.names[i])] = std::move(value);
    }
  }
  schema["properties"] = std::move(properties);
  schema["additionalProperties"] = false;
  return schema;
}

}  // namespace

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

}  // namespace memfit::server
