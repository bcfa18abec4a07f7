#pragma once
// A list in a sentence: "a", "a or b", "a, b or c".

#include <cstddef>
#include <string>
#include <string_view>

namespace memfit {

// `words` (strings or string views) joined by ", ", the last two by " CONJUNCTION ".
template <typename Words>
std::string JoinWords(const Words& words, std::string_view conjunction) {
  std::string out;
  size_t i = 0;
  for (const auto& word : words) {
    if (i > 0) {
      if (i + 1 == words.size()) {
        out += ' ';
        out += conjunction;
        out += ' ';
      } else {
        out += ", ";
      }
    }
    out += word;
    ++i;
  }
  return out;
}

}  // namespace memfit
