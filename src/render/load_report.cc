// estimate-memory reports: the default table, JSON (the documented contract in docs/json.md),
// CSV, Markdown, and accelerate's table for --accelerate.

#include <fmt/format.h>

#include "formats/json.h"
#include "render/report_json.h"
#include "memfit/accuracy.h"
#include "memfit/render.h"
#include "memfit/units.h"

namespace memfit {
namespace {

std::vector<std::string> LoadHeaders() {
  return {"dtype", "Load", "Largest block", "Training (AdamW)"};
}

std::vector<std::vector<std::string>> LoadRows(const LoadEstimate& e, bool raw_bytes) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : e.rows) {
    auto fmt_bytes = [&](uint64_t b) { return raw_bytes ? std::to_string(b) : FormatBytes(b); };
    rows.push_back({std::string(LoadDtypeName(r.dtype)), fmt_bytes(r.total_bytes),
                    fmt_bytes(r.largest_block_bytes),
                    r.training_adam_bytes ? fmt_bytes(*r.training_adam_bytes) : "N/A"});
  }
  return rows;
}

}  // namespace

std::string RenderAssumptions(const Model& model) {
  std::string out;
  for (const auto& a : model.assumptions) out += "assumption: " + a + "\n";
  for (const auto& n : model.notes) out += "note: " + n + "\n";
  return out;
}

nlohmann::json ModelDocumentJson(const char* schema, const Model& model) {
  nlohmann::json j;
  j["schema"] = schema;
  j["model"] = model.name;
  j["source"] = model.source;
  j["model_type"] = model.model_type;
  j["architecture"] = model.architecture;
  return j;
}

nlohmann::json LoadEstimateJson(const Model& model, const LoadEstimate& e) {
  nlohmann::json j = ModelDocumentJson("memfit.estimate-memory/1", model);
  j["parameters"] = e.totals.parameters;
  j["head_parameters"] = e.totals.head_parameters;
  j["stored_bytes"] = e.totals.stored_bytes;
  j["resident_bytes"] = e.totals.resident_bytes;
  j["buffer_bytes"] = e.totals.buffer_bytes;
  j["index_total_size"] = model.index_total_size ? nlohmann::json(*model.index_total_size) : nullptr;
  nlohmann::json dtypes = nlohmann::json::array();
  for (const auto& [dtype, bytes] : e.dtype_bytes) dtypes.push_back({{"dtype", dtype}, {"bytes", bytes}});
  j["stored_dtypes"] = dtypes;
  if (e.largest_block) {
    j["largest_block"] = {{"name", e.largest_block->name}, {"bytes", e.largest_block->bytes}};
  } else {
    j["largest_block"] = nullptr;
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : e.rows) {
    rows.push_back({{"dtype", LoadDtypeName(r.dtype)},
                    {"total_bytes", r.total_bytes},
                    {"largest_block_bytes", r.largest_block_bytes},
                    {"training_adam_bytes",
                     r.training_adam_bytes ? nlohmann::json(*r.training_adam_bytes) : nullptr}});
  }
  j["rows"] = rows;
  j["assumptions"] = model.assumptions;
  j["notes"] = model.notes;
  j["definitions"] = e.notes;
  j["accuracy"] = AccuracyJson(AccuracyFor(AccuracyClass::kWeights));
  return j;
}

std::string RenderLoadEstimate(const Model& model, const LoadEstimate& e, OutputFormat format) {
  switch (format) {
    case OutputFormat::kJson: return DumpJson(LoadEstimateJson(model, e)) + "\n";
    case OutputFormat::kCsv: return RenderCsv(
        {"dtype", "load_bytes", "largest_block_bytes", "training_adam_bytes"}, LoadRows(e, true));
    case OutputFormat::kMarkdown: {
      std::string out = fmt::format("### Memory to load `{}`\n\n", model.name);
      out += RenderMarkdownTable(LoadHeaders(), LoadRows(e, false));
      out += fmt::format("\n{} parameters; stored {} ({}).\n", FormatCount(e.totals.parameters),
                         FormatBytes(e.totals.stored_bytes), model.source);
      out += "\n" + AccuracyLine(AccuracyFor(AccuracyClass::kWeights)) + "\n";
      return out;
    }
    case OutputFormat::kTable: break;
  }
  std::string out;
  out += fmt::format("Model       {}", model.name);
  if (!model.model_type.empty()) {
    out += fmt::format(" ({}{}{})", model.model_type, model.architecture.empty() ? "" : ", ",
                       model.architecture);
  }
  out += fmt::format("\nSource      {}\n", model.source);
  out += fmt::format("Parameters  {} ({})", FormatCount(e.totals.parameters),
                     FormatGrouped(e.totals.parameters));
  if (e.totals.head_parameters > 0) {
    out += fmt::format(", of which task head {}", FormatCount(e.totals.head_parameters));
  }
  out += "\nStored      ";
  out += FormatBytes(e.totals.stored_bytes);
  if (!e.dtype_bytes.empty()) {
    out += " (";
    for (size_t i = 0; i < e.dtype_bytes.size(); ++i) {
      if (i) out += ", ";
      out += fmt::format("{} {}", e.dtype_bytes[i].first, FormatBytes(e.dtype_bytes[i].second));
    }
    out += ")";
  }
  out += "\n";
  if (e.totals.resident_bytes != e.totals.stored_bytes) {
    out += fmt::format("Resident    {} after loading (ties shared, buffers added)\n",
                       FormatBytes(e.totals.resident_bytes));
  }
  if (e.largest_block) {
    out += fmt::format("Largest     {} ({})\n", e.largest_block->name,
                       FormatBytes(e.largest_block->bytes));
  }
  out += '\n';
  out += RenderPlainTable(LoadHeaders(), LoadRows(e, false));
  out += '\n';
  for (const auto& n : e.notes) out += "- " + n + "\n";
  out += AccuracyLine(AccuracyFor(AccuracyClass::kWeights)) + "\n";
  std::string extra = RenderAssumptions(model);
  if (!extra.empty()) out += "\n" + extra;
  return out;
}

std::string RenderAccelerate(std::string_view model_name, const AccelerateEstimate& e,
                             OutputFormat format) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : e.rows) {
    rows.push_back({r.dtype, FormatBytesAccelerate(r.largest_layer_bytes),
                    FormatBytesAccelerate(r.total_bytes),
                    r.training_adam_bytes ? FormatBytesAccelerate(*r.training_adam_bytes) : "N/A"});
  }
  const std::vector<std::string> headers = {"dtype", "Largest Layer", "Total Size",
                                            "Training using Adam"};
  switch (format) {
    case OutputFormat::kJson: {
      nlohmann::json j;
      j["schema"] = "memfit.accelerate/1";
      j["model"] = model_name;
      j["constructor_class"] = e.constructor_class;
      j["largest_layer_names"] = e.largest_layer_names;
      nlohmann::json out_rows = nlohmann::json::array();
      for (size_t i = 0; i < e.rows.size(); ++i) {
        const auto& r = e.rows[i];
        out_rows.push_back({{"dtype", r.dtype},
                            {"largest_layer_bytes", r.largest_layer_bytes},
                            {"total_size_bytes", r.total_bytes},
                            {"training_adam_bytes", r.training_adam_bytes
                                                        ? nlohmann::json(*r.training_adam_bytes)
                                                        : nullptr},
                            {"strings",
                             {{"largest_layer", rows[i][1]},
                              {"total_size", rows[i][2]},
                              {"training_adam", rows[i][3]}}}});
      }
      j["rows"] = out_rows;
      return DumpJson(j) + "\n";
    }
    case OutputFormat::kCsv: return RenderCsv(headers, rows);
    case OutputFormat::kMarkdown: return RenderMarkdownTable(headers, rows);
    case OutputFormat::kTable: break;
  }
  return RenderAsciiTable(fmt::format("Memory Usage for loading `{}`", model_name), headers, rows) +
         "\n";
}

}  // namespace memfit
