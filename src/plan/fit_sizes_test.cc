// The planner's shortcuts give the numbers of the long way: bottom-up tree sizes, per-block bytes
// added by counts, sizes cached per model and what-if, device maps without module lists.

#include <gtest/gtest.h>

#include "memfit/architecture.h"
#include "memfit/catalog.h"
#include "memfit/hf_config.h"
#include "plan/fit_internal.h"

namespace memfit::plan {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

Model CatalogModel(std::string_view id) {
  const CatalogEntry* entry = FindCatalogEntry(id);
  EXPECT_NE(entry, nullptr) << id;
  auto config = HfConfig::Parse(entry->config_json, std::string(id));
  EXPECT_TRUE(config);
  auto model = BuildFromConfig(*config);
  EXPECT_TRUE(model) << (model ? "" : model.error().message);
  model->name = std::string(id);
  return std::move(*model);
}

// compute_module_sizes the way it is specified: every tensor added to its node and each ancestor.
std::vector<uint64_t> SizesByAncestorWalk(const ModuleTree& tree, const Model& model,
                                          uint64_t per_block) {
  std::vector<uint64_t> size(tree.nodes.size(), 0);
  auto add = [&](int from, uint64_t bytes) {
    for (int n = from; n >= 0; n = tree.nodes[static_cast<size_t>(n)].parent) {
      size[static_cast<size_t>(n)] += bytes;
    }
  };
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    if (model.tensors[i].tied_to.empty()) add(tree.tensor_node[i], model.tensors[i].bytes);
  }
  for (size_t n = 0; n < tree.nodes.size(); ++n) {
    if (tree.nodes[n].no_split) add(static_cast<int>(n), per_block);
  }
  return size;
}

TEST(FitSizesTest, BottomUpSizesEqualTheAncestorWalk) {
  for (const char* id : {"bert-base-cased", "meta-llama/Llama-3.2-1B", "mistralai/Mixtral-8x7B-v0.1"}) {
    const Model model = CatalogModel(id);
    const ModuleTree tree = BuildModuleTree(model);
    const TreeSizes sizes = ComputeSizes(tree, model, {});
    EXPECT_EQ(sizes.size, SizesByAncestorWalk(tree, model, 0)) << id;
    // A layer's KV cache added by block counts equals adding it to every block and its ancestors.
    DeviceMapOptions with_kv;
    with_kv.extra_block_bytes = [](std::string_view) { return uint64_t{12345}; };
    const TreeSizes walked = ComputeSizes(tree, model, with_kv);
    const TreeSizes counted = AddBlockBytes(tree, sizes, 12345);
    EXPECT_EQ(walked.size, SizesByAncestorWalk(tree, model, 12345)) << id;
    EXPECT_EQ(counted.size, walked.size) << id;
    EXPECT_EQ(counted.leaf_module_bytes, walked.leaf_module_bytes) << id;
    EXPECT_EQ(counted.buffer_size, walked.buffer_size) << id;
  }
}

TEST(FitSizesTest, SizesSaturateInsteadOfWrapping) {
  Model m;
  for (const char* name : {"layers.0.a", "layers.0.b"}) {
    Tensor t;
    t.name = name;
    t.dtype = Dtype::kU8;
    t.shape = {UINT64_MAX - 1};
    t.numel = t.bytes = UINT64_MAX - 1;
    m.tensors.push_back(t);
  }
  m.no_split_patterns = {"layers.*"};
  const ModuleTree tree = BuildModuleTree(m);
  const TreeSizes sizes = ComputeSizes(tree, m, {});
  EXPECT_EQ(sizes.size[0], UINT64_MAX);
  EXPECT_EQ(AddBlockBytes(tree, sizes, UINT64_MAX).size[0], UINT64_MAX);
}

TEST(FitSizesTest, CacheReturnsOneEntryPerRuleAndFactor) {
  const Model model = CatalogModel("meta-llama/Llama-3.2-1B");
  const FitModel fit(model);
  auto a = fit.sizes().Get(model, fit.tree(), DtypeRule(LoadDtype::kBFloat16), 1.0);
  auto b = fit.sizes().Get(model, fit.tree(), DtypeRule(LoadDtype::kBFloat16), 1.0);
  auto c = fit.sizes().Get(model, fit.tree(), DtypeRule(LoadDtype::kBFloat16), 8.0);
  auto d = fit.sizes().Get(model, fit.tree(), DtypeRule(LoadDtype::kFloat32), 1.0);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_NE(a.get(), d.get());
  // Llama-3.2-1B: 1,235,814,400 parameters (the tied head counted once) and the rotary
  // inv_freq buffer, 32 fp32 values = 128 bytes, which no dtype casts.
  constexpr uint64_t kParams = 1'235'814'400;
  EXPECT_EQ(a->weight_bytes, 2 * kParams + 128);
  EXPECT_EQ(d->weight_bytes, 4 * kParams + 128);
  EXPECT_EQ(a->sizes.size[0], a->weight_bytes);
  // x8: gradients and optimizer states travel with each parameter (not buffers); the weights
  // themselves stay unscaled.
  EXPECT_EQ(c->weight_bytes, a->weight_bytes);
  EXPECT_EQ(c->sizes.size[0], 8 * 2 * kParams + 128);
}

TEST(FitSizesTest, MapWithoutModuleListsHasTheSameNumbers) {
  const Model model = CatalogModel("meta-llama/Llama-3.2-1B");
  const ModuleTree tree = BuildModuleTree(model);
  const TreeSizes sizes = ComputeSizes(tree, model, {});
  MemoryBudget budget{.gpu_bytes = {uint64_t{1} << 30}, .cpu_bytes = uint64_t{4} << 30,
                      .disk_bytes = std::nullopt};
  DeviceMapOptions full;
  DeviceMapOptions numbers;
  numbers.record_modules = false;
  const DeviceMap a = InferDeviceMap(tree, sizes, model, budget, full);
  const DeviceMap b = InferDeviceMap(tree, sizes, model, budget, numbers);
  EXPECT_FALSE(a.entries.empty());
  EXPECT_TRUE(b.entries.empty());
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t i = 0; i < a.devices.size(); ++i) {
    EXPECT_EQ(a.devices[i].used_bytes, b.devices[i].used_bytes);
    EXPECT_EQ(a.devices[i].reserved_bytes, b.devices[i].reserved_bytes);
    EXPECT_TRUE(b.devices[i].modules.empty());
  }
  EXPECT_EQ(a.offloaded_bytes, b.offloaded_bytes);
  EXPECT_EQ(a.unplaced, b.unplaced);
  EXPECT_GT(a.offloaded_bytes, 0u);
}

// One prepared model planned on many GPUs (what the grid and the server do) gives exactly the
// plans of a fresh model per plan.
TEST(FitSizesTest, PlansFromOnePreparedModelEqualFreshPlans) {
  const Model model = CatalogModel("meta-llama/Llama-3.1-8B");
  const FitModel prepared(model);
  for (uint64_t gib : {8, 16, 24, 80}) {
    FitRequest request;
    request.gpus.push_back(DeviceSpec{.label = "gpu", .memory_bytes = gib << 30});
    request.ram_bytes = uint64_t{64} << 30;
    auto shared = PlanFit(prepared, request);
    auto fresh = PlanFit(model, request);
    ASSERT_TRUE(shared && fresh);
    EXPECT_EQ(shared->verdict, fresh->verdict) << gib;
    EXPECT_EQ(shared->total_bytes, fresh->total_bytes) << gib;
    EXPECT_EQ(shared->gpus_needed, fresh->gpus_needed) << gib;
    EXPECT_EQ(shared->map.entries, fresh->map.entries) << gib;
    ASSERT_EQ(shared->advice.size(), fresh->advice.size()) << gib;
    for (size_t i = 0; i < shared->advice.size(); ++i) {
      EXPECT_EQ(shared->advice[i].action, fresh->advice[i].action);
      EXPECT_EQ(shared->advice[i].total_bytes, fresh->advice[i].total_bytes);
      EXPECT_EQ(shared->advice[i].verdict, fresh->advice[i].verdict);
    }
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::plan
