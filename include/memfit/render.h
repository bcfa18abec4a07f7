#pragma once
// Renderers: estimates in, strings out (text tables, JSON, CSV, Markdown). They never print.

#include <span>
#include <string>
#include <string_view>

#include "memfit/estimate_load.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit {

enum class OutputFormat : uint8_t { kTable, kJson, kCsv, kMarkdown };
Result<OutputFormat> ParseOutputFormat(std::string_view name);

// A box-drawing table like accelerate's create_ascii_table (title, headers, centered cells).
std::string RenderAsciiTable(std::string_view title, const std::vector<std::string>& headers,
                             const std::vector<std::vector<std::string>>& rows);
// A plain aligned table with a header row and a rule, first column left-aligned.
std::string RenderPlainTable(const std::vector<std::string>& headers,
                             const std::vector<std::vector<std::string>>& rows);

// How text tables are laid out: the terminal's width in columns (0: no limit; the CLI passes
// COLUMNS or the tty's width, 100 when not a tty) and --wide (every column, and rows whose
// bytes are zero).
struct TextLayout {
  size_t width = 0;
  bool wide = false;
};
// RenderPlainTable within layout.width: the columns in `optional` (by index) are left out, last
// first, until the table fits; then the widest column's long cells are cut with "…". A line
// under the table says what was left out. layout.wide (or width 0) keeps everything.
std::string RenderPlainTable(const std::vector<std::string>& headers,
                             const std::vector<std::vector<std::string>>& rows,
                             const TextLayout& layout, const std::vector<size_t>& optional = {});
std::string RenderCsv(const std::vector<std::string>& headers,
                      const std::vector<std::vector<std::string>>& rows);
std::string RenderMarkdownTable(const std::vector<std::string>& headers,
                                const std::vector<std::vector<std::string>>& rows);

// estimate-memory: JSON (the documented contract, see docs/json.md) and the other formats.
std::string RenderLoadEstimate(const Model& model, const LoadEstimate& estimate,
                               OutputFormat format);
// --accelerate: accelerate's exact table (or JSON/CSV/Markdown of the same rows).
std::string RenderAccelerate(std::string_view model_name, const AccelerateEstimate& estimate,
                             OutputFormat format);

// inspect: tensors grouped by module, dtype histogram, parameter count.
std::string RenderInspect(const Model& model, OutputFormat format, int depth);

// models: the built-in catalog's entries (id, family, parameters, stored bytes, description),
// their own totals: nothing is built.
struct CatalogEntry;
std::string RenderModelList(std::span<const CatalogEntry* const> entries, OutputFormat format);

// The assumptions and notes block printed under every table.
std::string RenderAssumptions(const Model& model);

}  // namespace memfit
