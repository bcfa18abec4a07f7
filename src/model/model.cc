#include "memfit/model.h"

#include <unordered_map>

namespace memfit {

ModelTotals ComputeTotals(const Model& model) {
  ModelTotals totals;
  for (const auto& t : model.tensors) {
    if (t.stored) totals.stored_bytes += t.bytes;
    if (!t.tied_to.empty()) continue;  // shares its storage: resident once
    totals.resident_bytes += t.bytes;
    if (t.kind == TensorKind::kParameter) {
      totals.parameters += t.numel;
      if (t.in_head) totals.head_parameters += t.numel;
    } else {
      totals.buffer_bytes += t.bytes;
    }
  }
  return totals;
}

uint64_t FilteredSize(const Tensor& t, const TensorFilter& filter) {
  if (!filter.include_head && t.in_head) return 0;
  if (!filter.include_buffers && t.kind != TensorKind::kParameter) return 0;
  if (!filter.include_unstored && !t.stored) return 0;
  if (filter.count_ties_once && !t.tied_to.empty()) return 0;
  return filter.size_of ? filter.size_of(t) : t.bytes;
}

bool MatchesModulePattern(std::string_view path, std::string_view pattern) {
  while (true) {
    auto p_dot = pattern.find('.');
    auto s_dot = path.find('.');
    std::string_view p_seg = pattern.substr(0, p_dot);
    std::string_view s_seg = path.substr(0, s_dot);
    if (p_seg != "*" && p_seg != s_seg) return false;
    if (p_dot == std::string_view::npos || s_dot == std::string_view::npos) {
      return p_dot == std::string_view::npos && s_dot == std::string_view::npos;
    }
    pattern.remove_prefix(p_dot + 1);
    path.remove_prefix(s_dot + 1);
  }
}

namespace {

struct Node {
  std::string path;
  bool is_tensor = false;
  bool has_child_module = false;
  uint64_t size = 0;
  uint64_t parameters = 0;
  std::vector<size_t> children;
};

}  // namespace

std::vector<Block> IndivisibleBlocks(const Model& model, const TensorFilter& filter) {
  std::vector<Node> nodes(1);  // nodes[0]: the root module
  std::unordered_map<std::string, size_t> index;
  index.reserve(model.tensors.size() * 2);
  for (const auto& t : model.tensors) {
    // A tensor the filter excludes is not part of this view at all (a tied lm_head is not a
    // module of the base model), except ties, which still name a module in the tree.
    bool excluded = (!filter.include_head && t.in_head) ||
                    (!filter.include_buffers && t.kind != TensorKind::kParameter) ||
                    (!filter.include_unstored && !t.stored);
    if (excluded) continue;
    uint64_t size = FilteredSize(t, filter);
    uint64_t params = (t.kind == TensorKind::kParameter && size > 0) ? t.numel : 0;
    size_t parent = 0;
    size_t start = 0;
    while (true) {
      size_t dot = t.name.find('.', start);
      bool last = dot == std::string::npos;
      std::string path = t.name.substr(0, last ? std::string::npos : dot);
      auto [it, inserted] = index.emplace(path, nodes.size());
      if (inserted) {
        nodes.push_back(Node{.path = path});
        nodes[parent].children.push_back(it->second);
      }
      size_t self = it->second;
      nodes[self].size += size;
      nodes[self].parameters += params;
      if (last) {
        nodes[self].is_tensor = true;
        break;
      }
      parent = self;
      start = dot + 1;
    }
  }
  // A module has child modules when any child is not a tensor.
  for (auto& node : nodes) {
    node.has_child_module = false;
    for (size_t c : node.children) {
      if (!nodes[c].is_tensor) node.has_child_module = true;
    }
  }
  auto no_split = [&](const std::string& path) {
    for (const auto& pattern : model.no_split_patterns) {
      if (MatchesModulePattern(path, pattern)) return true;
    }
    return false;
  };
  // accelerate's roots: the model's direct tensors, then its child modules.
  std::vector<size_t> todo;
  for (size_t c : nodes[0].children) {
    if (nodes[c].is_tensor) todo.push_back(c);
  }
  for (size_t c : nodes[0].children) {
    if (!nodes[c].is_tensor) todo.push_back(c);
  }
  std::vector<Block> blocks;
  // Depth-first, children in order.
  std::vector<size_t> stack(todo.rbegin(), todo.rend());
  while (!stack.empty()) {
    size_t n = stack.back();
    stack.pop_back();
    const Node& node = nodes[n];
    if (node.is_tensor || !node.has_child_module || no_split(node.path)) {
      blocks.push_back(Block{.name = node.path, .bytes = node.size, .parameters = node.parameters});
      continue;
    }
    // Expand: only child modules (direct tensors of an expanded module are not blocks, as in
    // accelerate's get_max_layer_size, which walks named_children()).
    for (auto it = node.children.rbegin(); it != node.children.rend(); ++it) {
      if (!nodes[*it].is_tensor) stack.push_back(*it);
    }
  }
  return blocks;
}

std::optional<Block> LargestBlock(const Model& model, const TensorFilter& filter) {
  std::optional<Block> best;
  for (auto& block : IndivisibleBlocks(model, filter)) {
    if (!best || block.bytes > best->bytes) best = std::move(block);
  }
  return best;
}

}  // namespace memfit
