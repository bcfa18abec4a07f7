// `memfit fit` and `memfit gpus` output.

#include <algorithm>

#include "memfit/accuracy.h"
#include "memfit/render_fit.h"
#include "formats/json.h"
#include "plan/device_map_json.h"
#include "render/report_json.h"
#include "memfit/units.h"

namespace memfit {
namespace {

std::string RateText(double tokens_per_s) {
  if (tokens_per_s <= 0) return "unknown";
  if (tokens_per_s >= 100) return fmt::format("{:.0f} tok/s", tokens_per_s);
  return fmt::format("{:.3g} tok/s", tokens_per_s);
}

std::string Signed(int64_t bytes) {
  if (bytes >= 0) return FormatBytes(static_cast<uint64_t>(bytes));
  return fmt::format("-{}", FormatBytes(static_cast<uint64_t>(-bytes)));
}

std::string DeviceLabel(const FitReportInput& in, const DeviceUsage& d) {
  if (d.kind == DeviceKind::kGpu) {
    return fmt::format("{} ({})", d.index, in.request->gpus[static_cast<size_t>(d.index)].label);
  }
  return DeviceName(d);
}

// The device map's bytes are the task's estimate: the weights, inference or a training step.
AccuracyBand FitAccuracy(const FitReportInput& in) {
  const std::string& task = in.runtime->task;
  return AccuracyFor(task == "train"       ? AccuracyClass::kTraining
                     : task == "inference" ? AccuracyClass::kInference
                                           : AccuracyClass::kWeights);
}

std::string Quoted(const std::string& word) {
  return word.find(' ') == std::string::npos ? word : "\"" + word + "\"";
}

}  // namespace

std::string AdviceCommand(const FitReportInput& in, const Advice& a) {
  if (a.flags.empty()) return "";
  std::string gpus;
  for (const auto& g : in.request->gpus) gpus += fmt::format(" --gpu {}", Quoted(g.label));
  const std::string context =
      in.runtime->task == "load" ? "" : fmt::format(" --context {}", in.runtime->context_tokens);
  if (in.runtime->task == "train") {
    // `memfit train` judges one GPU; its flags are the training search's.
    return fmt::format("memfit train {}{} {} --gpu {}", in.model->name, context, a.flags,
                       Quoted(in.request->gpus.front().label));
  }
  return fmt::format("memfit fit {}{} --task {}{} {}", in.model->name, gpus, in.runtime->task,
                     context, a.flags);
}

std::string CompressModuleList(const std::vector<std::string>& modules) {
  std::string out;
  size_t i = 0;
  auto split = [](const std::string& m, std::string& prefix, long& index) {
    size_t dot = m.rfind('.');
    if (dot == std::string::npos || dot + 1 == m.size()) return false;
    std::string tail = m.substr(dot + 1);
    if (!std::all_of(tail.begin(), tail.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        tail.size() > 9) {
      return false;
    }
    prefix = m.substr(0, dot);
    index = std::stol(tail);
    return true;
  };
  while (i < modules.size()) {
    std::string prefix;
    long first = 0;
    size_t j = i + 1;
    if (split(modules[i], prefix, first)) {
      long last = first;
      std::string p;
      long idx = 0;
      while (j < modules.size() && split(modules[j], p, idx) && p == prefix && idx == last + 1) {
        last = idx;
        ++j;
      }
      if (!out.empty()) out += ", ";
      out += last > first ? fmt::format("{}.{}-{}", prefix, first, last) : modules[i];
    } else {
      if (!out.empty()) out += ", ";
      out += modules[i].empty() ? "(whole model)" : modules[i];
    }
    i = j;
  }
  return out;
}

nlohmann::ordered_json FitPlanJson(const FitReportInput& in) {
  const FitPlan& p = *in.plan;
  nlohmann::ordered_json j;
  j["schema"] = "memfit.fit/1";
  j["model"] = in.model->name;
  j["task"] = in.runtime->task;
  j["dtype"] = LoadDtypeName(in.request->dtype);
  j["verdict"] = VerdictName(p.verdict);
  j["verdict_detail"] = in.verdict ? HardwareVerdictJson(*in.verdict) : nlohmann::ordered_json(nullptr);
  j["gpus_needed"] = p.gpus_needed ? nlohmann::ordered_json(*p.gpus_needed) : nullptr;
  j["weight_bytes"] = p.weight_bytes;
  j["runtime"] = {{"per_gpu_bytes", p.runtime.per_gpu_bytes},
                  {"per_layer_bytes", p.runtime.per_layer_bytes},
                  {"per_weight_byte", p.runtime.per_weight_byte}};
  j["total_bytes"] = p.total_bytes;
  j["total_terms"] = {{"weight_bytes", p.terms.weight_bytes},
                      {"state_bytes", p.terms.state_bytes},
                      {"kv_cache_bytes", p.terms.kv_cache_bytes},
                      {"per_gpu_bytes", p.terms.per_gpu_bytes},
                      {"gpus_used", p.terms.gpus_used}};
  j["largest_block_bytes"] = p.map.largest_block_bytes;
  auto devices = nlohmann::ordered_json::array();
  for (const auto& d : p.map.devices) {
    devices.push_back({{"device", DeviceName(d)},
                       {"label", DeviceLabel(in, d)},
                       {"max_memory", d.max_memory == UINT64_MAX ? nlohmann::ordered_json("unlimited")
                                                                 : nlohmann::ordered_json(d.max_memory)},
                       {"used_bytes", d.used_bytes},
                       {"reserved_bytes", d.reserved_bytes},
                       {"modules", d.modules}});
  }
  j["devices"] = devices;
  j["unplaced"] = p.map.unplaced;
  j["unplaced_bytes"] = p.map.unplaced_bytes;
  j["device_map"] = DeviceMapJson(p.map);
  auto limits = nlohmann::ordered_json::object();
  if (p.limits.max_context_tokens) limits["max_context_tokens"] = *p.limits.max_context_tokens;
  if (p.limits.max_batch) limits["max_batch"] = *p.limits.max_batch;
  j["limits"] = limits;
  j["speed_upper_bounds"] = {{"decode_tokens_per_s", p.speed.decode_tokens_per_s},
                             {"prefill_tokens_per_s", p.speed.prefill_tokens_per_s},
                             {"bytes_per_token", p.speed.bytes_per_token},
                             {"active_parameters", p.speed.active_parameters},
                             {"notes", p.speed.notes}};
  auto advice = nlohmann::ordered_json::array();
  for (const auto& a : p.advice) {
    advice.push_back({{"action", a.action},
                      {"total_bytes", a.total_bytes},
                      {"saved_bytes", a.saved_bytes},
                      {"verdict", VerdictName(a.verdict)},
                      {"quality_cost", QualityCostName(a.quality_cost)},
                      {"quality_note", a.quality_note},
                      {"detail", a.detail},
                      {"flags", a.flags},
                      {"command", AdviceCommand(in, a)}});
  }
  j["advice"] = advice;
  j["notes"] = p.notes;
  j["assumptions"] = in.model->assumptions;
  j["accuracy"] = AccuracyJson(FitAccuracy(in));
  return j;
}

std::string RenderFitPlan(const FitReportInput& in, OutputFormat format) {
  if (format == OutputFormat::kJson) return DumpOrderedJson(FitPlanJson(in)) + "\n";
  const FitPlan& p = *in.plan;
  const FitRequest& r = *in.request;
  std::string out;
  std::string devices;
  for (const auto& g : r.gpus) devices += (devices.empty() ? "" : " + ") + g.label;
  out += fmt::format("{} on {} (task {}, weights {})\n", in.model->name, devices, in.runtime->task,
                     LoadDtypeName(r.dtype));
  std::string verdict(VerdictName(p.verdict));
  if (p.verdict == Verdict::kFitsWithOffload) {
    verdict += fmt::format(" ({} offloaded off the GPUs)", FormatBytes(p.map.offloaded_bytes));
  } else if (p.verdict == Verdict::kDoesNotFit) {
    verdict += fmt::format(" ({} could not be placed)", FormatBytes(p.map.unplaced_bytes));
  }
  // The hardware verdict (memfit/verdict.h) is the first line; without one, the plan's word.
  if (in.verdict) out = in.verdict->line + "\n" + out;
  else out += "verdict: " + verdict + "\n";
  if (!p.gpus_needed) {
    out += fmt::format("GPUs needed: no number of {} holds it: {}\n", r.gpus.front().label,
                       p.no_count_reason);
  } else if (*p.gpus_needed > 1 || p.verdict != Verdict::kFits) {
    out += fmt::format("GPUs needed: {} x {} (whole model on GPUs, accelerate's map)\n",
                       *p.gpus_needed, r.gpus.front().label);
  }
  // Every term of the total, so the line adds up.
  const FitTotalTerms& t = p.terms;
  std::string terms = fmt::format("weights {}", FormatBytes(t.weight_bytes));
  if (t.state_bytes) {
    terms += fmt::format(" + gradients and optimizer states {}", FormatBytes(t.state_bytes));
  }
  if (t.kv_cache_bytes) terms += fmt::format(" + KV cache {}", FormatBytes(t.kv_cache_bytes));
  if (t.per_gpu_bytes) {
    terms += fmt::format(" + runtime {} per GPU x {}", FormatBytes(t.per_gpu_bytes), t.gpus_used);
  }
  out += fmt::format("memory: {} = {}\n", terms, FormatBytes(p.total_bytes));
  out += AccuracyLine(FitAccuracy(in)) + "\n";
  out += fmt::format("largest block: {} ({})\n\n", FormatBytes(p.map.largest_block_bytes),
                     CompressModuleList(p.map.largest_block_names));
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : p.map.devices) {
    rows.push_back({DeviceLabel(in, d),
                    d.max_memory == UINT64_MAX ? "unlimited" : FormatBytes(d.max_memory),
                    FormatBytes(d.used_bytes), FormatBytes(d.reserved_bytes),
                    CompressModuleList(d.modules)});
  }
  if (!p.map.unplaced.empty()) {
    rows.push_back({"(not placed)", "", FormatBytes(p.map.unplaced_bytes), "",
                    CompressModuleList(p.map.unplaced)});
  }
  const std::vector<std::string> headers = {"device", "memory limit", "used", "kept free", "blocks"};
  if (format == OutputFormat::kCsv) return out + RenderCsv(headers, rows);
  if (format == OutputFormat::kMarkdown) out += RenderMarkdownTable(headers, rows);
  else out += RenderPlainTable(headers, rows, in.layout, {3});
  out += fmt::format("\ndevice_map = {}\n\n", DumpOrderedJson(DeviceMapJson(p.map), -1));
  out += fmt::format("speed (upper bounds, one sequence): decode <= {}, prefill <= {}\n",
                     RateText(p.speed.decode_tokens_per_s), RateText(p.speed.prefill_tokens_per_s));
  out += fmt::format("  {} read per token, {} active parameters\n",
                     FormatBytes(p.speed.bytes_per_token), FormatCount(p.speed.active_parameters));
  for (const auto& n : p.speed.notes) out += "  " + n + "\n";
  if (p.limits.max_context_tokens || p.limits.max_batch) {
    out += fmt::format("limits on the GPUs: context <= {} tokens, batch <= {}\n",
                       p.limits.max_context_tokens ? std::to_string(*p.limits.max_context_tokens) : "-",
                       p.limits.max_batch ? std::to_string(*p.limits.max_batch) : "-");
  }
  if (!p.advice.empty()) {
    std::vector<std::vector<std::string>> advice;
    for (const auto& a : p.advice) {
      advice.push_back({a.action, FormatBytes(a.total_bytes), Signed(a.saved_bytes),
                        std::string(VerdictName(a.verdict)),
                        std::string(QualityCostName(a.quality_cost))});
    }
    out += "\nadvice (fitting first, then by cost to quality):\n";
    const std::vector<std::string> h = {"change", "new total", "saved", "then", "quality cost"};
    out += format == OutputFormat::kMarkdown ? RenderMarkdownTable(h, advice)
                                             : RenderPlainTable(h, advice, in.layout, {2});
    for (const auto& a : p.advice) {
      if (a.verdict != Verdict::kFits) continue;
      const std::string command = AdviceCommand(in, a);
      if (!command.empty()) out += fmt::format("apply the best that fits: {}\n", command);
      break;
    }
  }
  for (const auto& n : p.notes) out += "note: " + n + "\n";
  for (const auto& a : in.model->assumptions) out += "assumed: " + a + "\n";
  return out;
}

std::string RenderGpuList(std::span<const GpuSpec* const> gpus, OutputFormat format,
                          const TextLayout& layout) {
  const std::vector<std::string> headers = {"name", "vendor", "memory", "bandwidth GB/s",
                                            "bf16 dense TFLOPS", "type", "source"};
  std::vector<std::vector<std::string>> rows;
  auto json = nlohmann::ordered_json::array();
  for (const GpuSpec* g : gpus) {
    rows.push_back({std::string(g->name), std::string(GpuVendorName(g->vendor)),
                    FormatBytes(MemoryBytes(*g)) + (g->unified_memory ? " unified" : ""),
                    fmt::format("{:g}", g->bandwidth_gb_s), fmt::format("{:g}", g->tensor_tflops),
                    std::string(g->memory_type), std::string(g->source)});
    json.push_back({{"name", g->name},
                    {"vendor", GpuVendorName(g->vendor)},
                    {"memory_bytes", MemoryBytes(*g)},
                    {"bandwidth_gb_s", g->bandwidth_gb_s},
                    {"bf16_dense_tflops", g->tensor_tflops},
                    {"unified_memory", g->unified_memory},
                    {"memory_type", g->memory_type},
                    {"source", g->source}});
  }
  switch (format) {
    case OutputFormat::kJson: {
      nlohmann::ordered_json doc;
      doc["schema"] = "memfit.gpus/1";
      doc["gpus"] = json;
      return DumpOrderedJson(doc) + "\n";
    }
    case OutputFormat::kCsv: return RenderCsv(headers, rows);
    case OutputFormat::kMarkdown: return RenderMarkdownTable(headers, rows);
    case OutputFormat::kTable: break;
  }
  return RenderPlainTable(headers, rows, layout, {5, 6});
}

}  // namespace memfit
