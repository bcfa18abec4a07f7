// Module tree for device maps. accelerate references (utils/modeling.py): compute_module_sizes,
// get_max_layer_size, get_balanced_memory, get_module_leaves; docs/estimates.md "Device map".

#include "plan/module_tree.h"

#include <algorithm>
#include <unordered_map>

#include "memfit/checked_math.h"

namespace memfit::plan {
namespace {

bool IsNumber(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string_view LastSegment(std::string_view path) {
  size_t dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

uint64_t ParseIndex(std::string_view s) {
  uint64_t v = 0;
  for (char c : s) v = v > UINT64_MAX / 16 ? v : v * 10 + static_cast<uint64_t>(c - '0');
  return v;
}

}  // namespace

int ModuleTree::Find(const std::string& path) const {
  auto it = index.find(path);
  return it == index.end() ? -1 : it->second;
}

ModuleTree BuildModuleTree(const Model& model) {
  ModuleTree tree;
  tree.nodes.emplace_back();  // root
  auto& index = tree.index;
  index.emplace("", 0);
  index.reserve(model.tensors.size() * 2);
  std::unordered_map<std::string, std::vector<std::string>> ties;  // target -> tied names
  std::vector<std::string> tie_order;
  std::vector<bool> in_head_only(1, false);
  tree.tensor_node.reserve(model.tensors.size());
  for (const auto& t : model.tensors) {
    bool tied = !t.tied_to.empty();
    bool buffer = t.kind != TensorKind::kParameter;
    if (tied) {
      if (!ties.count(t.tied_to)) tie_order.push_back(t.tied_to);
      ties[t.tied_to].push_back(t.name);
    }
    int parent = 0;
    size_t start = 0;
    while (true) {
      size_t dot = t.name.find('.', start);
      bool last = dot == std::string::npos;
      std::string path = t.name.substr(0, last ? std::string::npos : dot);
      auto [it, inserted] = index.emplace(path, static_cast<int>(tree.nodes.size()));
      if (inserted) {
        TreeNode node;
        node.path = path;
        node.parent = parent;
        tree.nodes.push_back(std::move(node));
        in_head_only.push_back(true);
        tree.nodes[parent].children.push_back(it->second);
      }
      int self = it->second;
      in_head_only[self] = in_head_only[self] && t.in_head;
      if (last) {
        tree.nodes[self].is_tensor = true;
        tree.nodes[self].is_buffer = buffer;
      }
      parent = self;
      if (last) break;
      start = dot + 1;
    }
    tree.tensor_node.push_back(parent);
    if (!tied) {
      for (int n = parent; n >= 0 && !tree.nodes[n].counted; n = tree.nodes[n].parent) {
        tree.nodes[n].counted = true;
      }
    }
  }
  for (auto& node : tree.nodes) {
    for (size_t p = 0; p < model.no_split_patterns.size() && !node.no_split; ++p) {
      if (!node.is_tensor && !node.path.empty() &&
          MatchesModulePattern(node.path, model.no_split_patterns[p])) {
        node.no_split = true;
        node.pattern = static_cast<int>(p);
      }
    }
  }
  // Nodes are created parent first, so one pass propagates "inside a block" downwards.
  for (size_t i = 1; i < tree.nodes.size(); ++i) {
    TreeNode& node = tree.nodes[i];
    node.in_block = node.no_split || (node.parent > 0 && tree.nodes[node.parent].in_block);
  }
  // Registration order. Builders emit tensors in PyTorch order already; safetensors headers list
  // names sorted as strings, so numbered siblings are put back in numeric order ("layers.10"
  // after "layers.9") and, at the root, head modules ("lm_head") after the base model.
  for (auto& node : tree.nodes) {
    std::vector<size_t> numbered;
    for (size_t i = 0; i < node.children.size(); ++i) {
      if (IsNumber(LastSegment(tree.nodes[node.children[i]].path))) numbered.push_back(i);
    }
    std::vector<int> sorted;
    for (size_t i : numbered) sorted.push_back(node.children[i]);
    std::stable_sort(sorted.begin(), sorted.end(), [&](int a, int b) {
      return ParseIndex(LastSegment(tree.nodes[a].path)) <
             ParseIndex(LastSegment(tree.nodes[b].path));
    });
    for (size_t k = 0; k < numbered.size(); ++k) node.children[numbered[k]] = sorted[k];
    for (int c : node.children) {
      if (!tree.nodes[c].is_tensor) node.has_child_module = true;
    }
  }
  tree.first_block_of_pattern.assign(model.no_split_patterns.size(), -1);
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    TreeNode& node = tree.nodes[i];
    if (node.counted && node.pattern >= 0 &&
        tree.first_block_of_pattern[static_cast<size_t>(node.pattern)] < 0) {
      tree.first_block_of_pattern[static_cast<size_t>(node.pattern)] = static_cast<int>(i);
    }
    if (!node.counted || node.is_tensor || node.path.empty()) continue;
    node.leaf_module = true;
    for (int c : node.children) {
      if (tree.nodes[c].counted && !tree.nodes[c].is_tensor) node.leaf_module = false;
    }
    if (node.leaf_module) ++tree.leaf_module_count;
  }
  tree.blocks_in_subtree.assign(tree.nodes.size(), 0);
  for (size_t i = tree.nodes.size(); i-- > 0;) {
    const TreeNode& node = tree.nodes[i];
    if (node.no_split) {
      ++tree.blocks_in_subtree[i];
      if (node.leaf_module) ++tree.leaf_block_count;
    }
    if (i > 0) tree.blocks_in_subtree[static_cast<size_t>(node.parent)] += tree.blocks_in_subtree[i];
  }
  auto& root = tree.nodes[0].children;
  std::stable_partition(root.begin(), root.end(), [&](int c) { return !in_head_only[c]; });
  for (const auto& target : tie_order) {
    std::vector<std::string> group = {target};
    for (const auto& name : ties[target]) group.push_back(name);
    tree.tied_groups.push_back(std::move(group));
  }
  return tree;
}

TreeSizes ComputeSizes(const ModuleTree& tree, const Model& model,
                       const DeviceMapOptions& options) {
  // Bytes are added where they sit (a tensor's node, a block's extra bytes), then summed bottom-up
  // in one pass: nodes are created parent first, so every child has a larger index than its
  // parent. Saturating addition of non-negative sizes is associative, so this equals adding each
  // tensor to all of its ancestors, in O(tensors + nodes) instead of O(tensors x depth).
  TreeSizes sizes;
  sizes.size.assign(tree.nodes.size(), 0);
  sizes.buffer_size.assign(tree.nodes.size(), 0);
  auto add = [](uint64_t& to, uint64_t bytes) { to = CheckedAdd(to, bytes).value_or(UINT64_MAX); };
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    const Tensor& t = model.tensors[i];
    if (!t.tied_to.empty()) continue;  // counted once, under the tensor it is tied to
    uint64_t bytes = options.size_of ? options.size_of(t) : t.bytes;
    const size_t node = static_cast<size_t>(tree.tensor_node[i]);
    add(sizes.size[node], bytes);
    int module = tree.nodes[node].parent;
    if (module > 0 && tree.nodes[static_cast<size_t>(module)].leaf_module) {
      add(sizes.leaf_module_bytes, bytes);
    }
    if (t.kind != TensorKind::kParameter) add(sizes.buffer_size[node], bytes);
  }
  // Extra bytes that travel with no-split blocks (KV cache, optimizer states).
  if (options.extra_block_bytes) {
    for (size_t i = 1; i < tree.nodes.size(); ++i) {
      if (tree.nodes[i].no_split) {
        uint64_t extra = options.extra_block_bytes(tree.nodes[i].path);
        add(sizes.size[i], extra);
        if (tree.nodes[i].leaf_module) add(sizes.leaf_module_bytes, extra);
      }
    }
  }
  for (size_t i = tree.nodes.size(); i-- > 1;) {
    const size_t parent = static_cast<size_t>(tree.nodes[i].parent);
    add(sizes.size[parent], sizes.size[i]);
    add(sizes.buffer_size[parent], sizes.buffer_size[i]);
  }
  return sizes;
}

TreeSizes AddBlockBytes(const ModuleTree& tree, const TreeSizes& sizes, uint64_t per_block) {
  TreeSizes out = sizes;
  if (per_block == 0) return out;
  auto times = [per_block](uint64_t n) { return CheckedMul(per_block, n).value_or(UINT64_MAX); };
  for (size_t i = 0; i < out.size.size(); ++i) {
    if (tree.blocks_in_subtree[i] == 0) continue;
    out.size[i] = CheckedAdd(out.size[i], times(tree.blocks_in_subtree[i])).value_or(UINT64_MAX);
  }
  out.leaf_module_bytes =
      CheckedAdd(out.leaf_module_bytes, times(tree.leaf_block_count)).value_or(UINT64_MAX);
  return out;
}

std::vector<int> SplitChildren(const ModuleTree& tree, int node) {
  std::vector<int> out;
  const auto& children = tree.nodes[node].children;
  for (int c : children) {
    if (tree.nodes[c].is_tensor && !tree.nodes[c].is_buffer) out.push_back(c);
  }
  for (int c : children) {
    if (!tree.nodes[c].is_tensor) out.push_back(c);
  }
  for (int c : children) {
    if (tree.nodes[c].is_tensor && tree.nodes[c].is_buffer) out.push_back(c);
  }
  return out;
}

LargestLayer MaxLayerSize(const ModuleTree& tree, const TreeSizes& sizes,
                          const std::vector<int>& list, bool modules_only) {
  LargestLayer best;
  std::vector<int> stack;
  for (auto it = list.rbegin(); it != list.rend(); ++it) {
    if (modules_only && tree.nodes[*it].is_tensor) continue;
    stack.push_back(*it);
  }
  while (!stack.empty()) {
    int n = stack.back();
    stack.pop_back();
    const TreeNode& node = tree.nodes[n];
    if (node.is_tensor || !node.has_child_module || node.no_split) {
      uint64_t size = sizes.size[n];
      if (size > best.size) {
        best.size = size;
        best.nodes = {n};
      } else if (size == best.size) {
        best.nodes.push_back(n);
      }
      continue;
    }
    // named_children(): child modules only.
    for (auto it = node.children.rbegin(); it != node.children.rend(); ++it) {
      if (!tree.nodes[*it].is_tensor) stack.push_back(*it);
    }
  }
  return best;
}

MemoryBudget BalancedBudget(const ModuleTree& tree, const TreeSizes& sizes, MemoryBudget budget) {
  std::vector<size_t> gpus;
  for (size_t i = 0; i < budget.gpu_bytes.size(); ++i) {
    if (budget.gpu_bytes[i] > 0) gpus.push_back(i);
  }
  if (gpus.empty()) return budget;
  uint64_t per_gpu = sizes.size[0] / gpus.size();
  // The first module of each no-split class (pattern) in module_sizes order, which is node order;
  // get_module_leaves twice: tensors are the first leaves; without them, modules with no counted
  // child module are the "final modules" (both precomputed with the tree).
  uint64_t block = 0;
  for (int n : tree.first_block_of_pattern) {
    if (n >= 0) block = std::max(block, sizes.size[static_cast<size_t>(n)]);
  }
  uint64_t leaf_sum = sizes.leaf_module_bytes;
  uint64_t leaf_count = tree.leaf_module_count;
  uint64_t mean_leaves = leaf_count ? leaf_sum / leaf_count : 0;
  uint64_t buffer = std::max(block, mean_leaves);
  buffer = buffer + buffer / 4;  // int(1.25 * x)
  per_gpu = CheckedAdd(per_gpu, buffer).value_or(UINT64_MAX);
  for (size_t k = 0; k + 1 < gpus.size(); ++k) {
    budget.gpu_bytes[gpus[k]] = std::min(per_gpu, budget.gpu_bytes[gpus[k]]);
  }
  return budget;
}

}  // namespace memfit::plan
