// The compact form of repeated modules (Tensor::copies): expansion, counts and the block check.
// Why it exists and what it saves: docs/benchmarks.md, "The compact expert form".

#include <fmt/format.h>

#include <algorithm>

#include "memfit/model.h"
#include "model/tensor_repeats.h"

namespace memfit {

std::string RepeatCopyName(const Tensor& t, uint64_t k) {
  // The template's index is "0": one digit at `at`.
  const size_t at = t.name.size() - std::min<size_t>(t.repeat_index_from_end, t.name.size());
  std::string name;
  name.reserve(t.name.size() + 20);
  name.append(t.name, 0, at);
  fmt::format_to(std::back_inserter(name), "{}", k);
  name.append(t.name, at + 1, std::string::npos);
  return name;
}

bool HasRepeats(const Model& model) {
  for (const auto& t : model.tensors) {
    if (t.repeat_span > 0) return true;
  }
  return false;
}

uint64_t ExpandedTensorCount(const Model& model) {
  uint64_t count = 0;
  for (const auto& t : model.tensors) count += t.copies;  // each bounded by the builder's cap
  return count;
}

namespace {

// Whether the run opened by `t` lies inside one no-split block: a module on the path above the
// index (the copies' parent included) matches a no-split pattern, so AssignBlocks stops there and
// no copy's own module is ever a block.
bool RunInOneBlock(const Model& model, const Tensor& t) {
  const std::string_view above = std::string_view(t.name).substr(
      0, t.name.size() - std::min<size_t>(t.repeat_index_from_end, t.name.size()));
  for (size_t dot = above.find('.'); dot != std::string_view::npos;
       dot = above.find('.', dot + 1)) {
    const std::string_view path = above.substr(0, dot);
    for (const auto& pattern : model.no_split_patterns) {
      if (MatchesModulePattern(path, pattern)) return true;
    }
  }
  return false;
}

// Writes out every copy of the runs `expand` selects (by their opening tensor), in the builder's
// order: copy 0's run, copy 1's, ...
template <typename Select>
void Expand(Model& model, Select expand) {
  std::vector<Tensor> out;
  out.reserve(ExpandedTensorCount(model));
  auto& in = model.tensors;
  for (size_t i = 0; i < in.size();) {
    const size_t span =
        in[i].repeat_span == 0 ? 1 : std::min<size_t>(in[i].repeat_span, in.size() - i);
    if (in[i].repeat_span == 0 || !expand(in[i])) {
      for (size_t j = i; j < i + span; ++j) out.push_back(std::move(in[j]));
      i += span;
      continue;
    }
    const uint64_t copies = in[i].copies;
    for (uint64_t k = 0; k < copies; ++k) {
      for (size_t j = i; j < i + span; ++j) {
        Tensor t = in[j];
        if (k > 0) t.name = RepeatCopyName(in[j], k);
        t.copies = 1;
        t.repeat_span = 0;
        t.repeat_index_from_end = 0;
        out.push_back(std::move(t));
      }
    }
    i += span;
  }
  model.tensors = std::move(out);
}

}  // namespace

void ExpandRepeats(Model& model) {
  if (HasRepeats(model)) Expand(model, [](const Tensor&) { return true; });
}

void ExpandRepeatsOutsideBlocks(Model& model) {
  if (!RepeatsStayInBlocks(model)) {
    Expand(model, [&](const Tensor& t) { return !RunInOneBlock(model, t); });
  }
}

bool RepeatsStayInBlocks(const Model& model) {
  for (const auto& t : model.tensors) {
    if (t.repeat_span > 0 && !RunInOneBlock(model, t)) return false;
  }
  return true;
}

}  // namespace memfit
