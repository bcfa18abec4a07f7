// Generic table renderers. RenderAsciiTable reproduces accelerate's create_ascii_table
// (accelerate/commands/estimate.py) byte for byte, including how it widens the last column when
// the title is long.

#include <algorithm>

#include <fmt/format.h>

#include "memfit/render.h"

namespace memfit {
namespace {

// Display width: count UTF-8 code points (all our text is single-width).
size_t Width(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

// Python's str.center: extra padding goes left when the margin and the width are both odd.
std::string Center(std::string_view text, size_t width) {
  size_t len = Width(text);
  if (len >= width) return std::string(text);
  size_t margin = width - len;
  size_t left = margin / 2 + (margin & width & 1);
  return std::string(left, ' ') + std::string(text) + std::string(margin - left, ' ');
}

// Columns are padded to at most this width: a longer cell (an absurd tensor name) overflows its
// column instead of widening every row, which would make the output rows x longest cell bytes.
constexpr size_t kMaxPaddedWidth = 160;

std::string Repeat(std::string_view unit, size_t n) {
  std::string out;
  out.reserve(unit.size() * n);
  for (size_t i = 0; i < n; ++i) out += unit;
  return out;
}

std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string RenderAsciiTable(std::string_view title, const std::vector<std::string>& headers,
                             const std::vector<std::vector<std::string>>& rows) {
  const std::string_view bar = "│", line = "─";
  std::vector<size_t> widths(headers.size());
  for (size_t i = 0; i < headers.size(); ++i) {
    widths[i] = Width(headers[i]);
    for (const auto& row : rows) widths[i] = std::max(widths[i], std::min(Width(row[i]), kMaxPaddedWidth));
  }
  size_t diff = 0;
  auto make_row = [&](std::string_view left, std::string_view middle, std::string_view right) {
    std::string out(left);
    for (size_t i = 0; i < widths.size(); ++i) {
      if (i > 0) out += middle;
      out += Repeat(line, widths[i]);
    }
    return out + Repeat(line, diff) + std::string(right);
  };
  size_t sum = 0;
  for (size_t w : widths) sum += w;
  if (Width(title) > sum) {
    size_t separator_width = sum + widths.size() - 1 + 2;
    diff = Width(title) > separator_width ? Width(title) - separator_width
                                          : separator_width - Width(title);
    widths.back() += diff;
  }
  std::string separator = make_row("├", "┼", "┤");
  std::string table = make_row("┌", line, "┐") + "\n";
  table += std::string(bar) + Center(title, Width(separator) - 2) + std::string(bar) + "\n";
  table += make_row("├", "┬", "┤") + "\n";
  widths.back() += diff;
  auto data_row = [&](const std::vector<std::string>& cells) {
    std::string out(bar);
    for (size_t i = 0; i < cells.size(); ++i) {
      out += Center(cells[i], widths[i]);
      out += bar;
    }
    return out + "\n";
  };
  table += data_row(headers);
  table += separator + "\n";
  for (const auto& row : rows) table += data_row(row);
  table += "└";
  for (size_t i = 0; i < widths.size(); ++i) {
    if (i > 0) table += "┴";
    table += Repeat(line, widths[i]);
  }
  table += "┘";
  return table;
}

std::string RenderPlainTable(const std::vector<std::string>& headers,
                             const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(headers.size());
  for (size_t i = 0; i < headers.size(); ++i) {
    widths[i] = Width(headers[i]);
    for (const auto& row : rows) {
      if (i < row.size()) widths[i] = std::max(widths[i], std::min(Width(row[i]), kMaxPaddedWidth));
    }
  }
  auto render_row = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < headers.size(); ++i) {
      std::string cell = i < cells.size() ? cells[i] : "";
      size_t width = Width(cell);
      size_t pad = widths[i] > width ? widths[i] - width : 0;
      if (i == 0) out += cell + std::string(pad, ' ');
      else out += "  " + std::string(pad, ' ') + cell;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = render_row(headers);
  size_t total = 0;
  for (size_t i = 0; i < widths.size(); ++i) total += widths[i] + (i ? 2 : 0);
  out += Repeat("─", total) + "\n";
  for (const auto& row : rows) out += render_row(row);
  return out;
}

namespace {

// The first `width` display columns of `s`, the last one "…" when cut.
std::string Cut(const std::string& s, size_t width) {
  if (Width(s) <= width || width == 0) return s;
  std::string out;
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80 && ++n == width) break;
    out += s[i];
  }
  return out + "…";
}

size_t TableWidth(const std::vector<std::string>& headers,
                  const std::vector<std::vector<std::string>>& rows) {
  size_t total = 0;
  for (size_t i = 0; i < headers.size(); ++i) {
    size_t w = Width(headers[i]);
    for (const auto& row : rows) {
      if (i < row.size()) w = std::max(w, std::min(Width(row[i]), kMaxPaddedWidth));
    }
    total += w + (i ? 2 : 0);
  }
  return total;
}

}  // namespace

std::string RenderPlainTable(const std::vector<std::string>& headers,
                             const std::vector<std::vector<std::string>>& rows,
                             const TextLayout& layout, const std::vector<size_t>& optional) {
  if (layout.wide || layout.width == 0 || TableWidth(headers, rows) <= layout.width) {
    return RenderPlainTable(headers, rows);
  }
  std::vector<std::string> h = headers;
  std::vector<std::vector<std::string>> r = rows;
  std::vector<std::string> left_out;
  // Leave out the optional columns, the rightmost first.
  std::vector<size_t> drop = optional;
  std::sort(drop.rbegin(), drop.rend());
  for (size_t column : drop) {
    if (TableWidth(h, r) <= layout.width) break;
    if (column >= h.size()) continue;
    left_out.push_back(h[column]);
    h.erase(h.begin() + static_cast<long>(column));
    for (auto& row : r) {
      if (column < row.size()) row.erase(row.begin() + static_cast<long>(column));
    }
  }
  // Cut the widest column's cells to what the width leaves it.
  bool cut = false;
  for (int pass = 0; pass < 4 && TableWidth(h, r) > layout.width; ++pass) {
    size_t widest = 0, widest_width = 0;
    for (size_t i = 0; i < h.size(); ++i) {
      size_t w = Width(h[i]);
      for (const auto& row : r) {
        if (i < row.size()) w = std::max(w, std::min(Width(row[i]), kMaxPaddedWidth));
      }
      if (w > widest_width) widest = i, widest_width = w;
    }
    const size_t excess = TableWidth(h, r) - layout.width;
    const size_t target = std::max<size_t>(std::max<size_t>(Width(h[widest]), 12),
                                           widest_width > excess ? widest_width - excess : 0);
    if (target >= widest_width) break;
    for (auto& row : r) {
      if (widest < row.size() && Width(row[widest]) > target) {
        row[widest] = Cut(row[widest], target);
        cut = true;
      }
    }
  }
  std::string out = RenderPlainTable(h, r);
  if (!left_out.empty() || cut) {
    std::string what;
    for (const auto& c : left_out) what += (what.empty() ? "" : ", ") + c;
    out += fmt::format("({}{}{}; --wide shows all)\n",
                       left_out.empty() ? "" : "left out: " + what,
                       !left_out.empty() && cut ? "; " : "", cut ? "cut to fit" : "");
  }
  return out;
}

std::string RenderCsv(const std::vector<std::string>& headers,
                      const std::vector<std::vector<std::string>>& rows) {
  auto render_row = [](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i) out += ',';
      out += CsvField(cells[i]);
    }
    return out + "\n";
  };
  std::string out = render_row(headers);
  for (const auto& row : rows) out += render_row(row);
  return out;
}

std::string RenderMarkdownTable(const std::vector<std::string>& headers,
                                const std::vector<std::vector<std::string>>& rows) {
  auto render_row = [](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const auto& c : cells) {
      std::string cell = c;
      std::replace(cell.begin(), cell.end(), '|', '/');
      out += " " + cell + " |";
    }
    return out + "\n";
  };
  std::string out = render_row(headers) + "|";
  for (size_t i = 0; i < headers.size(); ++i) out += i == 0 ? "---|" : "---:|";
  out += "\n";
  for (const auto& row : rows) out += render_row(row);
  return out;
}

Result<OutputFormat> ParseOutputFormat(std::string_view name) {
  if (name == "table" || name == "text") return OutputFormat::kTable;
  if (name == "json") return OutputFormat::kJson;
  if (name == "csv") return OutputFormat::kCsv;
  if (name == "markdown" || name == "md") return OutputFormat::kMarkdown;
  return MakeError("unknown format \"{}\" (expected table, json, csv or markdown)", name);
}

}  // namespace memfit
