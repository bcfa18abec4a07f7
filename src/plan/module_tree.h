#pragma once
// The model as accelerate sees it for device maps: a tree of modules and tensors with
// compute_module_sizes() sizes (ties once, at the loaded dtype), children in PyTorch registration
// order, and the tied-parameter groups (find_tied_parameters).

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "memfit/device_map.h"
#include "memfit/model.h"

namespace memfit::plan {

struct TreeNode {
  std::string path;              // "" for the root
  bool is_tensor = false;
  bool is_buffer = false;        // a tensor that is a buffer
  bool counted = false;          // holds a tensor accelerate counts (tied duplicates do not)
  bool no_split = false;         // matches a no-split pattern
  int pattern = -1;              // index of the first no-split pattern it matches
  bool in_block = false;         // inside (or is) a no-split block
  bool leaf_module = false;      // a counted module with no counted child module
  int parent = -1;
  std::vector<int> children;     // registration order
  bool has_child_module = false;
};

// The structure, built once per model; sizes live in TreeSizes (one per dtype or what-if).
struct ModuleTree {
  std::vector<TreeNode> nodes;   // nodes[0] is the root
  std::vector<int> tensor_node;  // model.tensors[i] -> its node
  // Tied groups of tensor paths, each with at least two members (the counted one first).
  std::vector<std::vector<std::string>> tied_groups;
  std::unordered_map<std::string, int> index;  // path -> node
  // get_balanced_memory inputs that depend only on the structure.
  std::vector<int> first_block_of_pattern;  // first module (node order) per no-split pattern
  uint64_t leaf_module_count = 0;
  // No-split blocks in each node's subtree (itself included), and how many blocks are leaf
  // modules: bytes that travel with every block (a layer's KV cache) are added with these.
  std::vector<uint64_t> blocks_in_subtree;
  uint64_t leaf_block_count = 0;
  int Find(const std::string& path) const;  // -1 when absent
};

ModuleTree BuildModuleTree(const Model& model);

struct TreeSizes {
  std::vector<uint64_t> size;         // module_sizes[path] per node
  std::vector<uint64_t> buffer_size;  // buffers in the subtree
  uint64_t leaf_module_bytes = 0;     // sum over leaf modules (get_balanced_memory's mean)
};
// compute_module_sizes with options.size_of and options.extra_block_bytes.
TreeSizes ComputeSizes(const ModuleTree& tree, const Model& model, const DeviceMapOptions& options);
// `sizes` plus `per_block` bytes with every no-split block (and so its ancestors): the same as
// ComputeSizes with extra_block_bytes returning `per_block` for every block, without the tensors.
TreeSizes AddBlockBytes(const ModuleTree& tree, const TreeSizes& sizes, uint64_t per_block);

// infer_auto_device_map on a prebuilt tree (the planner reuses one tree for many what-ifs).
DeviceMap InferDeviceMap(const ModuleTree& tree, const TreeSizes& sizes, const Model& model,
                         const MemoryBudget& budget, const DeviceMapOptions& options);

// The named children accelerate treats when it splits `node`: direct parameters, then child
// modules, then (memfit only, see docs) direct buffers. For the root: parameters, children,
// buffers, as _init_infer_auto_device_map builds modules_to_treat.
std::vector<int> SplitChildren(const ModuleTree& tree, int node);

// get_max_layer_size over a list of nodes: the largest indivisible block and every name of that
// size. `modules_only` drops bare tensors from the list first (accelerate's recomputations keep
// only nn.Module entries).
struct LargestLayer {
  uint64_t size = 0;
  std::vector<int> nodes;
};
LargestLayer MaxLayerSize(const ModuleTree& tree, const TreeSizes& sizes,
                          const std::vector<int>& list, bool modules_only);

// accelerate get_balanced_memory(low_zero=False) with the user's max_memory: caps every GPU but
// the last at total / n + 1.25 x max(first no-split block of each pattern, mean leaf module).
MemoryBudget BalancedBudget(const ModuleTree& tree, const TreeSizes& sizes, MemoryBudget budget);

}  // namespace memfit::plan
