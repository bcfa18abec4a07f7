// infer_auto_device_map and clean_device_map (accelerate utils/modeling.py), on memfit's module
// tree. Comments name the accelerate step each part follows; deviations are in docs/estimates.md.

#include "memfit/device_map.h"

#include <algorithm>
#include <deque>

#include "plan/device_map_json.h"
#include "plan/module_tree.h"

namespace memfit {
namespace {

__extension__ typedef __int128 Int128;

using plan::ModuleTree;
using plan::TreeNode;

bool Inside(std::string_view member, std::string_view module) {
  return member.starts_with(module) &&
         (member.size() == module.size() || member[module.size()] == '.');
}

bool Splittable(const TreeNode& node) {
  return !node.is_tensor && node.has_child_module && !node.no_split;
}

// clean_device_map: a module whose entries all share one device becomes one entry.
void Clean(std::vector<std::pair<std::string, std::string>>& map, const std::string& module) {
  std::string prefix = module.empty() ? "" : module + ".";
  std::string value;
  size_t count = 0;
  bool same = true;
  for (const auto& [k, v] : map) {
    if (!k.starts_with(prefix)) continue;
    if (count++ == 0) value = v;
    else if (v != value) same = false;
  }
  if (same && count > 1) {
    std::erase_if(map, [&](const auto& e) { return e.first.starts_with(prefix); });
    map.emplace_back(module, value);
  }
  // The direct children of `module` among the remaining keys.
  size_t depth = module.empty() ? 1 : static_cast<size_t>(std::count(module.begin(), module.end(),
                                                                     '.')) + 2;
  std::vector<std::string> children;
  for (const auto& [k, v] : map) {
    if (!k.starts_with(prefix) || k.size() <= module.size()) continue;
    size_t end = 0;
    for (size_t seg = 0; seg < depth && end != std::string::npos; ++seg) {
      end = k.find('.', seg == 0 ? 0 : end + 1);
    }
    std::string child = k.substr(0, end);
    if (std::find(children.begin(), children.end(), child) == children.end()) {
      children.push_back(child);
    }
  }
  for (const auto& child : children) {
    if (child != module) Clean(map, child);
  }
}

}  // namespace

std::string DeviceName(const DeviceUsage& device) {
  switch (device.kind) {
    case DeviceKind::kGpu: return std::to_string(device.index);
    case DeviceKind::kCpu: return "cpu";
    case DeviceKind::kDisk: return "disk";
  }
  return "?";
}

DeviceMap InferDeviceMap(const Model& model, const MemoryBudget& requested,
                         const DeviceMapOptions& options) {
  ModuleTree tree = plan::BuildModuleTree(model);
  plan::TreeSizes sizes = plan::ComputeSizes(tree, model, options);
  return plan::InferDeviceMap(tree, sizes, model, requested, options);
}

namespace plan {

DeviceMap InferDeviceMap(const ModuleTree& tree, const TreeSizes& sizes, [[maybe_unused]] const Model& model,
                         const MemoryBudget& requested, const DeviceMapOptions& options) {
  MemoryBudget budget = options.strategy == DeviceMapStrategy::kBalanced
                            ? plan::BalancedBudget(tree, sizes, requested)
                            : requested;
  DeviceMap out;
  out.total_bytes = sizes.size[0];
  // Devices: GPUs in id order, then "cpu", then "disk" (get_max_memory's order).
  for (size_t i = 0; i < budget.gpu_bytes.size(); ++i) {
    out.devices.push_back(DeviceUsage{.kind = DeviceKind::kGpu,
                                      .index = static_cast<int>(i),
                                      .max_memory = budget.gpu_bytes[i]});
  }
  if (budget.cpu_bytes) {
    out.devices.push_back(DeviceUsage{.kind = DeviceKind::kCpu, .max_memory = *budget.cpu_bytes});
  }
  if (budget.disk_bytes) {
    out.devices.push_back(DeviceUsage{.kind = DeviceKind::kDisk, .max_memory = *budget.disk_bytes});
  }
  // main_devices: the first GPU and the CPU keep room for the largest block.
  auto is_main = [&](size_t d) {
    return out.devices[d].kind == DeviceKind::kCpu ||
           (d == 0 && out.devices[d].kind == DeviceKind::kGpu);
  };

  // modules_to_treat: the root's direct parameters, child modules, direct buffers.
  std::vector<int> roots = plan::SplitChildren(tree, 0);
  std::deque<int> todo(roots.begin(), roots.end());
  plan::LargestLayer largest = plan::MaxLayerSize(tree, sizes, roots, false);
  out.largest_block_bytes = largest.size;
  for (int n : largest.nodes) out.largest_block_names.push_back(tree.nodes[n].path);
  auto recompute_largest = [&] {
    largest = plan::MaxLayerSize(tree, sizes, std::vector<int>(todo.begin(), todo.end()), true);
  };

  std::vector<std::pair<std::string, std::string>> map;
  size_t current = 0;
  while (!todo.empty()) {
    int n = todo.front();
    todo.pop_front();
    const TreeNode& node = tree.nodes[n];
    if (current >= out.devices.size()) {  // memfit: no disk (or a full one) -> not placed
      out.unplaced.push_back(node.path);
      out.unplaced_bytes += sizes.size[n];
      continue;
    }
    // The largest remaining layer may change once the current one is taken.
    std::erase_if(largest.nodes, [&](int m) { return Inside(tree.nodes[m].path, node.path); });
    if (largest.nodes.empty()) recompute_largest();

    // Tied parameters outside this module whose partner is inside it.
    std::vector<std::string> tied_params;
    for (const auto& group : tree.tied_groups) {
      bool any = false, all = true;
      for (const auto& member : group) {
        bool in = Inside(member, node.path);
        any = any || in;
        all = all && in;
      }
      if (!any || all) continue;
      for (const auto& member : group) {
        if (!Inside(member, node.path)) tied_params.push_back(member);
      }
    }
    // get_module_size_with_ties: the module plus the top-level entries holding its ties.
    Int128 size = sizes.size[n];
    Int128 size_with_ties = size;
    std::vector<int> tied_modules;
    for (const auto& param : tied_params) {
      for (int m : todo) {
        const std::string& path = tree.nodes[m].path;
        if (param.size() > path.size() && Inside(param, path)) {
          tied_modules.push_back(m);
          int p = tree.Find(param);
          size_with_ties += Int128(sizes.size[m]) - (p >= 0 ? sizes.size[p] : 0);
          break;
        }
      }
    }

    DeviceUsage& device = out.devices[current];
    bool unlimited = device.kind == DeviceKind::kDisk && device.max_memory == UINT64_MAX;
    Int128 max_size = device.max_memory;
    uint64_t reserved = 0;
    if (options.keep_largest_free && is_main(current)) {
      max_size -= largest.size;
      reserved = largest.size;
    }
    Int128 used = device.used_bytes;

    if (unlimited || used + size_with_ties <= max_size) {
      device.used_bytes += static_cast<uint64_t>(size_with_ties);
      if (options.record_modules) {
        std::string name = DeviceName(device);
        map.emplace_back(node.path, name);
        device.modules.push_back(node.path);
        for (int m : tied_modules) {
          map.emplace_back(tree.nodes[m].path, name);
          device.modules.push_back(tree.nodes[m].path);
        }
      }
      for (int m : tied_modules) std::erase(todo, m);
      if (device.kind != DeviceKind::kGpu && !node.is_tensor) {
        out.offloaded_buffer_bytes += sizes.buffer_size[n];
      }
      continue;
    }
    // The module fits without its tied modules: split one of those if possible.
    if (!tied_params.empty() && used + size <= max_size) {
      bool split = false;
      for (int m : tied_modules) {
        if (!Splittable(tree.nodes[m])) continue;
        auto children = plan::SplitChildren(tree, m);
        auto at = std::find(todo.begin(), todo.end(), m);
        at = todo.erase(at);
        todo.insert(at, children.begin(), children.end());
        todo.push_front(n);
        recompute_largest();
        split = true;
        break;
      }
      if (split) continue;
    }
    // The module does not fit: split it, or move on to the next device.
    if (used + size >= max_size && Splittable(node)) {
      auto children = plan::SplitChildren(tree, n);
      todo.insert(todo.begin(), children.begin(), children.end());
      recompute_largest();
      continue;
    }
    device.reserved_bytes = reserved;
    ++current;
    todo.push_front(n);
  }
  for (const auto& d : out.devices) {
    if (d.kind != DeviceKind::kGpu) out.offloaded_bytes += d.used_bytes;
  }
  if (options.record_modules) Clean(map, "");
  out.entries = std::move(map);
  return out;
}

}  // namespace plan

nlohmann::ordered_json DeviceMapJson(const DeviceMap& map) {
  nlohmann::ordered_json ordered = nlohmann::ordered_json::object();
  for (const auto& [module, device] : map.entries) {
    bool gpu = !device.empty() && std::all_of(device.begin(), device.end(),
                                              [](char c) { return c >= '0' && c <= '9'; });
    if (gpu) ordered[module] = std::stoi(device);
    else ordered[module] = device;
  }
  return ordered;
}

std::string DumpOrderedJson(const nlohmann::ordered_json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace memfit
