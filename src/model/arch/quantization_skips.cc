// Which modules a quantization leaves unquantized: the skip list ("modules_to_not_convert",
// "ignore", "exclude_modules"; plain names, '*' globs and compressed-tensors "re:" patterns)
// matched against a module's name and its checkpoint names (Quantization::module_aliases).

#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>
#include <string_view>

#include "memfit/model.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

// fnmatch-style: '*' matches any run of characters (ModelOpt's "ignore" patterns).
bool GlobMatch(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// A compressed-tensors "re:" pattern as '*' patterns, when it only uses ".*", escaped
// punctuation ("\\.") and one level of "(a|b|c)" alternation of plain text, which covers the
// ignore lists of real releases ("re:.*self_attn.*", "re:.*mlp\\.(gate|up|down)_proj.*"). Python's
// re.match anchors at the start only, so each pattern ends with '*'. nullopt: use std::regex.
std::optional<std::vector<std::string>> RegexAsGlobs(std::string_view re) {
  std::vector<std::string> out = {""};
  const auto plain = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '/' ||
           ch == ':';
  };
  for (size_t i = 0; i < re.size();) {
    if (re.substr(i, 2) == ".*") {
      for (auto& g : out) g += '*';
      i += 2;
    } else if (re[i] == '\\' && i + 1 < re.size() && std::ispunct(static_cast<unsigned char>(re[i + 1]))) {
      for (auto& g : out) g += re[i + 1];
      i += 2;
    } else if (re[i] == '(') {
      const size_t close = re.find(')', i);
      if (close == std::string_view::npos) return std::nullopt;
      std::vector<std::string> alternatives = {""};
      for (size_t j = i + 1; j < close; ++j) {
        if (re[j] == '|') alternatives.emplace_back();
        else if (plain(re[j])) alternatives.back() += re[j];
        else return std::nullopt;
      }
      if (out.size() * alternatives.size() > 256) return std::nullopt;
      std::vector<std::string> next;
      for (const auto& g : out) {
        for (const auto& a : alternatives) next.push_back(g + a);
      }
      out = std::move(next);
      i = close + 1;
    } else if (plain(re[i])) {
      for (auto& g : out) g += re[i];
      ++i;
    } else {
      return std::nullopt;
    }
  }
  for (auto& g : out) {
    if (!g.ends_with('*')) g += '*';
  }
  return out;
}

}  // namespace

SkipIndex IndexSkips(const std::vector<std::string>& skip) {
  SkipIndex index;
  std::vector<std::string> patterns;
  for (const auto& pattern : skip) {
    if (!pattern.starts_with("re:")) {
      patterns.push_back(pattern);
      continue;
    }
    const std::string_view re = std::string_view(pattern).substr(3);
    if (auto globs = RegexAsGlobs(re)) {
      for (auto& g : *globs) patterns.push_back(std::move(g));
      continue;
    }
    try {
      index.regexes.emplace_back(std::string(re), std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error&) {
      // Not a pattern std::regex reads: it matches nothing here (the module stays quantized).
    }
  }
  for (const auto& pattern : patterns) {
    auto star = pattern.find('*');
    if (star == std::string::npos) {
      index.plain.push_back(pattern);
      continue;
    }
    index.prefix_lengths.push_back(star);
    index.by_prefix[pattern.substr(0, star)].push_back(pattern);
  }
  std::sort(index.prefix_lengths.begin(), index.prefix_lengths.end());
  index.prefix_lengths.erase(std::unique(index.prefix_lengths.begin(), index.prefix_lengths.end()),
                             index.prefix_lengths.end());
  return index;
}

namespace {

bool SkipsName(const Quantization& q, const std::string& module) {
  SkipIndex local;
  const SkipIndex& index = q.skip_index ? *q.skip_index : (local = IndexSkips(q.skip));
  for (const auto& pattern : index.plain) {
    if (module.find(pattern) != std::string::npos) return true;
  }
  for (const auto& re : index.regexes) {
    if (std::regex_search(module, re, std::regex_constants::match_continuous)) return true;
  }
  // A '*' pattern names the module or one of its ancestors: "model.layers.0*", "mtp*",
  // "*.mlp.shared_expert.*". Both the glob and the segment-wise match need the literal prefix.
  for (size_t length : index.prefix_lengths) {
    if (length > module.size()) break;
    auto it = index.by_prefix.find(std::string_view(module).substr(0, length));
    if (it == index.by_prefix.end()) continue;
    for (const auto& pattern : it->second) {
      if (GlobMatch(pattern, module)) return true;
      std::string_view path = module;
      while (!path.empty()) {
        if (MatchesModulePattern(path, pattern)) return true;
        auto dot = path.rfind('.');
        if (dot == std::string_view::npos) break;
        path = path.substr(0, dot);
      }
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> CheckpointNames(const Quantization& q, const std::string& module) {
  std::vector<std::string> names;
  for (const auto& [built, stored] : q.module_aliases) {
    if (module.starts_with(built)) names.push_back(stored + module.substr(built.size()));
  }
  if (names.empty()) names.push_back(module);
  return names;
}

bool SkipsModule(const Quantization& q, const std::string& module) {
  if (q.skip.empty()) return false;
  if (q.module_aliases.empty()) return SkipsName(q, module);  // the common case: no copies
  for (const auto& name : CheckpointNames(q, module)) {
    if (SkipsName(q, name)) return true;
  }
  return false;
}

}  // namespace memfit::arch
