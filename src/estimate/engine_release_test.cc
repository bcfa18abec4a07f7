// The engine-release table (memfit/engine_release.h): each release's values as read from its
// source (docs/estimates.md, "Engine releases"), SGLang's mem_fraction_static worked by hand.

#include "memfit/engine_release.h"

#include <gtest/gtest.h>

#include "base/error_test_util.h"
#include "memfit/units.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

constexpr uint64_t kGiBytes = uint64_t{1} << 30;

const EngineRelease& Release(Engine engine, std::string_view version) {
  auto r = FindEngineRelease(engine, version);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return **r;
}

TEST(EngineRelease, DefaultIsTheNewestOfEachEngine) {
  EXPECT_EQ(Release(Engine::kVllm, "").version, "0.31");
  EXPECT_EQ(Release(Engine::kSglang, "").version, "0.5.14");
  EXPECT_EQ(EngineReleaseVersions(Engine::kSglang), (std::vector<std::string>{"0.5", "0.5.14"}));
  EXPECT_EQ(Release(Engine::kLlamaCpp, "").version, "all");
  EXPECT_EQ(EngineReleaseVersions(Engine::kVllm), (std::vector<std::string>{"0.10", "0.11", "0.31"}));
}

TEST(EngineRelease, VersionTextNamesItsMinorRelease) {
  EXPECT_EQ(Release(Engine::kVllm, "0.11").version, "0.11");
  EXPECT_EQ(Release(Engine::kVllm, "0.11.2").version, "0.11");
  EXPECT_EQ(Release(Engine::kVllm, "v0.11.0").version, "0.11");
  EXPECT_EQ(Release(Engine::kVllm, "0.10.1.post1").version, "0.10");
  // A row with a patch stands for that patch on, within its minor release.
  EXPECT_EQ(Release(Engine::kSglang, "0.5.4").version, "0.5");
  EXPECT_EQ(Release(Engine::kSglang, "0.5.13").version, "0.5");
  EXPECT_EQ(Release(Engine::kSglang, "0.5").version, "0.5");
  EXPECT_EQ(Release(Engine::kSglang, "v0.5.14").version, "0.5.14");
  EXPECT_EQ(Release(Engine::kSglang, "0.5.15.post1").version, "0.5.14");
  EXPECT_EQ(Release(Engine::kSglang, "0.5.21").version, "0.5.14");
  EXPECT_FALSE(FindEngineRelease(Engine::kSglang, "0.6.0"));
  EXPECT_EQ(Release(Engine::kLlamaCpp, "b6123").version, "all");
}

TEST(EngineRelease, UnknownVersionsAreRefusedWithTheKnownOnes) {
  auto unknown = FindEngineRelease(Engine::kVllm, "0.12");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "--engine-version 0.12: memfit models vLLM 0.10, 0.11 and 0.31");
  // A typo (no version: a comma for the dot) gets "did you mean"; a release memfit does not
  // model (0.111) only the list.
  auto typo = FindEngineRelease(Engine::kVllm, "0,11");
  ASSERT_FALSE(typo);
  EXPECT_EQ(typo.error().message,
            "--engine-version 0,11: memfit models vLLM 0.10, 0.11 and 0.31 (did you mean 0.11?)");
  auto later = FindEngineRelease(Engine::kVllm, "0.111");
  ASSERT_FALSE(later);
  EXPECT_EQ(later.error().message, "--engine-version 0.111: memfit models vLLM 0.10, 0.11 and 0.31");
  EXPECT_FALSE(FindEngineRelease(Engine::kSglang, "latest"));
  EXPECT_FALSE(FindEngineRelease(Engine::kLlamaCpp, "0.5"));
  // transformers: no engine release ("" is fine: nothing applies), its own is
  // --transformers-version.
  auto none = FindEngineRelease(Engine::kTransformers, "");
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, nullptr);
  auto transformers = FindEngineRelease(Engine::kTransformers, "4.45");
  testing::ExpectErrorContains(transformers, "--transformers-version");
}

// vllm/config/cache.py: `gpu_memory_utilization: float = 0.9` at v0.10.2,
// `Field(default=0.9, gt=0, le=1)` at v0.11.1, `Field(default=0.92, gt=0, le=1)` in 2026.
TEST(EngineRelease, VllmUtilizationPerRelease) {
  EXPECT_EQ(Release(Engine::kVllm, "0.10").gpu_memory_utilization, 0.9);
  EXPECT_EQ(Release(Engine::kVllm, "0.11").gpu_memory_utilization, 0.9);
  EXPECT_EQ(Release(Engine::kVllm, "0.31").gpu_memory_utilization, 0.92);
  // CUDA-graph memory profiled inside the budget: "default since v0.21.0" (gpu_worker.py's log).
  EXPECT_FALSE(Release(Engine::kVllm, "0.11").cuda_graphs_in_budget);
  EXPECT_TRUE(Release(Engine::kVllm, "0.31").cuda_graphs_in_budget);
}

// The profile run's dummy sampler: the PyTorch sort in 0.10 and 0.11 (PR #26859 turned
// FlashInfer's sampler off by default before v0.11.1), FlashInfer's again from PR #40376
// (2026-04-20); SGLang has no vLLM profile run.
TEST(EngineRelease, VllmProfileSamplerPerRelease) {
  EXPECT_EQ(Release(Engine::kVllm, "0.10").sampler, VllmSampler::kTorchSort);
  EXPECT_EQ(Release(Engine::kVllm, "0.11").sampler, VllmSampler::kTorchSort);
  EXPECT_EQ(Release(Engine::kVllm, "0.31").sampler, VllmSampler::kFlashInfer);
  EXPECT_EQ(Release(Engine::kSglang, "0.5").sampler, VllmSampler::kNone);
}

// vllm/engine/arg_utils.py: `device_memory >= 70 * GiB_bytes and "a100" not in device_name` ->
// OPENAI_API_SERVER 8192 tokens / 1024 sequences, else 2048 / 256; PR #51726 made the large
// GPUs' tokens 16384.
TEST(EngineRelease, VllmBatchDefaultsByGpu) {
  const EngineRelease& v11 = Release(Engine::kVllm, "0.11");
  VllmSchedulerDefaults h100 = VllmDefaultsFor(v11, 80 * kGiBytes, "H100 SXM");
  EXPECT_EQ(h100.max_num_seqs, 1024u);
  EXPECT_EQ(h100.max_batched_tokens, 8192u);
  VllmSchedulerDefaults a100 = VllmDefaultsFor(v11, 80 * kGiBytes, "A100 80GB");
  EXPECT_EQ(a100.max_num_seqs, 256u);
  EXPECT_EQ(a100.max_batched_tokens, 2048u);
  VllmSchedulerDefaults rtx = VllmDefaultsFor(v11, 24 * kGiBytes, "RTX 4090");
  EXPECT_EQ(rtx.max_batched_tokens, 2048u);
  // 69 GiB: under the 70 GiB line.
  EXPECT_EQ(VllmDefaultsFor(v11, 69 * kGiBytes, "").max_num_seqs, 256u);
  // No GPU known: vLLM's device query fails and it takes the small pair.
  EXPECT_EQ(VllmDefaultsFor(v11, 0, "").max_batched_tokens, 2048u);
  const EngineRelease& v31 = Release(Engine::kVllm, "0.31");
  EXPECT_EQ(VllmDefaultsFor(v31, 80 * kGiBytes, "H100 SXM").max_batched_tokens, 16384u);
  EXPECT_EQ(VllmDefaultsFor(v31, 80 * kGiBytes, "H100 SXM").max_num_seqs, 1024u);
  EXPECT_EQ(VllmDefaultsFor(v31, 80 * kGiBytes, "a100 80gb").max_batched_tokens, 2048u);
}

// SGLang's _handle_gpu_memory_settings, in MiB:
// 80 GiB = 81920 MiB, tp 1: chunked_prefill_size 8192, cuda_graph_max_bs 256; reserved = 512 +
// 8192 x 1.5 + 256 x 2 + 1 x 1 / 8 x 1024 = 512 + 12288 + 512 + 128 = 13440 (above the 10240
// floor); (81920 - 13440) / 81920 = 0.8359375 -> 0.836.
TEST(EngineRelease, SglangFractionOn80GiB) {
  SglangMemorySettings s = SglangMemoryDefaults(80 * kGiBytes, 1, 1, 1, false);
  EXPECT_EQ(s.chunked_prefill_size, 8192u);
  EXPECT_EQ(s.cuda_graph_max_bs, 256u);
  EXPECT_DOUBLE_EQ(s.reserved_mib, 13440);
  EXPECT_DOUBLE_EQ(s.mem_fraction_static, 0.836);
  // tp 8: cuda_graph_max_bs 512; reserved = 512 + 12288 + 1024 + 8 / 8 x 1024 = 14848;
  // (81920 - 14848) / 81920 = 0.81875 -> 0.819.
  EXPECT_DOUBLE_EQ(SglangMemoryDefaults(80 * kGiBytes, 8, 1, 1, false).mem_fraction_static, 0.819);
  // tp 8 with DP attention over dp 8: + 512 x 8 x 3 = 12288 and, max bs 512 > 300,
  // + 512 x 8 x 1.5 = 6144: 33280; (81920 - 33280) / 81920 = 0.59375 -> 0.594.
  EXPECT_DOUBLE_EQ(SglangMemoryDefaults(80 * kGiBytes, 8, 1, 8, true).mem_fraction_static, 0.594);
}

// 24 GiB = 24576 MiB, tp 1: chunked 2048, max bs 24; reserved = 512 + 3072 + 48 + 128 = 3760
// (no floor at or under 60 GiB); (24576 - 3760) / 24576 = 0.84700... -> 0.847.
TEST(EngineRelease, SglangFractionOn24GiB) {
  SglangMemorySettings s = SglangMemoryDefaults(24 * kGiBytes, 1, 1, 1, false);
  EXPECT_EQ(s.chunked_prefill_size, 2048u);
  EXPECT_EQ(s.cuda_graph_max_bs, 24u);
  EXPECT_DOUBLE_EQ(s.reserved_mib, 3760);
  EXPECT_DOUBLE_EQ(s.mem_fraction_static, 0.847);
  // A chunked_prefill_size the user gives replaces the tier's in the reserve (SGLang sets the
  // tier's only when none is given): 4096 on 24 GiB: 512 + 6144 + 48 + 128 = 6832;
  // (24576 - 6832) / 24576 = 0.72201 -> 0.722.
  SglangMemorySettings given = SglangMemoryDefaults(24 * kGiBytes, 1, 1, 1, false,
                                                    {.chunked_prefill_size = 4096});
  EXPECT_EQ(given.chunked_prefill_size, 4096u);
  EXPECT_DOUBLE_EQ(given.reserved_mib, 6832);
  EXPECT_DOUBLE_EQ(given.mem_fraction_static, 0.722);
  // 2048 on 80 GiB: 512 + 3072 + 512 + 128 = 4224, raised to the 10240 floor: 0.875.
  EXPECT_DOUBLE_EQ(SglangMemoryDefaults(80 * kGiBytes, 1, 1, 1, false,
                                        {.chunked_prefill_size = 2048})
                       .mem_fraction_static,
                   0.875);
}

TEST(EngineRelease, SglangFractionOtherTiers) {
  // 16 GiB: chunked 2048, max bs 8: 512 + 3072 + 16 + 128 = 3728; 12656 / 16384 = 0.77246 ->
  // 0.772.
  EXPECT_DOUBLE_EQ(SglangMemoryDefaults(16 * kGiBytes, 1, 1, 1, false).mem_fraction_static, 0.772);
  // 141 GiB (H200) = 144384 MiB: the H100 tier, 13440 reserved; 130944 / 144384 = 0.9069 -> 0.907.
  EXPECT_DOUBLE_EQ(SglangMemoryDefaults(141 * kGiBytes, 1, 1, 1, false).mem_fraction_static, 0.907);
  // 192 GiB = 196608 MiB: chunked 16384, max bs 512: 512 + 24576 + 1024 + 128 = 26240;
  // 170368 / 196608 = 0.86653 -> 0.867.
  EXPECT_DOUBLE_EQ(SglangMemoryDefaults(192 * kGiBytes, 1, 1, 1, false).mem_fraction_static, 0.867);
  // 40 GiB: chunked 4096, max bs 32: 512 + 6144 + 64 + 128 = 6848, no floor at or under 60 GiB;
  // (40960 - 6848) / 40960 = 0.83281 -> 0.833.
  EXPECT_DOUBLE_EQ(SglangMemoryDefaults(40 * kGiBytes, 1, 1, 1, false).mem_fraction_static, 0.833);
  // Unknown GPU: SGLang's `else 0.88` and its fallback chunk 4096, max bs 160.
  SglangMemorySettings unknown = SglangMemoryDefaults(0, 1, 1, 1, false);
  EXPECT_DOUBLE_EQ(unknown.mem_fraction_static, 0.88);
  EXPECT_EQ(unknown.chunked_prefill_size, 4096u);
}

// The draft model's reserve comes after the 10 GiB floor (80 GiB, tp 1: 13440 MiB as above):
// EAGLE + 2048 = 15488, (81920 - 15488) / 81920 = 0.81094 -> 0.811; STANDALONE + 6144 = 19584,
// 62336 / 81920 = 0.76094 -> 0.761; NGRAM reserves nothing more: 0.836.
TEST(EngineRelease, SglangSpeculativeReserve) {
  // One GPU of `gpu_bytes` (tp, pp and dp 1) running `algorithm`.
  auto on_one_gpu = [](uint64_t gpu_bytes, const char* algorithm) {
    return SglangMemoryDefaults(gpu_bytes, 1, 1, 1, false, {.speculative_algorithm = algorithm});
  };
  EXPECT_DOUBLE_EQ(on_one_gpu(80 * kGiBytes, "EAGLE").mem_fraction_static, 0.811);
  EXPECT_DOUBLE_EQ(on_one_gpu(80 * kGiBytes, "EAGLE3").reserved_mib, 15488);
  EXPECT_DOUBLE_EQ(on_one_gpu(80 * kGiBytes, "STANDALONE").mem_fraction_static, 0.761);
  EXPECT_DOUBLE_EQ(on_one_gpu(80 * kGiBytes, "NGRAM").mem_fraction_static, 0.836);
  // 24 GiB (no floor): 3760 + 2048 = 5808; (24576 - 5808) / 24576 = 0.76367 -> 0.764.
  EXPECT_DOUBLE_EQ(on_one_gpu(24 * kGiBytes, "NEXTN").mem_fraction_static, 0.764);
  EXPECT_EQ(*ParseSpeculativeAlgorithm("eagle3"), "EAGLE3");
  auto bad = ParseSpeculativeAlgorithm("medusa");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "--speculative-algorithm medusa: expected EAGLE, EAGLE3, NEXTN, "
                                 "STANDALONE or NGRAM (SGLang's words)");
}

// SGLang 0.5.14 on (v0.5.15's _handle_gpu_memory_settings): the prefill CUDA graphs' batch sizes
// up to chunked_prefill_size, 8 MiB each, before the floor; no speculative reserve. Sizes: 4..32
// by 4 (8), 48..256 by 16 (14), 288..512 by 32 (8), 576..1024 by 64 (8): 38; then 1280..2048 by
// 256 (4): 42 for 2048; ..4096 (12): 50; 4608..8192 by 512 (8): 58; ..16384 (24): 74.
// 80 GiB, tp 1, a dense text model: 13440 + 58 x 8 = 13904; (81920 - 13904) / 81920 = 0.83027
// -> 0.830, with EAGLE too; MLA and multimodal models have no prefill graphs: 0.836. 24 GiB:
// 3760 + 42 x 8 = 4096; 20480 / 24576 = 0.8333 -> 0.833. 141 GiB: 130480 / 144384 = 0.9037 ->
// 0.904.
TEST(EngineRelease, Sglang0514Fraction) {
  EXPECT_EQ(SglangPrefillGraphSizes(2048), 42u);
  EXPECT_EQ(SglangPrefillGraphSizes(4096), 50u);
  EXPECT_EQ(SglangPrefillGraphSizes(8192), 58u);
  EXPECT_EQ(SglangPrefillGraphSizes(16384), 74u);
  const EngineRelease* r = &Release(Engine::kSglang, "0.5.15");
  EXPECT_EQ(r->version, "0.5.14");
  SglangMemorySettings s = SglangMemoryDefaults(80 * kGiBytes, 1, 1, 1, false, {.release = r});
  EXPECT_DOUBLE_EQ(s.reserved_mib, 13904);
  EXPECT_DOUBLE_EQ(s.mem_fraction_static, 0.830);
  EXPECT_DOUBLE_EQ(SglangMemoryDefaults(80 * kGiBytes, 1, 1, 1, false,
                                        {.speculative_algorithm = "EAGLE", .release = r})
                       .mem_fraction_static,
                   0.830);
  const SglangRuleInputs mla{.release = r, .mla = true};
  EXPECT_DOUBLE_EQ(SglangMemoryDefaults(80 * kGiBytes, 1, 1, 1, false, mla).mem_fraction_static, 0.836);
  const SglangRuleInputs multimodal{.release = r, .multimodal = true};
  EXPECT_DOUBLE_EQ(
      SglangMemoryDefaults(80 * kGiBytes, 1, 1, 1, false, multimodal).mem_fraction_static, 0.836);
  EXPECT_DOUBLE_EQ(SglangMemoryDefaults(24 * kGiBytes, 1, 1, 1, false, {.release = r}).mem_fraction_static,
                   0.833);
  EXPECT_DOUBLE_EQ(SglangMemoryDefaults(141 * kGiBytes, 1, 1, 1, false, {.release = r}).mem_fraction_static,
                   0.904);
  // DP attention: no prefill graphs; 0.594 as in 0.5.
  EXPECT_DOUBLE_EQ(SglangMemoryDefaults(80 * kGiBytes, 8, 1, 8, true, {.release = r}).mem_fraction_static,
                   0.594);
}

// adjust_mem_fraction_for_vlm: 0.95 x clamp(1 - 0.1 x (L H^2 / (24 x 1024^2) - 1), 0.8, 1.05).
TEST(EngineRelease, SglangVisionFactor) {
  // ViT-L/14 itself: ratio 1, factor 0.95.
  EXPECT_DOUBLE_EQ(SglangVisionFactor({.num_hidden_layers = 24, .hidden_size = 1024}), 0.95);
  // 24 x 1280 (Qwen-VL's vision_config has "depth", not num_hidden_layers: SGLang's 24):
  // ratio 1280^2 / 1024^2 = 1.5625; 1 - 0.05625 = 0.94375; x 0.95 = 0.8965625.
  EXPECT_NEAR(SglangVisionFactor({.num_hidden_layers = 24, .hidden_size = 1280}), 0.8965625, 1e-12);
  // 27 x 1152 (SigLIP-so400m): ratio 27 x 1327104 / 25165824 = 1.423828125;
  // 1 - 0.0423828125 = 0.9576171875; x 0.95 = 0.909736328125.
  EXPECT_NEAR(SglangVisionFactor({.num_hidden_layers = 27, .hidden_size = 1152}), 0.909736328125, 1e-12);
  // 48 x 1664: ratio 5.28..., below the 0.8 clamp: 0.76. 12 x 768: ratio 0.28125, above the
  // 1.05 clamp: 0.9975.
  EXPECT_NEAR(SglangVisionFactor({.num_hidden_layers = 48, .hidden_size = 1664}), 0.76, 1e-12);
  EXPECT_NEAR(SglangVisionFactor({.num_hidden_layers = 12, .hidden_size = 768}), 0.9975, 1e-12);
}

TEST(EngineRelease, KvDtypesEachEngineAccepts) {
  const EngineRelease& llama = Release(Engine::kLlamaCpp, "");
  auto fp8 = CheckKvDtype(llama, KvDtype::kFp8);
  ASSERT_FALSE(fp8);
  EXPECT_EQ(fp8.error().message,
            "--kv-dtype fp8: llama.cpp has no fp8 KV cache (--cache-type-k accepts f32, f16, "
            "bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1)");
  EXPECT_TRUE(CheckKvDtype(llama, KvDtype::kInt8));  // q8_0
  EXPECT_TRUE(CheckKvDtype(llama, KvDtype::kInt4));  // q4_0
  EXPECT_TRUE(CheckKvDtype(Release(Engine::kVllm, "0.10"), KvDtype::kFp8));
  EXPECT_FALSE(CheckKvDtype(Release(Engine::kVllm, "0.10"), KvDtype::kBF16));  // "auto" only
  EXPECT_TRUE(CheckKvDtype(Release(Engine::kVllm, "0.11"), KvDtype::kBF16));
  EXPECT_FALSE(CheckKvDtype(Release(Engine::kVllm, "0.11"), KvDtype::kInt8));
  EXPECT_TRUE(CheckKvDtype(Release(Engine::kVllm, "0.31"), KvDtype::kInt8));  // int8_per_token_head
  EXPECT_TRUE(CheckKvDtype(Release(Engine::kSglang, ""), KvDtype::kFp8));
  EXPECT_FALSE(CheckKvDtype(Release(Engine::kSglang, ""), KvDtype::kInt4));
}

// Options that leave the utilization and the scheduler's sizes to the release.
InferenceOptions Unresolved(Engine engine, const EngineRelease* release) {
  InferenceOptions o;
  o.engine = engine;
  o.release = release;
  o.gpu_memory_utilization = -1;
  o.max_num_seqs = 0;
  o.max_batched_tokens = 0;
  return o;
}

TEST(EngineRelease, WithEngineDefaultsFillsOnlyWhatIsLeftToTheRelease) {
  InferenceOptions o = Unresolved(Engine::kVllm, &Release(Engine::kVllm, "0.31"));
  o.gpu_memory_bytes = 80 * kGiBytes;
  o.gpu_name = "H100 SXM";
  InferenceOptions r = WithEngineDefaults(o);
  EXPECT_EQ(r.gpu_memory_utilization, 0.92);
  EXPECT_EQ(r.max_num_seqs, 1024u);
  EXPECT_EQ(r.max_batched_tokens, 16384u);
  EXPECT_TRUE(r.cuda_graphs_in_budget);
  // Given values stay.
  o.gpu_memory_utilization = 0.8;
  o.max_batched_tokens = 4096;
  r = WithEngineDefaults(o);
  EXPECT_EQ(r.gpu_memory_utilization, 0.8);
  EXPECT_EQ(r.max_batched_tokens, 4096u);
  EXPECT_EQ(r.max_num_seqs, 1024u);
  // SGLang: the fraction and the chunk from the GPU (24 GiB in 0.5.14: 0.833 and 2048, as above).
  InferenceOptions s = Unresolved(Engine::kSglang, &Release(Engine::kSglang, ""));
  s.gpu_memory_bytes = 24 * kGiBytes;
  r = WithEngineDefaults(s);
  EXPECT_DOUBLE_EQ(r.gpu_memory_utilization, 0.833);
  EXPECT_EQ(r.max_batched_tokens, 2048u);
  // An MLA model has no prefill CUDA graphs: 0.847.
  s.sglang_mla = true;
  EXPECT_DOUBLE_EQ(WithEngineDefaults(s).gpu_memory_utilization, 0.847);
  s.sglang_mla = false;
  // A multimodal model (no prefill CUDA graphs either): the GPU's fraction, then the vision
  // factor (0.847 x 0.95); a given fraction is not scaled (SGLang adjusts only its own).
  s.sglang_vision = SglangVisionConfig{};
  EXPECT_DOUBLE_EQ(WithEngineDefaults(s).gpu_memory_utilization, 0.847 * 0.95);
  s.gpu_memory_utilization = 0.8;
  EXPECT_DOUBLE_EQ(WithEngineDefaults(s).gpu_memory_utilization, 0.8);
  // No release: memfit's defaults before --engine-version.
  InferenceOptions none = Unresolved(Engine::kVllm, nullptr);
  r = WithEngineDefaults(none);
  EXPECT_EQ(r.gpu_memory_utilization, 0.9);
  EXPECT_EQ(r.max_num_seqs, 256u);
  EXPECT_EQ(r.max_batched_tokens, 8192u);
  EXPECT_FALSE(r.cuda_graphs_in_budget);
}

TEST(EngineRelease, EquivalentFlags) {
  InferenceOptions v;
  v.engine = Engine::kVllm;
  v.gpu_memory_bytes = 80 * kGiBytes;
  v.gpu_memory_utilization = 0.92;
  v.max_num_seqs = 1024;
  v.max_batched_tokens = 16384;
  ServingBudget b{.kv_pool_bytes = 123456789};
  EXPECT_EQ(EquivalentEngineFlags(v, b),
            "--gpu-memory-utilization 0.92 --max-num-seqs 1024 --max-num-batched-tokens 16384 "
            "(or --kv-cache-memory-bytes 123456789)");
  v.gpu_memory_bytes = 0;  // no GPU: no pool to name
  EXPECT_EQ(EquivalentEngineFlags(v, b),
            "--gpu-memory-utilization 0.92 --max-num-seqs 1024 --max-num-batched-tokens 16384");
  InferenceOptions s;
  s.engine = Engine::kSglang;
  s.gpu_memory_utilization = 0.836;
  s.max_batched_tokens = 8192;
  EXPECT_EQ(EquivalentEngineFlags(s, b), "--mem-fraction-static 0.836 --chunked-prefill-size 8192");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
