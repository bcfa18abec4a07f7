// Deployment rows: table, JSON, CSV, Markdown (docs/json.md, "memfit.deploy/1").

#include <algorithm>

#include <fmt/format.h>

#include "formats/json.h"
#include "render/report_json.h"
#include "memfit/accuracy.h"
#include "memfit/engine_release.h"
#include "memfit/render_deploy.h"
#include "memfit/units.h"

namespace memfit {
namespace {

std::string RateCell(double tokens_per_s) {
  return tokens_per_s > 0 ? fmt::format("{:.0f}", tokens_per_s) : "?";
}

std::string RowVerdict(const DeploymentRow& r) {
  if (!r.runs) return "refused";
  return r.fits ? "fits" : "does not fit";
}

}  // namespace

nlohmann::json DeployJson(const DeployReportInput& in) {
  nlohmann::json j;
  j["schema"] = "memfit.deploy/1";
  j["model"] = in.model->name;
  j["mode"] = in.mode;
  const InferenceOptions& o = *in.options;
  j["request"] = {{"engine", std::string(EngineName(o.engine))},
                  {"context", o.context_tokens},
                  {"sequences", o.batch},
                  {"kv_dtype", std::string(KvDtypeName(o.kv_dtype))},
                  // null: the release's default, per GPU in each row
                  {"gpu_memory_utilization", o.gpu_memory_utilization > 0
                                                 ? nlohmann::json(o.gpu_memory_utilization)
                                                 : nlohmann::json()},
                  {"engine_version", o.release ? nlohmann::json(std::string(o.release->version))
                                               : nlohmann::json()}};
  nlohmann::json rows = nlohmann::json::array();
  std::vector<std::string> assumptions = in.model->assumptions;
  for (const auto& r : *in.rows) {
    nlohmann::json row = {
        {"gpu", r.gpu}, {"gpu_memory_bytes", r.gpu_memory_bytes}, {"gpus", r.gpus},
        {"layout", DeployLayoutName(r.layout)},
        {"tp", r.layout.tp}, {"dp", r.layout.dp}, {"ep", r.layout.ep}, {"pp", r.layout.pp},
        {"dp_attention", r.layout.dp_attention}, {"runs", r.runs}, {"fits", r.fits},
        {"verdict", RowVerdict(r)},
        {"weights_per_gpu_bytes", r.weights_per_gpu_bytes},
        {"total_per_gpu_bytes", r.total_per_gpu_bytes}, {"kv_pool_bytes", r.kv_pool_bytes},
        {"gpu_memory_utilization", r.gpu_memory_utilization}, {"engine_flags", r.engine_flags},
        {"max_sequences", r.max_sequences}, {"max_context_tokens", r.max_context_tokens},
        {"decode_tokens_per_s", r.decode_tokens_per_s},
        {"prefill_tokens_per_s", r.prefill_tokens_per_s}};
    if (!r.runs) row["refusal"] = r.refusal;
    rows.push_back(std::move(row));
    for (const auto& a : r.assumptions) {
      if (std::find(assumptions.begin(), assumptions.end(), a) == assumptions.end()) {
        assumptions.push_back(a);
      }
    }
  }
  j["rows"] = rows;
  j["assumptions"] = assumptions;
  j["accuracy"] = AccuracyJson(AccuracyFor(AccuracyClassFor(o.engine)));
  return j;
}

std::string RenderDeploy(const DeployReportInput& in, OutputFormat format) {
  if (format == OutputFormat::kJson) return DumpJson(DeployJson(in)) + "\n";
  const std::vector<std::string> headers = {"gpus", "gpu", "layout", "verdict", "weights/GPU",
                                            "total/GPU", "max seqs", "max context",
                                            "decode tok/s", "prefill tok/s"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : *in.rows) {
    rows.push_back({std::to_string(r.gpus), r.gpu, DeployLayoutName(r.layout), RowVerdict(r),
                    r.runs ? FormatBytes(r.weights_per_gpu_bytes) : "-",
                    r.runs ? FormatBytes(r.total_per_gpu_bytes) : "-",
                    r.runs ? std::to_string(r.max_sequences) : "-",
                    r.runs ? std::to_string(r.max_context_tokens) : "-",
                    r.runs ? RateCell(r.decode_tokens_per_s) : "-",
                    r.runs ? RateCell(r.prefill_tokens_per_s) : "-"});
  }
  if (format == OutputFormat::kCsv) return RenderCsv(headers, rows);
  const InferenceOptions& o = *in.options;
  std::string title = fmt::format("{}: {} serving {} sequence(s) of {} tokens ({})",
                                  in.model->name, EngineName(o.engine), o.batch, o.context_tokens,
                                  in.mode);
  std::vector<std::string> lines = {AccuracyLine(AccuracyFor(AccuracyClassFor(o.engine)))};
  for (const auto& a : in.model->assumptions) lines.push_back("assumption: " + a);
  if (o.release) {
    lines.push_back(fmt::format("engine: {} {} ({})", EngineName(o.engine), o.release->version,
                                o.release->source));
  }
  std::vector<std::string> seen;
  std::vector<std::string> flags_seen;
  for (const auto& r : *in.rows) {
    if (!r.runs && !r.refusal.empty()) lines.push_back("refused (" + r.gpu + " x" +
                                                       std::to_string(r.gpus) + "): " + r.refusal);
    // The engine's own flags for the budget, once per GPU kind (SGLang's fraction differs by
    // GPU); the JSON has each row's.
    if (r.runs && !r.engine_flags.empty() &&
        std::find(flags_seen.begin(), flags_seen.end(), r.gpu) == flags_seen.end()) {
      flags_seen.push_back(r.gpu);
      lines.push_back("flags (" + r.gpu + " x" + std::to_string(r.gpus) + ", " +
                      DeployLayoutName(r.layout) + "): " + r.engine_flags);
    }
    for (const auto& a : r.assumptions) {
      if (std::find(seen.begin(), seen.end(), a) != seen.end()) continue;
      seen.push_back(a);
      lines.push_back("assumption: " + a);
    }
  }
  lines.push_back("note: decode tok/s is one sequence's memory-bandwidth bound, prefill tok/s the "
                  "compute bound over all GPUs (docs/estimates.md, \"Deployment planning\")");
  std::string out;
  if (format == OutputFormat::kMarkdown) {
    out = "**" + title + "**\n\n" + RenderMarkdownTable(headers, rows) + "\n";
    for (const auto& l : lines) out += "- " + l + "\n";
  } else {
    out = title + "\n" + RenderPlainTable(headers, rows);
    for (const auto& l : lines) out += l + "\n";
  }
  return out;
}

}  // namespace memfit
