// inspect: tensors grouped by module (to a chosen depth), dtype histogram, parameter count.

#include <algorithm>
#include <map>

#include "formats/json.h"
#include "memfit/render.h"
#include "memfit/units.h"
#include "render/report_json.h"

namespace memfit {
namespace {

struct Group {
  uint64_t tensors = 0, parameters = 0, bytes = 0;
};

// "model.layers.12.mlp.up_proj.weight" at depth 3 -> "model.layers.*"; numbered segments merge.
// A name shorter than the depth groups under its module ("lm_head.weight", "lm_head.scales" and
// "lm_head.biases" -> "lm_head"), so that a module's tensors are one row at every depth; a name
// without a dot is its own group.
std::string GroupName(std::string_view name, int depth) {
  std::string out;
  int level = 0;
  size_t start = 0;
  while (level < depth) {
    size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) return out.empty() ? std::string(name) : out;
    std::string_view seg = name.substr(start, dot - start);
    bool number = !seg.empty() && seg.find_first_not_of("0123456789") == std::string_view::npos;
    if (!out.empty()) out += '.';
    out += number ? std::string_view("*") : seg;
    start = dot + 1;
    ++level;
  }
  return out;
}

std::map<std::string, Group> Groups(const Model& model, int depth) {
  std::map<std::string, Group> groups;
  for (const auto& t : model.tensors) {
    if (t.base_only) continue;  // not part of the class being described
    auto& g = groups[GroupName(t.name, depth)];
    ++g.tensors;
    if (t.kind == TensorKind::kParameter && t.tied_to.empty()) g.parameters += LogicalParams(t);
    if (t.tied_to.empty()) g.bytes += t.bytes;
  }
  return groups;
}

}  // namespace

nlohmann::json InspectJson(const Model& model) {
  auto totals = ComputeTotals(model);
  nlohmann::json j = ModelDocumentJson("memfit.inspect/1", model);
  j["parameters"] = totals.parameters;
  j["stored_bytes"] = totals.stored_bytes;
  j["resident_bytes"] = totals.resident_bytes;
  std::map<std::string, std::pair<uint64_t, uint64_t>> dtypes;
  for (const auto& t : model.tensors) {
    if (!t.stored) continue;
    dtypes[t.dtype_label].first += t.numel;
    dtypes[t.dtype_label].second += t.bytes;
  }
  nlohmann::json hist = nlohmann::json::array();
  for (const auto& [d, v] : dtypes)
    hist.push_back({{"dtype", d}, {"elements", v.first}, {"bytes", v.second}});
  j["dtypes"] = hist;
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& t : model.tensors) {
    if (t.base_only) continue;
    nlohmann::json row = {{"name", t.name},
                          {"shape", t.shape},
                          {"dtype", t.dtype_label},
                          {"bytes", t.bytes},
                          {"stored", t.stored}};
    if (t.kind != TensorKind::kParameter)
      row["buffer"] = t.kind == TensorKind::kBuffer ? "persistent" : "non-persistent";
    if (t.logical_params) row["parameters"] = *t.logical_params;
    if (!t.tied_to.empty()) row["tied_to"] = t.tied_to;
    if (t.in_head) row["head"] = true;
    if (!t.component.empty()) row["component"] = t.component;
    tensors.push_back(std::move(row));
  }
  j["tensors"] = tensors;
  nlohmann::json components = nlohmann::json::array();
  for (const auto& [name, part] : ComponentTotals(model)) {
    components.push_back({{"component", name},
                          {"parameters", part.parameters},
                          {"stored_bytes", part.stored_bytes},
                          {"resident_bytes", part.resident_bytes}});
  }
  if (!components.empty()) j["components"] = components;
  j["assumptions"] = model.assumptions;
  j["notes"] = model.notes;
  return j;
}

std::string RenderInspect(const Model& model, OutputFormat format, int depth) {
  if (format == OutputFormat::kJson) return DumpJson(InspectJson(model)) + "\n";
  auto totals = ComputeTotals(model);
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, g] : Groups(model, depth)) {
    rows.push_back(
        {name, std::to_string(g.tensors), FormatCount(g.parameters), FormatBytes(g.bytes)});
  }
  const std::vector<std::string> headers = {"module", "tensors", "parameters", "bytes"};
  if (format == OutputFormat::kCsv) return RenderCsv(headers, rows);
  if (format == OutputFormat::kMarkdown) return RenderMarkdownTable(headers, rows);
  std::map<std::string, std::pair<uint64_t, uint64_t>> dtypes;
  for (const auto& t : model.tensors) {
    if (!t.stored) continue;
    dtypes[t.dtype_label].first += 1;
    dtypes[t.dtype_label].second += t.bytes;
  }
  // The class's tensors: those only the base AutoModel has (Tensor::base_only) are in no group,
  // no total and not in the JSON's list either.
  const auto tensors = std::count_if(model.tensors.begin(), model.tensors.end(),
                                     [](const Tensor& t) { return !t.base_only; });
  std::string out =
      fmt::format("{}: {} tensors, {} parameters, {} stored ({})\n\n", model.name, tensors,
                  FormatCount(totals.parameters), FormatBytes(totals.stored_bytes), model.source);
  out += RenderPlainTable(headers, rows) + "\n";
  std::vector<std::vector<std::string>> hist;
  for (const auto& [d, v] : dtypes) {
    double share = totals.stored_bytes ? 100.0 * static_cast<double>(v.second) /
                                             static_cast<double>(totals.stored_bytes)
                                       : 0;
    hist.push_back(
        {d, std::to_string(v.first), FormatBytes(v.second), fmt::format("{:.1f}%", share)});
  }
  out += RenderPlainTable({"dtype", "tensors", "bytes", "share"}, hist);
  std::vector<std::vector<std::string>> parts;
  for (const auto& [name, part] : ComponentTotals(model)) {
    parts.push_back({name, FormatCount(part.parameters), FormatBytes(part.resident_bytes)});
  }
  if (!parts.empty()) {
    out += '\n';
    out += RenderPlainTable({"component", "parameters", "resident"}, parts);
  }
  std::string extra = RenderAssumptions(model);
  if (!extra.empty()) out += "\n" + extra;
  return out;
}

}  // namespace memfit
