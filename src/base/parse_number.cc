#include "base/parse_number.h"

#include <cstdlib>
#include <string>

namespace memfit {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// [-] digits [. digits] [e|E [+|-] digits], with digits on at least one side of the point.
bool IsPlainDecimal(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  size_t digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exponent_digits = 0;
    while (i < s.size() && IsDigit(s[i])) ++i, ++exponent_digits;
    if (exponent_digits == 0) return false;
  }
  return i == s.size();
}

}  // namespace

std::optional<double> ParseDecimalDouble(std::string_view text) {
  if (text.size() > 400 || !IsPlainDecimal(text)) return std::nullopt;
  const std::string copy(text);  // strtod needs a terminated string
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return value;  // out of range: +-HUGE_VAL or 0, as the callers' range checks expect
}

}  // namespace memfit
