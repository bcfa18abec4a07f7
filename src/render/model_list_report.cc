// models: the built-in catalog as a table, JSON, CSV or Markdown.

#include "memfit/catalog.h"
#include "formats/json.h"
#include "memfit/render.h"
#include "memfit/units.h"

namespace memfit {

std::string RenderModelList(std::span<const CatalogEntry* const> entries, OutputFormat format) {
  std::vector<std::vector<std::string>> rows;
  nlohmann::json json = nlohmann::json::array();
  for (const CatalogEntry* e : entries) {
    // The entry's own totals (checked against its build by catalog_test.cc).
    json.push_back({{"id", e->id}, {"family", e->family}, {"description", e->description},
                    {"parameters", e->parameters}, {"stored_bytes", e->stored_bytes}});
    rows.push_back({std::string(e->id), std::string(e->family), FormatCount(e->parameters),
                    FormatBytes(e->stored_bytes), std::string(e->description)});
  }
  const std::vector<std::string> headers = {"id", "family", "parameters", "stored", "description"};
  if (format == OutputFormat::kJson) return DumpJson(json) + "\n";
  if (format == OutputFormat::kCsv) return RenderCsv(headers, rows);
  if (format == OutputFormat::kMarkdown) return RenderMarkdownTable(headers, rows);
  return RenderPlainTable(headers, rows);
}

}  // namespace memfit
