#pragma once
// "Did you mean": the closest of a list of known words to a word the user typed, for misspelled
// flags, GPUs, engines, methods and models.

#include <string>
#include <string_view>
#include <vector>

namespace memfit {

// Levenshtein distance, case-insensitive, with an adjacent transposition counting 1 (rtx4900 ->
// rtx4090 is 1). Words longer than 256 characters are compared on their first 256.
size_t EditDistance(std::string_view a, std::string_view b);

// The closest candidate within a distance of max(1, word's length / 3), or "" when none is that
// close (ties: the first in the list).
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean X?)" for ClosestMatch's answer, or "".
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace memfit
