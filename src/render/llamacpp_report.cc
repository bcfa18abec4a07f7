// Tables and JSON for `memfit gguf inference` and `memfit gguf fit`.

#include "memfit/llamacpp_report.h"

#include "formats/json.h"
#include "render/report_json.h"
#include "render/curve_report.h"
#include "memfit/accuracy.h"
#include "memfit/units.h"

namespace memfit {
namespace {

std::vector<std::string> DeviceHeaders() {
  return {"device", "layers", "model", "KV cache", "recurrent", "compute", "output", "CUDA context", "total"};
}

std::vector<std::vector<std::string>> DeviceRows(const LlamaCppEstimate& e) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : e.devices) {
    std::string layers = std::to_string(d.layers) + (d.output_layer ? " + output" : "");
    if (d.is_host) layers += " + input";
    rows.push_back({d.name, layers, FormatBytes(d.model_bytes), FormatBytes(d.kv_bytes), FormatBytes(d.rs_bytes),
                    FormatBytes(d.compute_bytes), FormatBytes(d.output_bytes), FormatBytes(d.context_bytes),
                    FormatBytes(d.total())});
  }
  return rows;
}

std::string LlamaCppSummary(const Model& model, const LlamaCppEstimate& e) {
  std::string out;
  uint64_t params = 0;
  for (const auto& t : model.tensors) params += t.numel;
  out += fmt::format("model: {} ({}, {} layers)\n", model.name, model.model_type, model.hp.num_layers);
  if (params) {
    out += fmt::format("weights: {} in tensors, {} parameters, {:.2f} bits per weight\n",
                       FormatBytes(e.model_file_tensor_bytes), FormatCount(params),
                       8.0 * static_cast<double>(e.model_file_tensor_bytes) / static_cast<double>(params));
  }
  out += fmt::format("context: n_ctx {} (n_ctx_seq {}, {} sequence{}), n_ubatch {}, flash attention {}\n", e.n_ctx,
                     e.n_ctx_seq, e.n_seq, e.n_seq == 1 ? "" : "s", e.n_ubatch, e.flash_attn ? "on" : "off");
  out += fmt::format("KV cache: K {} + V {} ({} cells{}), recurrent state {}\n", FormatBytes(e.kv_k_bytes),
                     FormatBytes(e.kv_v_bytes), e.kv_cells_full,
                     e.kv_cells_swa ? fmt::format(", sliding-window layers {} cells", e.kv_cells_swa) : "",
                     FormatBytes(e.rs_bytes));
  out += fmt::format("offloaded {}/{} layers to GPU\n\n", e.offloaded_layers, e.total_layers);
  return out;
}

std::string Footer(const Model& model, const LlamaCppEstimate& e) {
  std::string out;
  out += "\ncompute buffers are a model (see docs/estimates.md, GGUF); model buffers and KV cache are exact\n";
  out += AccuracyLine(AccuracyFor(AccuracyClass::kLlamaCpp)) + "\n";
  for (const auto& a : model.assumptions) out += "assumption: " + a + "\n";
  for (const auto& a : e.assumptions) out += "assumption: " + a + "\n";
  for (const auto& n : model.notes) out += "note: " + n + "\n";
  for (const auto& n : e.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace

nlohmann::json LlamaCppEstimateJson(const Model& model, const LlamaCppEstimate& e, const ContextCurve* curve) {
  nlohmann::json j;
  j["model"] = model.name;
  j["architecture"] = model.model_type;
  j["model_max_context"] = model.hp.max_position_embeddings;
  j["n_ctx"] = e.n_ctx;
  j["n_ctx_seq"] = e.n_ctx_seq;
  j["n_seq"] = e.n_seq;
  j["n_ubatch"] = e.n_ubatch;
  j["flash_attn"] = e.flash_attn;
  j["kv_k_bytes"] = e.kv_k_bytes;
  j["kv_v_bytes"] = e.kv_v_bytes;
  j["rs_bytes"] = e.rs_bytes;
  j["offloaded_layers"] = e.offloaded_layers;
  j["total_layers"] = e.total_layers;
  j["devices"] = nlohmann::json::array();
  for (const auto& d : e.devices) {
    j["devices"].push_back({{"name", d.name}, {"host", d.is_host}, {"layers", d.layers},
                            {"output_layer", d.output_layer}, {"model_bytes", d.model_bytes},
                            {"kv_bytes", d.kv_bytes}, {"rs_bytes", d.rs_bytes}, {"compute_bytes", d.compute_bytes},
                            {"output_bytes", d.output_bytes}, {"context_bytes", d.context_bytes},
                            {"total_bytes", d.total()}});
  }
  j["assumptions"] = model.assumptions;
  for (const auto& a : e.assumptions) j["assumptions"].push_back(a);
  if (curve) {
    j["curve"] = ContextCurveJson(*curve);
    for (const auto& a : curve->assumptions) j["assumptions"].push_back(a);
  }
  j["notes"] = model.notes;
  for (const auto& n : e.notes) j["notes"].push_back(n);
  j["accuracy"] = AccuracyJson(AccuracyFor(AccuracyClass::kLlamaCpp));
  return j;
}

std::string RenderLlamaCppEstimate(const Model& model, const LlamaCppEstimate& e, OutputFormat format,
                                   const ContextCurve* curve) {
  switch (format) {
    case OutputFormat::kJson: return DumpJson(LlamaCppEstimateJson(model, e, curve)) + "\n";
    case OutputFormat::kCsv: return RenderCsv(DeviceHeaders(), DeviceRows(e));
    case OutputFormat::kMarkdown: return RenderMarkdownTable(DeviceHeaders(), DeviceRows(e));
    case OutputFormat::kTable: break;
  }
  std::string out = LlamaCppSummary(model, e) + RenderPlainTable(DeviceHeaders(), DeviceRows(e));
  if (curve) {
    out += "\n";
    for (const auto& [label, bytes] : ContextCurveRows(*curve)) out += label + ": " + FormatBytes(bytes) + "\n";
    for (const auto& line : ContextCurveLines(*curve)) out += line + "\n";
  }
  return out + Footer(model, e);
}

std::string RenderLlamaCppFit(const Model& model, const LlamaCppFitPlan& plan,
                              const std::string& model_flags, OutputFormat format) {
  std::string command = "llama-server " + model_flags;
  for (const auto& a : plan.arguments) command += " " + a;
  if (format == OutputFormat::kJson) {
    nlohmann::json j;
    j["fits"] = plan.fits;
    j["arguments"] = plan.arguments;
    j["command"] = command;
    j["steps"] = plan.steps;
    j["estimate"] = LlamaCppEstimateJson(model, plan.estimate);
    return DumpJson(j) + "\n";
  }
  std::string out;
  out += plan.fits ? "fits\n" : "does NOT fit (closest configuration shown)\n";
  for (const auto& s : plan.steps) out += "  - " + s + "\n";
  out += '\n';
  out += RenderLlamaCppEstimate(model, plan.estimate, format);
  out += "\nllama.cpp command:\n  " + command + "\n";
  return out;
}

}  // namespace memfit
