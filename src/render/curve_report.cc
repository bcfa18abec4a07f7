// A context curve as JSON, table rows and lines (curve_report.h).

#include "render/curve_report.h"

#include <fmt/format.h>

#include "memfit/units.h"

namespace memfit {
namespace {

std::string MetricLabel(const std::string& metric) {
  if (metric == "kv_cache") return "kv cache for the batch";
  if (metric == "largest_gpu") return "largest GPU";
  return "total per GPU";
}

std::string BudgetLabel(const std::string& metric) {
  return metric == "kv_cache" ? "KV pool" : "memory";
}

}  // namespace

nlohmann::json ContextCurveJson(const ContextCurve& curve) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : curve.points) points.push_back({{"context", p.context}, {"bytes", p.bytes}});
  nlohmann::json limits = nlohmann::json::array();
  for (const auto& l : curve.limits) {
    limits.push_back({{"gpu", l.gpu}, {"budget_bytes", l.budget_bytes},
                      {"longest_context", l.longest_context ? nlohmann::json(*l.longest_context)
                                                            : nlohmann::json(nullptr)},
                      {"note", l.note}});
  }
  return {{"metric", curve.metric}, {"max_context", curve.max_context}, {"points", points},
          {"limits", limits}};
}

std::vector<std::pair<std::string, uint64_t>> ContextCurveRows(const ContextCurve& curve) {
  std::vector<std::pair<std::string, uint64_t>> rows;
  for (const auto& p : curve.points) {
    rows.emplace_back(fmt::format("{} at {} tokens", MetricLabel(curve.metric), FormatGrouped(p.context)),
                      p.bytes);
  }
  return rows;
}

std::vector<std::string> ContextCurveLines(const ContextCurve& curve) {
  std::vector<std::string> lines;
  for (const auto& l : curve.limits) {
    const std::string longest =
        !l.longest_context ? fmt::format("all {} tokens (the curve's end)", FormatGrouped(curve.max_context))
        : *l.longest_context == 0 ? std::string("none")
                                  : FormatGrouped(*l.longest_context) + " tokens";
    lines.push_back(fmt::format("longest context on {} ({} {}): {}{}", l.gpu, BudgetLabel(curve.metric),
                                FormatBytes(l.budget_bytes), longest,
                                l.note.empty() ? "" : " (" + l.note + ")"));
  }
  for (const auto& a : curve.assumptions) lines.push_back("assumption: " + a);
  return lines;
}

}  // namespace memfit
