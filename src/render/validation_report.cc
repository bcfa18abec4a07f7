// `memfit validate` report.

#include <cmath>

#include <fmt/format.h>

#include "memfit/render_memory.h"
#include "formats/json.h"

namespace memfit {
namespace {

std::string Gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / 1073741824.0); }

std::string RowStatus(const RowResult& r) {
  if (!r.expressed) return "not expressed";
  if (r.calibration) return "calibration";
  return r.within ? "ok" : "MISS";
}

}  // namespace

std::string RenderValidation(const std::vector<RowResult>& results, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    nlohmann::json j;
    j["schema"] = "memfit.validate/1";
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : results) {
      nlohmann::json x = {{"id", r.id}, {"model", r.model},
                          {"class", std::string(RowClassName(r.row_class))},
                          {"expressed", r.expressed}, {"measured_bytes", r.measured},
                          {"rough", r.rough}, {"calibration", r.calibration},
                          {"tolerance", r.tolerance}, {"note", r.note}};
      if (r.expressed) {
        x["estimate_bytes"] = r.estimate;
        x["error"] = r.error;
        x["within"] = r.within;
      } else {
        x["reason"] = r.reason;
      }
      rows.push_back(x);
    }
    j["rows"] = rows;
    return DumpJson(j) + "\n";
  }
  const std::vector<std::string> headers = {"id", "model", "class", "measured", "estimate",
                                            "error", "tolerance", "status", "note"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : results) {
    if (!r.expressed) continue;
    rows.push_back({r.id, r.model, std::string(RowClassName(r.row_class)), Gib(r.measured),
                    Gib(r.estimate), fmt::format("{:+.1f}%", r.error * 100),
                    fmt::format("{}{:.0f}%", r.rough ? "rough " : "", r.tolerance * 100),
                    RowStatus(r), r.note});
  }
  std::vector<std::vector<std::string>> missing;
  for (const auto& r : results) {
    if (!r.expressed) missing.push_back({r.id, r.model, std::string(RowClassName(r.row_class)), r.reason});
  }
  std::vector<std::vector<std::string>> summary;
  for (RowClass c : {RowClass::kLoad, RowClass::kInference, RowClass::kTraining}) {
    int n = 0, ok = 0, total = 0;
    double sum = 0;
    for (const auto& r : results) {
      if (r.row_class != c) continue;
      ++total;
      if (!r.expressed || r.calibration) continue;
      ++n;
      ok += r.within;
      sum += std::fabs(r.error);
    }
    summary.push_back({std::string(RowClassName(c)), std::to_string(total), std::to_string(n),
                       std::to_string(ok),
                       n ? fmt::format("{:.1f}%", sum / n * 100) : std::string("-")});
  }
  const std::vector<std::string> sh = {"class", "rows", "expressed", "within tolerance",
                                       "mean |error|"};
  const std::vector<std::string> mh = {"id", "model", "class", "why not expressed"};
  switch (format) {
    case OutputFormat::kCsv: return RenderCsv(headers, rows);
    case OutputFormat::kMarkdown:
      return RenderMarkdownTable(headers, rows) + "\n" + RenderMarkdownTable(sh, summary) + "\n" +
             RenderMarkdownTable(mh, missing);
    default:
      return RenderPlainTable(headers, rows) + "\n" + RenderPlainTable(sh, summary) + "\n" +
             RenderPlainTable(mh, missing);
  }
}

}  // namespace memfit
