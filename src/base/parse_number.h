#pragma once
// Decimal text -> double with std::from_chars' rules (no leading '+' or space, no hex, inf or nan,
// the whole text consumed), for every toolchain: emscripten's libc++ 14 has no floating-point
// std::from_chars, so the parse goes through strtod after the text is checked to be a plain
// decimal number ("12", "-0.5", "1e-3", ".5"). Every floating-point parse of user text uses this.

#include <optional>
#include <string_view>

namespace memfit {

std::optional<double> ParseDecimalDouble(std::string_view text);

}  // namespace memfit
