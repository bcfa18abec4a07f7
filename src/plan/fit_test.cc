// The fit planner on hand-checkable models: verdicts, GPU counts, limits, speed bounds, advice.

#include "memfit/fit.h"

#include <gtest/gtest.h>

#include "base/error_test_util.h"
#include "memfit/architecture.h"
#include "memfit/catalog.h"
#include "memfit/hf_config.h"
#include "model/tensor_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::ByteTensor;

// emb 100, layers.0 200, layers.1 200, head 100 (as in device_map_test.cc).
Model Toy() {
  Model m;
  m.name = "toy";
  m.tensors = {ByteTensor("emb.weight", 100), ByteTensor("layers.0.w", 200),
               ByteTensor("layers.1.w", 200), ByteTensor("head.weight", 100)};
  m.no_split_patterns = {"layers.*"};
  return m;
}

FitRequest Gpus(std::vector<uint64_t> sizes) {
  FitRequest r;
  for (uint64_t s : sizes) r.gpus.push_back(DeviceSpec{.label = "gpu", .memory_bytes = s});
  r.advise = false;
  return r;
}

// One H100 SXM from the catalog, no advice (the speed-bound tests).
FitRequest OneH100() {
  FitRequest r;
  r.advise = false;
  EXPECT_TRUE(ParseDeviceArg("H100 SXM", r.gpus));
  return r;
}

TEST(FitTest, ExactlyAtTheLimitFits) {
  // 600 bytes on a 600-byte GPU fit exactly (DeviceMapTest.ExactlyAtTheLimitFits).
  auto plan = PlanFit(Toy(), Gpus({600}));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->verdict, Verdict::kFits);
  EXPECT_EQ(plan->total_bytes, 600u);
  EXPECT_EQ(plan->gpus_needed, 1u);
  EXPECT_TRUE(plan->notes.empty());
  // --reserve 1 leaves 599: no longer fits on one (neither map), two are needed.
  FitRequest r = Gpus({600});
  r.reserve_bytes_per_gpu = 1;
  plan = PlanFit(Toy(), r);
  EXPECT_EQ(plan->verdict, Verdict::kDoesNotFit);
  EXPECT_EQ(plan->gpus_needed, 2u);
}

TEST(FitTest, PackedMapWhenAcceleratesReserveWouldFail) {
  // Two 300-byte GPUs: accelerate keeps 200 free on GPU 0 (only emb there), puts layers.0 on
  // GPU 1 and has no room for layers.1 and head. Packed: emb + layers.0, layers.1 + head.
  FitRequest r = Gpus({300, 300});
  r.strategy = DeviceMapStrategy::kSequential;
  auto plan = PlanFit(Toy(), r);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->verdict, Verdict::kFits);
  ASSERT_EQ(plan->notes.size(), 1u);
  EXPECT_NE(plan->notes[0].find("largest block"), std::string::npos);
  using Entries = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(plan->map.entries,
            (Entries{{"emb", "0"}, {"layers.0", "0"}, {"layers.1", "1"}, {"head", "1"}}));
}

TEST(FitTest, MultiGpuSplitAndCount) {
  // Three 300-byte GPUs take it with accelerate's map (see DeviceMapTest.SplitsAcrossThreeGpus);
  // packed, two suffice: emb + layers.0 = 300, layers.1 + head = 300.
  FitRequest r = Gpus({300, 300, 300});
  r.strategy = DeviceMapStrategy::kSequential;
  auto plan = PlanFit(Toy(), r);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->verdict, Verdict::kFits);
  EXPECT_EQ(plan->gpus_needed, 2u);
}

TEST(FitTest, OffloadToDisk) {
  FitRequest r = Gpus({350});
  r.ram_bytes = 450;
  r.disk_bytes = UINT64_MAX;
  r.strategy = DeviceMapStrategy::kSequential;
  auto plan = PlanFit(Toy(), r);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->verdict, Verdict::kFitsWithOffload);
  EXPECT_EQ(plan->map.offloaded_bytes, 500u);  // layers.0 on cpu, layers.1 + head on disk
}

TEST(FitTest, ImpossibleCaseHasAClearVerdict) {
  // A 100-byte GPU cannot hold the 200-byte block: no count of them helps, nothing offloads.
  auto plan = PlanFit(Toy(), Gpus({100}));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->verdict, Verdict::kDoesNotFit);
  EXPECT_EQ(plan->map.unplaced_bytes, 600u);
  EXPECT_FALSE(plan->gpus_needed.has_value());
  EXPECT_EQ(VerdictName(plan->verdict), "does not fit");
}

TEST(FitTest, NoGpuIsAnError) {
  auto plan = PlanFit(Toy(), FitRequest{});
  testing::ExpectErrorContains(plan, "--gpu");
}

TEST(FitTest, LimitsFromTheRuntimeCallback) {
  // KV cache of context x batch bytes per layer (2 layers): weights 600 + 2 x c x b <= 1000.
  // Longest context at batch 1: 200. Largest batch at context 50: 4.
  RuntimeModel runtime{.task = "inference", .context_tokens = 50, .batch = 1,
                       .max_context_tokens = 1000};
  runtime.bytes_for = [](uint64_t context, uint64_t batch) -> Result<RuntimeBytes> {
    return RuntimeBytes{.per_layer_bytes = context * batch};
  };
  auto plan = PlanFit(Toy(), Gpus({1000}), runtime);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->total_bytes, 700u);  // 600 + 2 x 50
  EXPECT_EQ(plan->limits.max_context_tokens, 200u);
  EXPECT_EQ(plan->limits.max_batch, 4u);
}

TEST(FitTest, SpeedBoundsFromBandwidthAndTflops) {
  // 1e9 bytes of 1-byte weights on an H100 SXM (3,350 GB/s, 989.5 dense TFLOPS):
  // decode <= 3350e9 / 1e9 = 3,350 tok/s; prefill <= 989.5e12 / (2 x 1e9) = 494,750 tok/s.
  Model m;
  m.tensors = {ByteTensor("emb.weight", 100'000'000), ByteTensor("layers.0.w", 400'000'000),
               ByteTensor("layers.1.w", 400'000'000), ByteTensor("head.weight", 100'000'000)};
  m.no_split_patterns = {"layers.*"};
  FitRequest r = OneH100();
  auto plan = PlanFit(m, r);
  ASSERT_TRUE(plan);
  EXPECT_NEAR(plan->speed.decode_tokens_per_s, 3350.0, 1e-6);
  EXPECT_NEAR(plan->speed.prefill_tokens_per_s, 494750.0, 1e-3);
  // Offloaded: a 0.5 GB GPU-sized device given by size has no bandwidth -> unknown; with the
  // H100 plus CPU offload the offloaded bytes cross PCIe at 32 GB/s.
  FitRequest small;
  small.advise = false;
  ASSERT_TRUE(ParseDeviceArg("H100 SXM", small.gpus));
  small.reserve_bytes_per_gpu = MemoryBytes(*small.gpus[0].gpu) - 600'000'000;  // 600 MB usable
  small.ram_bytes = 10'000'000'000;
  small.strategy = DeviceMapStrategy::kSequential;
  plan = PlanFit(m, small);
  ASSERT_TRUE(plan);
  // GPU 0 cap 600e6 - 400e6 = 200e6: emb (1e8) fits, layers.0 does not -> cpu: 9e8 offloaded.
  // t = 1e8 / 3350e9 + 9e8 / 32e9.
  EXPECT_EQ(plan->map.offloaded_bytes, 900'000'000u);
  EXPECT_NEAR(plan->speed.decode_tokens_per_s, 1.0 / (1e8 / 3350e9 + 9e8 / 32e9), 1e-6);
}

TEST(FitTest, PrefillAttentionFlopsByHand) {
  // Two layers of 4 heads, d_k = d_v = 8: 2 x 4 x 16 = 128 FLOPs per attended token per layer.
  Hyperparameters hp;
  hp.layers.assign(2, LayerInfo{.num_heads = 4, .num_kv_heads = 4, .head_dim_k = 8,
                                .head_dim_v = 8});
  // A causal prompt of 100 tokens attends to (1 + ... + 100) / 100 = 50.5 tokens on average.
  EXPECT_DOUBLE_EQ(PrefillAttentionFlopsPerToken(hp, 100), 2 * 128 * 50.5);
  EXPECT_DOUBLE_EQ(PrefillAttentionFlopsPerToken(hp, 1), 2 * 128 * 1.0);
  EXPECT_EQ(PrefillAttentionFlopsPerToken(hp, 0), 0.0);
  // A window of 10 on the second layer: (1 + ... + 10 + 90 x 10) / 100 = 9.55 tokens.
  hp.layers[1].attention = AttentionKind::kSliding;
  hp.layers[1].window_tokens = 10;
  EXPECT_DOUBLE_EQ(PrefillAttentionFlopsPerToken(hp, 100), 128 * 50.5 + 128 * 9.55);
  // A window wider than the prompt changes nothing; layers without attention add nothing.
  EXPECT_DOUBLE_EQ(PrefillAttentionFlopsPerToken(hp, 8), 2 * 128 * 4.5);
  hp.layers[1].attention = AttentionKind::kNone;
  EXPECT_DOUBLE_EQ(PrefillAttentionFlopsPerToken(hp, 100), 128 * 50.5);
}

TEST(FitTest, PrefillBoundCountsAttentionAtTheChosenContext) {
  // The 1e9-parameter model above with two layers of 8 heads x 128 (d_k = d_v): at a context of
  // 4,096 tokens, attention adds 2 layers x 2 x 8 x 256 x 4,097 / 2 = 16,781,312 FLOPs per token
  // to 2 x 1e9, on an H100 SXM (989.5 TFLOPS).
  Model m;
  m.tensors = {ByteTensor("emb.weight", 100'000'000), ByteTensor("layers.0.w", 400'000'000),
               ByteTensor("layers.1.w", 400'000'000), ByteTensor("head.weight", 100'000'000)};
  m.no_split_patterns = {"layers.*"};
  m.hp.layers.assign(2, LayerInfo{.num_heads = 8, .num_kv_heads = 8, .head_dim_k = 128,
                                  .head_dim_v = 128});
  FitRequest r = OneH100();
  RuntimeModel runtime{.task = "inference", .context_tokens = 4096, .batch = 1,
                       .max_context_tokens = 4096};
  runtime.bytes_for = [](uint64_t, uint64_t) -> Result<RuntimeBytes> { return RuntimeBytes{}; };
  auto plan = PlanFit(m, r, runtime);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_NEAR(plan->speed.prefill_tokens_per_s, 989.5e12 / (2e9 + 16'781'312.0), 1e-3);
  // Weights only (no context): the parameters alone, as before.
  auto load = PlanFit(m, r);
  ASSERT_TRUE(load);
  EXPECT_NEAR(load->speed.prefill_tokens_per_s, 494750.0, 1e-3);
}

TEST(FitTest, MoeReadsOnlyActiveExperts) {
  // 8 experts of 100 bytes, 2 per token, plus 200 bytes of attention: 200 + 2/8 x 800 = 400
  // bytes read per token.
  Model m;
  m.hp.num_experts = 8;
  m.hp.experts_per_token = 2;
  m.tensors.push_back(ByteTensor("layers.0.attn.w", 200));
  for (int e = 0; e < 8; ++e) {
    m.tensors.push_back(ByteTensor("layers.0.mlp.experts." + std::to_string(e) + ".w", 100));
  }
  m.no_split_patterns = {"layers.*"};
  FitRequest r = OneH100();
  auto plan = PlanFit(m, r);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->speed.bytes_per_token, 400u);
  EXPECT_EQ(plan->speed.active_parameters, 400u);
}

TEST(FitTest, AdviceForLlama8BOnAn8GiBGpu) {
  const CatalogEntry* entry = FindCatalogEntry("meta-llama/Llama-3.1-8B");
  ASSERT_NE(entry, nullptr);
  auto config = HfConfig::Parse(entry->config_json);
  ASSERT_TRUE(config);
  auto model = BuildFromConfig(*config);
  ASSERT_TRUE(model);
  FitRequest r;
  ASSERT_TRUE(ParseDeviceArg("8GiB", r.gpus));
  auto plan = PlanFit(*model, r);
  ASSERT_TRUE(plan);
  // bf16: 16,060,522,752 bytes (see DeviceMapRealTest.Llama3_8B_BalancedOverTwoGpus).
  EXPECT_EQ(plan->weight_bytes, 16060522752u);
  EXPECT_EQ(plan->verdict, Verdict::kDoesNotFit);
  EXPECT_EQ(plan->gpus_needed, 2u);
  // NF4 with double quant: block linears (32 x 218,103,808 weights) at 4 + 8/64 + 32/16384 bits
  // = 3,600,416,768 bytes (per-tensor rounding up); embed, lm_head, norms, rotary stay:
  // 2 x 1,050,673,152 + 32 x 16,384 + 8,192 + 256 = 2,101,879,040 -> 5,702,295,808.
  const Advice* nf4 = nullptr;
  for (const auto& a : plan->advice) {
    if (a.action.find("NF4") != std::string::npos) nf4 = &a;
  }
  ASSERT_NE(nf4, nullptr);
  EXPECT_EQ(nf4->total_bytes, 5702295808u);
  EXPECT_EQ(nf4->verdict, Verdict::kFits);
  EXPECT_EQ(nf4->saved_bytes, int64_t{16060522752} - 5702295808);
  // GGUF Q6_K: 6.5625 bits over every 2-D weight, norms F32. llama.cpp reports the real
  // Llama-3.1-8B Q6_K file as "6.14 GiB (6.56 BPW)" (llama.cpp #8730, reference note §5.7).
  for (const auto& a : plan->advice) {
    if (a.action.find("Q6_K") != std::string::npos) {
      EXPECT_NEAR(static_cast<double>(a.total_bytes) / (1ull << 30), 6.14, 0.01);
    }
  }
  // Ranked: fitting advice first; the CSR pruning row shows it costs memory at 50%.
  EXPECT_NE(plan->advice.front().verdict, Verdict::kDoesNotFit);
  for (const auto& a : plan->advice) {
    if (a.action.find("CSR") != std::string::npos) {
      EXPECT_LT(a.saved_bytes, 0);
    }
  }
}

TEST(FitTest, InferenceAndTrainTasksUseTheEstimators) {
  for (const char* task : {"inference", "train"}) {
    auto runtime = RuntimeForTask(Toy(), TaskSettings{.task = task, .context_tokens = 512});
    if (runtime) {
      ASSERT_TRUE(runtime->bytes_for);
      auto bytes = runtime->bytes_for(512, 1);
      ASSERT_TRUE(bytes) << bytes.error().message;
      EXPECT_GT(bytes->per_gpu_bytes, 0u) << task;  // at least the CUDA context
      EXPECT_FALSE(runtime->alternatives.empty());
    } else {
      EXPECT_EQ(runtime.error().message.find("not connected"), std::string::npos);
    }
  }
  EXPECT_TRUE(RuntimeForTask(Toy(), TaskSettings{.task = "load"}));
  EXPECT_FALSE(RuntimeForTask(Toy(), TaskSettings{.task = "dance"}));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
