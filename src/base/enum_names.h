#pragma once
// An enum's words as one table, in place of a switch that prints it and an if-chain that reads
// it: the first word listed for a value is its name; every word listed reads back as its value,
// so a value's other spellings follow its name.
//   constexpr auto kEngines = std::to_array<EnumWord<Engine>>({
//       {"vllm", Engine::kVllm}, {"sglang", Engine::kSglang}});
//   NameOf(Engine::kVllm, kEngines) == "vllm"; FindWord("sglang", kEngines) == Engine::kSglang.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "memfit/result.h"

namespace memfit {

template <typename E>
using EnumWord = std::pair<std::string_view, E>;

// The first word listed for `v`; "?" for a value the table lacks.
template <typename E, size_t N>
constexpr std::string_view NameOf(E v, const std::array<EnumWord<E>, N>& words) {
  for (const auto& [word, value] : words) {
    if (value == v) return word;
  }
  return "?";
}

// The value `s` spells (exactly), if the table lists it.
template <typename E, size_t N>
constexpr std::optional<E> FindWord(std::string_view s, const std::array<EnumWord<E>, N>& words) {
  for (const auto& [word, value] : words) {
    if (word == s) return value;
  }
  return std::nullopt;
}

// The value `s` spells, or "FLAG S: expected one of W1, W2, ..." naming every word listed.
template <typename E, size_t N>
Result<E> ParseWord(std::string_view s, const std::array<EnumWord<E>, N>& words,
                    std::string_view flag) {
  if (auto v = FindWord(s, words)) return *v;
  std::string all;
  for (const auto& [word, value] : words) {
    if (!all.empty()) all += ", ";
    all += word;
  }
  return MakeError("{} {}: expected one of {}", flag, s, all);
}

}  // namespace memfit
