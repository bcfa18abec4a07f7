#include "memfit/units.h"

#include "base/parse_number.h"

#include <array>
#include <cctype>
#include <cmath>
#include <string>

namespace memfit {

std::string FormatBytes(uint64_t bytes) {
  static constexpr std::array<std::string_view, 6> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.2f} {}", value, kUnits[unit]);
}

std::string FormatBytesAccelerate(double size) {
  // accelerate/utils/other.py convert_bytes: round(size, 2) printed with Python's float repr.
  static constexpr std::array<std::string_view, 5> kUnits = {"bytes", "KB", "MB", "GB", "TB"};
  for (auto unit : kUnits) {
    if (size < 1024.0) {
      std::string text = fmt::format("{:.2f}", size);  // correctly rounded, half-even on ties
      while (text.back() == '0' && text[text.size() - 2] != '.') text.pop_back();
      return fmt::format("{} {}", text, unit);
    }
    size /= 1024.0;
  }
  std::string text = fmt::format("{:.2f}", size);
  while (text.back() == '0' && text[text.size() - 2] != '.') text.pop_back();
  return fmt::format("{} PB", text);
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  std::string s;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  }
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == 0) return MakeError("size \"{}\": expected a number with a unit such as 24GiB", text);
  const std::optional<double> parsed = ParseDecimalDouble(std::string_view(s).substr(0, i));
  if (!parsed) return MakeError("size \"{}\": bad number", text);
  const double value = *parsed;
  std::string unit = s.substr(i);
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double scale;
  if (unit.empty() || unit == "b") scale = 1;
  else if (unit == "k" || unit == "kib") scale = 1024.0;
  else if (unit == "m" || unit == "mib") scale = 1024.0 * 1024;
  else if (unit == "g" || unit == "gib") scale = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tib") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (unit == "kb") scale = 1e3;
  else if (unit == "mb") scale = 1e6;
  else if (unit == "gb") scale = 1e9;
  else if (unit == "tb") scale = 1e12;
  else return MakeError("size \"{}\": unknown unit \"{}\" (use B, KiB, MiB, GiB, TiB, or KB/MB/GB/TB for powers of 1000)", text, unit);
  double bytes = value * scale;
  if (!(bytes >= 0) || bytes >= 1.8e19) return MakeError("size \"{}\" is out of range", text);
  // Not llround: a long long ends at 2^63 (9.2e18), below the range accepted here.
  return static_cast<uint64_t>(std::round(bytes));
}

std::string FormatGrouped(uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string FormatCount(uint64_t count) {
  if (count < 1000) return fmt::format("{}", count);
  static constexpr std::array<std::string_view, 4> kUnits = {"K", "M", "B", "T"};
  double value = static_cast<double>(count);
  size_t unit = 0;
  value /= 1000.0;
  while (value >= 1000.0 && unit + 1 < kUnits.size()) {
    value /= 1000.0;
    ++unit;
  }
  return fmt::format("{:.2f}{}", value, kUnits[unit]);
}

}  // namespace memfit
