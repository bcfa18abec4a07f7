#include "memfit/model.h"

#include <algorithm>
#include <unordered_map>

#include "memfit/checked_math.h"

namespace memfit {

namespace {

// Every copy of a compact run (Tensor::copies) counts; CheckModelBounds bounds the products.
void AddToTotals(ModelTotals& totals, const Tensor& t) {
  const uint64_t n = t.copies;
  if (t.base_only) {
    if (t.kind == TensorKind::kParameter) totals.base_only_parameters += LogicalParams(t) * n;
    return;  // not part of architectures[0]'s class
  }
  if (t.stored) totals.stored_bytes += t.bytes * n;
  if (!t.loaded) return;  // stored only
  if (!t.tied_to.empty()) return;  // shares its storage: resident once
  totals.resident_bytes += t.bytes * n;
  if (t.kind == TensorKind::kParameter) {
    totals.parameters += LogicalParams(t) * n;
    if (t.in_head) totals.head_parameters += LogicalParams(t) * n;
  } else {
    totals.buffer_bytes += t.bytes * n;
  }
}

}  // namespace

ModelTotals ComputeTotals(const Model& model) {
  ModelTotals totals;
  for (const auto& t : model.tensors) AddToTotals(totals, t);
  return totals;
}

std::vector<std::pair<std::string, ModelTotals>> ComponentTotals(const Model& model) {
  std::vector<std::pair<std::string, ModelTotals>> out;
  if (std::none_of(model.tensors.begin(), model.tensors.end(),
                   [](const Tensor& t) { return !t.component.empty(); })) {
    return out;
  }
  // Components in order of first appearance; a model has a handful.
  for (const auto& t : model.tensors) {
    std::string_view name = t.component.empty() ? std::string_view("shared") : t.component;
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& c) { return c.first == name; });
    if (it == out.end()) it = out.emplace(out.end(), std::string(name), ModelTotals{});
    AddToTotals(it->second, t);
  }
  return out;
}

Status CheckModelBounds(const Model& model, std::string_view where) {
  ByteSum elements, bytes;
  bool overflow = false;
  for (const auto& t : model.tensors) {
    const auto e = CheckedMul(std::max(t.numel, LogicalParams(t)), t.copies);
    const auto b = CheckedMul(t.bytes, t.copies);
    overflow = overflow || !e || !b;
    elements.Add(e.value_or(0));
    bytes.Add(b.value_or(0));
  }
  if (overflow || elements.overflowed() || elements.total() > kMaxModelElements) {
    return MakeError("{}: the model has more than 2^56 elements in all, beyond what memfit can "
                     "size (limit 72,057,594,037,927,936)", where);
  }
  if (bytes.overflowed() || bytes.total() > kMaxModelBytes) {
    return MakeError("{}: the model's tensors take more than 2^60 bytes (1 EiB) in all, beyond what "
                     "memfit can size", where);
  }
  return Ok{};
}

uint64_t FilteredSize(const Tensor& t, const TensorFilter& filter) {
  if (!t.loaded) return 0;
  if (!filter.include_head && t.in_head) return 0;
  if (filter.include_head && t.base_only) return 0;
  if (!filter.include_buffers && t.kind != TensorKind::kParameter) return 0;
  if (!filter.include_unstored && !t.stored) return 0;
  if (filter.count_ties_once && !t.tied_to.empty() &&
      !(filter.count_broken_ties && t.tie_broken_on_meta)) {
    return 0;
  }
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

// Module paths deeper than this many segments are cut: the rest of the name is one leaf. Real
// checkpoints nest about 10 deep; the cap bounds the work per tensor name to kMaxModuleDepth
// hashes of the name (docs/security.md).
constexpr size_t kMaxModuleDepth = 64;

struct Node {
  std::string_view path;  // a prefix of a tensor name in the model (stable while the model is)
  size_t parent = 0;
  bool is_tensor = false;
  bool has_child_module = false;
  // A module matching a no-split pattern: one block whatever lies below, so the tensors under
  // it stop here and its subtree is never built (per-expert checkpoints hold ~1M tensors).
  bool cut = false;
  int32_t block = -1;
  std::vector<size_t> children{};
};

bool Excluded(const Tensor& t, const TensorFilter& filter) {
  // A tensor the filter excludes is not part of this view at all (a tied lm_head is not a module
  // of the base model); ties still name a module in the tree.
  return (!filter.include_head && t.in_head) || (filter.include_head && t.base_only) ||
         (!filter.include_buffers && t.kind != TensorKind::kParameter) ||
         (!filter.include_unstored && !t.stored) || !t.loaded;
}

}  // namespace

BlockAssignment AssignBlocks(const Model& model, const TensorFilter& filter) {
  std::vector<Node> nodes(1);  // nodes[0]: the root module
  // A child is found by (parent node, its own segment): hashing the segment alone keeps the walk
  // linear in the name's length (hashing each whole prefix was quadratic in the depth).
  struct ChildKey {
    size_t parent;
    std::string_view segment;
    bool operator==(const ChildKey&) const = default;
  };
  struct ChildHash {
    size_t operator()(const ChildKey& k) const {
      return std::hash<std::string_view>{}(k.segment) ^ (k.parent * 0x9E3779B97F4A7C15ull);
    }
  };
  std::unordered_map<ChildKey, size_t, ChildHash> index;
  index.reserve(model.tensors.size() * 2);
  std::vector<size_t> tensor_node(model.tensors.size(), 0);
  auto no_split = [&](std::string_view path) {
    for (const auto& pattern : model.no_split_patterns) {
      if (MatchesModulePattern(path, pattern)) return true;
    }
    return false;
  };
  // The no-split module the previous tensor stopped at: tensors come grouped by module (all of a
  // layer's experts in a row), so a name below it stops there too, with no lookup.
  size_t last_cut = 0;
  for (size_t ti = 0; ti < model.tensors.size(); ++ti) {
    const auto& t = model.tensors[ti];
    if (Excluded(t, filter)) continue;
    std::string_view name = t.name;
    if (last_cut != 0) {
      std::string_view cut_path = nodes[last_cut].path;
      if (name.size() > cut_path.size() && name[cut_path.size()] == '.' &&
          name.starts_with(cut_path)) {
        tensor_node[ti] = last_cut;
        continue;
      }
    }
    size_t parent = 0, start = 0;
    for (size_t depth = 1;; ++depth) {
      size_t dot = depth < kMaxModuleDepth ? name.find('.', start) : std::string_view::npos;
      bool last = dot == std::string_view::npos;
      std::string_view path = name.substr(0, last ? name.size() : dot);
      auto [it, inserted] = index.emplace(ChildKey{parent, path.substr(start)}, nodes.size());
      if (inserted) {
        nodes.push_back(Node{.path = path, .parent = parent});
        nodes[parent].children.push_back(it->second);
      }
      size_t self = it->second;
      if (last) {
        nodes[self].is_tensor = true;
        tensor_node[ti] = self;
        break;
      }
      nodes[parent].has_child_module = true;
      // The first no-split module on the path is the block of everything below it: the DFS
      // below makes it a block if it reaches it (an ancestor is a block only if it is a tensor
      // too, and then the walk up from here finds that ancestor as before).
      if (inserted) nodes[self].cut = no_split(path);
      if (nodes[self].cut) {
        tensor_node[ti] = self;
        last_cut = self;
        break;
      }
      parent = self;
      start = dot + 1;
    }
  }
  // accelerate's roots: the model's direct tensors, then its child modules; depth-first.
  std::vector<size_t> roots;
  for (size_t c : nodes[0].children) {
    if (nodes[c].is_tensor) roots.push_back(c);
  }
  for (size_t c : nodes[0].children) {
    if (!nodes[c].is_tensor) roots.push_back(c);
  }
  BlockAssignment out;
  std::vector<size_t> stack(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    Node& node = nodes[stack.back()];
    stack.pop_back();
    if (node.is_tensor || !node.has_child_module || node.cut || no_split(node.path)) {
      node.block = static_cast<int32_t>(out.names.size());
      out.names.emplace_back(node.path);
      continue;
    }
    // Expand: only child modules (direct tensors of an expanded module are in no block, as in
    // accelerate's get_max_layer_size, which walks named_children()).
    for (auto it = node.children.rbegin(); it != node.children.rend(); ++it) {
      if (!nodes[*it].is_tensor) stack.push_back(*it);
    }
  }
  out.tensor_block.assign(model.tensors.size(), -1);
  for (size_t ti = 0; ti < model.tensors.size(); ++ti) {
    if (Excluded(model.tensors[ti], filter)) continue;
    for (size_t n = tensor_node[ti]; n != 0; n = nodes[n].parent) {
      if (nodes[n].block >= 0) {
        out.tensor_block[ti] = nodes[n].block;
        break;
      }
    }
  }
  return out;
}

std::vector<Block> SumBlocks(const Model& model, const BlockAssignment& assignment,
                             const TensorFilter& filter) {
  std::vector<Block> blocks(assignment.names.size());
  for (size_t i = 0; i < blocks.size(); ++i) blocks[i].name = assignment.names[i];
  for (size_t ti = 0; ti < model.tensors.size(); ++ti) {
    int32_t b = assignment.tensor_block[ti];
    if (b < 0) continue;
    const auto& t = model.tensors[ti];
    uint64_t size = FilteredSize(t, filter);
    blocks[b].bytes += size * t.copies;
    if (t.kind == TensorKind::kParameter && size > 0) {
      blocks[b].parameters += LogicalParams(t) * t.copies;
    }
  }
  return blocks;
}

std::vector<Block> IndivisibleBlocks(const Model& model, const TensorFilter& filter) {
  return SumBlocks(model, AssignBlocks(model, filter), filter);
}

std::optional<Block> LargestBlock(const Model& model, const TensorFilter& filter) {
  std::optional<Block> best;
  for (auto& block : IndivisibleBlocks(model, filter)) {
    if (!best || block.bytes > best->bytes) best = std::move(block);
  }
  return best;
}

}  // namespace memfit

namespace memfit {

std::string_view LayerMixerName(LayerMixer mixer) {
  switch (mixer) {
    case LayerMixer::kAttention: return "attention";
    case LayerMixer::kMamba: return "mamba";
    case LayerMixer::kMamba2: return "mamba2";
    case LayerMixer::kGatedDeltaNet: return "gated_delta_net";
    case LayerMixer::kKimiDelta: return "kimi_delta";
    case LayerMixer::kShortConv: return "short_conv";
    case LayerMixer::kLinearAttention: return "linear_attention";
    case LayerMixer::kNone: return "none";
  }
  return "?";
}

}  // namespace memfit
