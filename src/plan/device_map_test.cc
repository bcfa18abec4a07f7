// Device maps: hand-checkable synthetic models, then real configs from shared/eval with the
// expected maps derived by hand from accelerate's infer_auto_device_map / get_balanced_memory
// (utils/modeling.py), step by step in the comments.

#include "memfit/device_map.h"

#include <gtest/gtest.h>

#include "memfit/describe.h"
#include "model/tensor_test_util.h"
#include "plan/device_map_json.h"
#include "memfit/hf_config.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::ByteTensor;

// emb 100, layers.0 200, layers.1 200, head 100: total 600, largest block 200.
Model Toy() {
  Model m;
  m.tensors = {ByteTensor("emb.weight", 100), ByteTensor("layers.0.w", 200),
               ByteTensor("layers.1.w", 200), ByteTensor("head.weight", 100)};
  m.no_split_patterns = {"layers.*"};
  return m;
}

using Entries = std::vector<std::pair<std::string, std::string>>;

TEST(DeviceMapTest, ExactlyAtTheLimitFits) {
  // max_memory 600 = total. The reserve is the largest block *other than* the one being placed
  // (accelerate drops the current module's names from max_layer_names before checking): emb
  // (cap 600 - 200), then "layers" whole (reserve = head 100: 100 + 400 <= 500), then head
  // (reserve 0: 600 <= 600). Everything on GPU 0; clean_device_map makes it {"": 0}.
  DeviceMap acc = InferDeviceMap(Toy(), MemoryBudget{.gpu_bytes = {600}});
  EXPECT_EQ(acc.total_bytes, 600u);
  EXPECT_EQ(acc.largest_block_bytes, 200u);
  EXPECT_TRUE(acc.fits_on_gpus());
  EXPECT_EQ(acc.entries, (Entries{{"", "0"}}));
  EXPECT_EQ(acc.devices[0].used_bytes, 600u);
}

TEST(DeviceMapTest, OneByteShortLeavesMoreBehindWithTheReserve) {
  // 599: emb (cap 399); "layers" (100 + 400 > 499) split; layers.0 (reserve layers.1: 300 <=
  // 399); layers.1 (reserve head: 500 > 499) -> no next device: layers.1 and head unplaced.
  DeviceMap acc = InferDeviceMap(Toy(), MemoryBudget{.gpu_bytes = {599}});
  EXPECT_EQ(acc.unplaced, (std::vector<std::string>{"layers.1", "head"}));
  EXPECT_EQ(acc.unplaced_bytes, 300u);
  // Packed without the reserve only the head (100) is left.
  DeviceMap packed = InferDeviceMap(Toy(), MemoryBudget{.gpu_bytes = {599}},
                                    DeviceMapOptions{.keep_largest_free = false});
  EXPECT_EQ(packed.unplaced, (std::vector<std::string>{"head"}));
  EXPECT_EQ(packed.devices[0].used_bytes, 500u);
}

TEST(DeviceMapTest, SplitsAcrossThreeGpus) {
  // GPU 0: emb (cap 300 - 200); "layers" (reserve head: 500 > 200) split; layers.0 (reserve
  // layers.1: 300 > 100) -> GPU 1, not a main device (cap 300): layers.0; layers.1 (400 > 300)
  // -> GPU 2: layers.1 (200), head (300 <= 300).
  DeviceMap map = InferDeviceMap(Toy(), MemoryBudget{.gpu_bytes = {300, 300, 300}});
  EXPECT_TRUE(map.fits_on_gpus());
  EXPECT_EQ(map.entries,
            (Entries{{"emb", "0"}, {"layers.0", "1"}, {"layers.1", "2"}, {"head", "2"}}));
  EXPECT_EQ(map.devices[0].reserved_bytes, 200u);
  EXPECT_EQ(map.devices[2].used_bytes, 300u);
  auto json = DeviceMapJson(map);
  EXPECT_EQ(json.dump(), R"({"emb":0,"layers.0":1,"layers.1":2,"head":2})");
  // As text in that order too ("head" last, where a json's sorted keys would put it second).
  EXPECT_EQ(DumpOrderedJson(json, -1), R"({"emb":0,"layers.0":1,"layers.1":2,"head":2})");
}

TEST(DeviceMapTest, OffloadsToCpuThenDisk) {
  // GPU 350: emb (cap 150); "layers" (reserve head: 500 > 250) split; layers.0 (reserve
  // layers.1: 300 > 150) -> cpu, a main device: layers.0 (cap 450 - 200 = 250); layers.1
  // (reserve head: 400 > 350) -> disk (unlimited): layers.1, head.
  MemoryBudget budget{.gpu_bytes = {350}, .cpu_bytes = 450, .disk_bytes = UINT64_MAX};
  DeviceMap map = InferDeviceMap(Toy(), budget);
  EXPECT_EQ(map.entries, (Entries{{"emb", "0"}, {"layers.0", "cpu"}, {"layers.1", "disk"},
                                  {"head", "disk"}}));
  EXPECT_EQ(map.offloaded_bytes, 500u);
  EXPECT_FALSE(map.fits_on_gpus());
  EXPECT_TRUE(map.unplaced.empty());
}

TEST(DeviceMapTest, ImpossibleWithoutOffload) {
  // GPU 100: cap 100 - 200 < 0; nothing fits and no CPU or disk was offered.
  DeviceMap map = InferDeviceMap(Toy(), MemoryBudget{.gpu_bytes = {100}});
  EXPECT_EQ(map.unplaced_bytes, 600u);
  EXPECT_TRUE(map.entries.empty());
}

TEST(DeviceMapTest, TiedHeadFollowsTheEmbedding) {
  // lm_head.weight is tied to model.embed.weight (counted once, under the embedding). GPU 330:
  // cap 130; "model" (510) is split; embed (100, ties add lm_head's 0) fits with lm_head;
  // layers split; layers.0 (100 + 200 > 130) -> cpu (cap 10000 - 200): the rest. clean_device_map
  // merges model.layers.* into "model.layers", appended last as Python's dict does.
  Model m;
  m.tensors = {ByteTensor("model.embed.weight", 100), ByteTensor("model.layers.0.w", 200),
               ByteTensor("model.layers.1.w", 200), ByteTensor("model.norm.weight", 10),
               ByteTensor("lm_head.weight", 100, "model.embed.weight")};
  m.no_split_patterns = {"model.layers.*"};
  DeviceMap map = InferDeviceMap(m, MemoryBudget{.gpu_bytes = {330}, .cpu_bytes = 10000});
  EXPECT_EQ(map.total_bytes, 510u);
  EXPECT_EQ(map.entries, (Entries{{"model.embed", "0"}, {"lm_head", "0"}, {"model.norm", "cpu"},
                                  {"model.layers", "cpu"}}));
}

// Real configs, built from config.json (bf16 as the configs say).
std::optional<Model> EvalModel(const std::string& folder) {
  auto dir = testing::EvalDir();
  if (!dir) return std::nullopt;
  auto text = testing::ReadFile(*dir + "/models/" + folder + "/config.json");
  if (!text) return std::nullopt;
  auto config = HfConfig::Parse(*text);
  if (!config) return std::nullopt;
  ModelInputs inputs{.name = folder, .config = *config};
  auto model = DescribeModel(inputs);
  if (!model) return std::nullopt;
  return *model;
}

std::string LayerRange(int first, int last, const std::string& device, Entries& out) {
  for (int i = first; i <= last; ++i) out.emplace_back("model.layers." + std::to_string(i), device);
  return device;
}

// The entries after an untied Llama-style model's last layer: its final norm, rotary_emb and
// lm_head, all on `device`.
void UntiedTail(const std::string& device, Entries& out) {
  for (const char* name : {"model.norm", "model.rotary_emb", "lm_head"}) {
    out.emplace_back(name, device);
  }
}

TEST(DeviceMapRealTest, Llama32_1B_OneGpuAndCpu) {
  auto model = EvalModel("meta-llama__Llama-3.2-1B");
  if (!model) GTEST_SKIP() << "shared/eval Llama-3.2-1B config not available";
  // bf16, h 2048, 16 layers, kv 8 x 64, inter 8192, vocab 128256, tied head:
  // embed 128256*2048*2 = 525,336,576; layer (4,194,304*2 + 1,048,576*2 + 3*16,777,216 + 4096)
  // * 2 = 121,643,008; norm 4096; rotary inv_freq 32 float32 = 128.
  // total = 525,336,576 + 16*121,643,008 + 4096 + 128 = 2,471,628,928.
  const uint64_t gib = uint64_t{1} << 30;
  DeviceMap map = InferDeviceMap(*model, MemoryBudget{.gpu_bytes = {gib}, .cpu_bytes = 4 * gib});
  EXPECT_EQ(map.total_bytes, 2471628928u);
  EXPECT_EQ(map.largest_block_bytes, 525336576u);
  EXPECT_EQ(map.largest_block_names, (std::vector<std::string>{"model.embed_tokens"}));
  // "model" > 1 GiB - 525,336,576: split. Taking embed_tokens leaves layers as the largest
  // (121,643,008): cap 952,098,816; embed fits with its tied lm_head; layers split; layers 0-2
  // fit (used 890,265,600), layer 3 (1,011,908,608) does not -> cpu (cap 4 GiB - 121,643,008):
  // layers 3-15, norm, rotary_emb.
  Entries expected = {{"model.embed_tokens", "0"}, {"lm_head", "0"}};
  LayerRange(0, 2, "0", expected);
  LayerRange(3, 15, "cpu", expected);
  expected.emplace_back("model.norm", "cpu");
  expected.emplace_back("model.rotary_emb", "cpu");
  EXPECT_EQ(map.entries, expected);
  EXPECT_EQ(map.devices[0].used_bytes, 890265600u);
}

TEST(DeviceMapRealTest, Llama3_8B_BalancedOverTwoGpus) {
  auto model = EvalModel("meta-llama__Meta-Llama-3-8B");
  if (!model) GTEST_SKIP() << "shared/eval Meta-Llama-3-8B config not available";
  // embed = lm_head = 128256*4096*2 = 1,050,673,152; layer = (2*16,777,216 + 2*4,194,304 +
  // 3*58,720,256 + 8192) * 2 = 436,224,000; total = 2*1,050,673,152 + 32*436,224,000 + 8192 +
  // 256 = 16,060,522,752.
  // get_balanced_memory(max_memory {0: 24 GiB, 1: 24 GiB}): per_gpu = total // 2 =
  // 8,030,261,376; first no-split block 436,224,000; mean leaf module = total / 292 leaves
  // (embed, 32 x 9 linears and norms, norm, rotary, lm_head) = 55,001,790; buffer = 1.25 *
  // 436,224,000 = 545,280,000 -> max_memory[0] = 8,575,541,376 (the last GPU keeps 24 GiB).
  // infer_auto_device_map: largest block 1,050,673,152 (embed and lm_head) -> cap on GPU 0
  // 7,524,868,224; embed fits; (7,524,868,224 - 1,050,673,152) / 436,224,000 = 14.8 -> layers
  // 0-13 on GPU 0; 14-31, norm, rotary_emb, lm_head on GPU 1.
  const uint64_t gib = uint64_t{1} << 30;
  DeviceMap map = InferDeviceMap(*model, MemoryBudget{.gpu_bytes = {24 * gib, 24 * gib}},
                                 DeviceMapOptions{.strategy = DeviceMapStrategy::kBalanced});
  EXPECT_EQ(map.total_bytes, 16060522752u);
  EXPECT_EQ(map.devices[0].max_memory, 8575541376u);
  EXPECT_EQ(map.devices[1].max_memory, 24 * gib);
  Entries expected = {{"model.embed_tokens", "0"}};
  LayerRange(0, 13, "0", expected);
  LayerRange(14, 31, "1", expected);
  UntiedTail("1", expected);
  EXPECT_EQ(map.entries, expected);
  EXPECT_TRUE(map.fits_on_gpus());
}

TEST(DeviceMapRealTest, Mistral7B_GpuCpuAndDisk) {
  auto model = EvalModel("mistralai__Mistral-7B-v0.1");
  if (!model) GTEST_SKIP() << "shared/eval Mistral-7B-v0.1 config not available";
  // embed = lm_head = 32000*4096*2 = 262,144,000; layer 436,224,000 (as Llama-3-8B); total =
  // 524,288,000 + 32*436,224,000 + 8192 + 256 = 14,483,464,448; largest block = a layer.
  // GPU 0 (8 GiB): cap 8,589,934,592 - 436,224,000 = 8,153,710,592; embed; (8,153,710,592 -
  // 262,144,000) / 436,224,000 = 18.09 -> layers 0-17. CPU (4 GiB): cap 3,858,743,296 -> 8 layers
  // (18-25). Disk: layers 26-31, norm, rotary_emb, lm_head.
  const uint64_t gib = uint64_t{1} << 30;
  DeviceMap map = InferDeviceMap(
      *model, MemoryBudget{.gpu_bytes = {8 * gib}, .cpu_bytes = 4 * gib, .disk_bytes = UINT64_MAX});
  EXPECT_EQ(map.total_bytes, 14483464448u);
  EXPECT_EQ(map.largest_block_bytes, 436224000u);
  Entries expected = {{"model.embed_tokens", "0"}};
  LayerRange(0, 17, "0", expected);
  LayerRange(18, 25, "cpu", expected);
  LayerRange(26, 31, "disk", expected);
  UntiedTail("disk", expected);
  EXPECT_EQ(map.entries, expected);
  EXPECT_EQ(map.devices[1].used_bytes, 8 * 436224000u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
