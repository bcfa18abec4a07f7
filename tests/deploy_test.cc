// Deployments people run, worked by hand from the real configs in ../shared/eval (config-only
// builds; skipped when the folder is absent): weights as stored, per GPU under the engine's
// parallel layout, KV blocks and concurrent sequences. Derivations in the comments; docs/
// estimates.md, "Weights as stored" and "Parallelism: what each engine replicates".

#include <filesystem>

#include <gtest/gtest.h>

#include "memfit/architecture.h"
#include "memfit/deploy.h"
#include "memfit/estimate_inference.h"
#include "memfit/gpu.h"
#include "memfit/hf_config.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

namespace fs = std::filesystem;

// The config.json of an eval model ("models/<dir>" or "recent/<dir>"); nullopt when absent.
std::optional<Model> EvalModel(const std::string& sub) {
  auto eval = testing::EvalDir();
  if (!eval) return std::nullopt;
  auto text = testing::ReadFile((fs::path(*eval) / sub / "config.json").string());
  if (!text) return std::nullopt;
  auto config = HfConfig::Parse(*text, sub);
  if (!config) return std::nullopt;
  auto model = BuildFromConfig(*config);
  if (!model) return std::nullopt;
  model->name = sub;
  return std::move(*model);
}

#define EVAL_MODEL_OR_SKIP(var, sub)                                                    \
  auto var##_opt = EvalModel(sub);                                                      \
  if (!var##_opt) GTEST_SKIP() << "../shared/eval/" << sub << " is absent: skipped";    \
  const Model& var = *var##_opt

InferenceOptions OnGpu(const char* gpu, Engine engine) {
  InferenceOptions o;
  o.engine = engine;
  auto spec = FindGpu(gpu);
  EXPECT_TRUE(spec);
  o.gpu_memory_bytes = MemoryBytes(**spec);
  o.compute_capability = ComputeCapability(**spec);
  return o;
}

bool Mentions(const std::vector<std::string>& lines, std::string_view text) {
  for (const auto& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

// DeepSeek-V3 (FP8, 128x128 blocks) on 8 x H200 with vLLM --tp 8, 131072 tokens per sequence.
// FP8 linear [out, in] = out x in + ceil(out/128) x ceil(in/128) x 4. Per layer (61):
//   replicated: q_a_proj [1536, 7168] 11012736, kv_a_proj_with_mqa [576, 7168] 4129888, q_a and
//     kv_a norms (1536 + 512) x 2 = 4096, two layer norms 2 x 14336 -> 15175392
//   split / 8: q_b_proj [24576, 1536] 37757952, kv_b_proj [32768, 512] 16781312, o_proj
//     [7168, 16384] 117469184 -> 4719744 + 2097664 + 14683648 = 21501056
// Dense MLP (layers 0-2): 3 x [18432, 7168] = 3 x 132152832 / 8 = 49557312 each.
// MoE (58 layers): router [256, 7168] bf16 3670016 + e_score_correction_bias 1024 replicated;
//   each expert 3 x [2048, 7168] = 44050944, 256 routed + 1 shared, each split / 8 = 5506368
//   -> 257 x 5506368 = 1415136576.
// Vocabulary-parallel embed_tokens and lm_head: 129280 / 8 = 16160 rows x 14336 B = 231669760
// each; final norm 14336; rotary inv_freq [32] fp32 128. MTP layer 61: not loaded.
// Sum: 61 x (15175392 + 21501056) + 3 x 49557312 + 58 x (3671040 + 1415136576)
//      + 2 x 231669760 + 14336 + 128 = 85140130976 bytes (79.29 GiB) per GPU.
// Profile run (8192 tokens, flash, tp 8): attention peak = residual 2 x 8192 x 7168 x 2
// (234881024) + qkv 8192 x (16 x 192 + 16 x 320) x 2 (134217728) + output 8192 x 16 x 128 x 2
// + lse 8192 x 16 x 4 (34078720) = 403177472.
// Budget: 141 GiB x 0.9 = 136257837465; non-KV = weights + 403177472 + 70 MiB = 85616708768;
// pool 50641128697. MLA latent per token: 61 x (512 + 64) x 2 = 70272 B; vLLM's FlashMLA backend
// on Hopper forces blocks of 64 tokens (vllm/platforms/cuda.py): 4497408 B -> 11260 blocks =
// 720640 tokens -> 11260 / (131072 / 64) = 5 sequences.
TEST(DeployRealConfigs, DeepSeekV3Fp8OnEightH200WithVllm) {
  EVAL_MODEL_OR_SKIP(m, "models/deepseek-ai__DeepSeek-V3");
  InferenceOptions o = OnGpu("h200", Engine::kVllm);
  o.tp = 8;
  o.context_tokens = 131072;
  auto e = EstimateInference(m, o);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->weights.stored_format, "fp8-block");
  EXPECT_EQ(e->weights_bytes, 85140130976u);
  EXPECT_EQ(e->sharding.replicated_bytes,
            61u * 15175392 + 58u * 3671040 + 14336 + 128);
  EXPECT_EQ(e->activation_bytes, 403177472u);
  ASSERT_TRUE(e->serving);
  EXPECT_EQ(e->serving->page_bytes, 4497408u);
  EXPECT_EQ(e->serving->num_blocks, 11260u);
  EXPECT_EQ(e->serving->max_concurrency, 5u);
  EXPECT_TRUE(Mentions(e->assumptions, "weights as stored"));
  EXPECT_TRUE(Mentions(e->assumptions, "vLLM FlashMLA backend: KV block size 64 tokens instead of 16"));
  // Blackwell: FlashInfer-MLA (qk_nope_head_dim 128) also runs blocks of 64; an A100 runs Triton
  // MLA with the requested 16; a --block-size that is a multiple of 64 is kept.
  InferenceOptions b200 = OnGpu("b200", Engine::kVllm);
  b200.tp = 8;
  b200.context_tokens = 131072;
  auto on_b200 = EstimateInference(m, b200);
  ASSERT_TRUE(on_b200) << on_b200.error().message;
  EXPECT_EQ(on_b200->serving->page_bytes, 64u * 70272);
  EXPECT_TRUE(Mentions(on_b200->assumptions, "FlashInfer-MLA"));
  InferenceOptions a100 = OnGpu("a100-80gb", Engine::kVllm);
  a100.tp = 8;
  a100.context_tokens = 4096;
  a100.quant.dequantize_stored = true;
  auto on_a100 = EstimateInference(m, a100);
  ASSERT_TRUE(on_a100) << on_a100.error().message;
  EXPECT_EQ(on_a100->kv.block_size, 16u);
  InferenceOptions big_blocks = o;
  big_blocks.block_size = 128;
  auto kept = EstimateInference(m, big_blocks);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->kv.block_size, 128u);
  // The old default, everything in bfloat16 (--quant none): ~156 GiB per GPU, nothing fits.
  o.quant.dequantize_stored = true;
  auto bf16 = EstimateInference(m, o);
  ASSERT_TRUE(bf16);
  EXPECT_GT(bf16->weights_bytes, uint64_t{150} << 30);
  EXPECT_EQ(bf16->serving->max_concurrency, 0u);
}

// Kimi-K2.5 NVFP4 (NVIDIA's release, config-only: kimi_k25 builder) on 4 x B200 with vLLM --tp 4,
// 131072 tokens per sequence. Text (Kimi-K2 dimensions: h 7168, 61 layers, 1 dense, 384 experts
// of 2048, 1 shared, q_lora 1536, kv_lora 512, 64 heads, nope 128, rope 64, v 128, vocab 163840):
// attention in bf16 ("ignore": every self_attn), MLPs in NVFP4: a linear [out, in] is out x in / 2
// (uint8) + out x in / 16 (E4M3 scales), split over the 4 GPUs, + two float32 scalars (whole).
//   attention per layer: replicated (1536 x 7168 + 1536 + 576 x 7168 + 512 + 2 x 7168) x 2 =
//     30,310,400; split (64 x 192 x 1536 + 64 x 256 x 512 + 7168 x 8192) x 2 / 4 = 42,991,616
//     -> 73,302,016 x 61;
//   dense MLP (layer 0): 2 x nvfp4(7168 -> 18432) + nvfp4(18432 -> 7168) = 55,738,392;
//   MoE layers (60): router 384 x 7168 x 2 + e_score_correction_bias 384 x 4 = 5,506,560
//     (whole); shared expert 6,193,176; 384 routed experts, each split over the 4 GPUs (no EP),
//     3 x (2048 x 7168 x 9 / 16 / 4 + 8) = 6,193,176 -> 2,378,179,584;
//   embed_tokens and lm_head (bf16, vocabulary-parallel) 2 x 40960 x 14336; norm 14336; rotary
//     inv_freq [32] float32 128 -> text 149,094,340,152.
// Vision (bf16): patch conv 3 x 1152 x 14 x 14 + 1152, pos_emb 64 x 64 x 1152 (whole) and the
// float32 time_weight 4 x 1152; 27 blocks of norms and biases (whole: vLLM splits the column-
// parallel wqkv/fc0 biases, 314,280 B in all that memfit keeps whole) and wqkv/wo/fc0/fc1 split
// / 4; final norm -> 217,144,800. Projector (ReplicatedLinear in vLLM) 54,277,888 x 2 =
// 108,555,776. Weights per GPU: 149,420,040,728.
// Budget: B200 180 GiB x 0.9 = 173,946,175,488; profile run (8192 tokens): the dense MLP's
// 2 x 8192 x 7168 x 2 + 3 x 8192 x 4608 x 2 = 461,373,440 beats attention's 403,177,472; non-torch
// 70 MiB -> pool 23,991,361,000. MLA latent 61 x 576 x 2 = 70,272 B/token; FlashInfer-MLA on
// Blackwell (qk_nope_head_dim 128) forces blocks of 64: 4,497,408 B -> 5,334 blocks = 341,376
// tokens -> 5334 / (131072 / 64) = 2 sequences.
TEST(DeployRealConfigs, KimiK25Nvfp4OnFourB200WithVllm) {
  EVAL_MODEL_OR_SKIP(m, "recent/nvidia__Kimi-K2.5-NVFP4");
  InferenceOptions o = OnGpu("b200", Engine::kVllm);
  o.tp = 4;
  o.context_tokens = 131072;
  auto e = EstimateInference(m, o);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->weights.stored_format, "nvfp4");
  EXPECT_EQ(e->weights_bytes, 149420040728u);
  EXPECT_EQ(e->activation_bytes, 461373440u);
  ASSERT_TRUE(e->serving);
  EXPECT_EQ(e->serving->kv_pool_bytes, 23991361000u);
  EXPECT_EQ(e->serving->page_bytes, 4497408u);
  EXPECT_EQ(e->serving->num_blocks, 5334u);
  EXPECT_EQ(e->serving->max_concurrency, 2u);
  EXPECT_TRUE(Mentions(e->assumptions, "FlashInfer-MLA"));
  // The deployment planner (fit --engine vllm --gpu 4xB200) gives the same row, with the GPU's
  // compute capability (not an assumed Hopper) choosing the block size.
  InferenceOptions base;
  base.engine = Engine::kVllm;
  base.context_tokens = 131072;
  DeployPlanner planner(m, base);
  auto spec = FindGpu("b200");
  ASSERT_TRUE(spec);
  DeployGpu gpu{.name = "B200", .memory_bytes = MemoryBytes(**spec), .spec = *spec};
  DeploymentRow row = planner.Evaluate(gpu, 4, DeployLayout{.tp = 4});
  ASSERT_TRUE(row.runs) << row.refusal;
  EXPECT_EQ(row.weights_per_gpu_bytes, 149420040728u);
  EXPECT_EQ(row.kv_pool_bytes, 23991361000u);
  EXPECT_EQ(row.max_sequences, 2u);
  EXPECT_TRUE(row.fits);
  EXPECT_TRUE(Mentions(row.assumptions, "FlashInfer-MLA"));
  EXPECT_FALSE(Mentions(row.assumptions, "Hopper GPU assumed"));
}

// gpt-oss-120b (MXFP4 experts) on one 80 GiB H100 with vLLM. Per layer (36): norms 2 x 5760,
// q [4096, 2880] + bias 23601152, k and v [512, 2880] + bias 2950144 each, o [2880, 4096] + bias
// 23598720, sinks 128, router [128, 2880] + bias 737536, MXFP4 experts (blocks + scales)
// 128 x (5760 + 2880) x 90 x 17 = 1692057600, expert biases 1474560 + 737280 -> 1748118784.
// Embedding and lm_head 201088 x 2880 x 2 = 1158266880 each, norm 5760, inv_freq 128:
// 36 x 1748118784 + 2 x 1158266880 + 5888 = 65248815872 (60.77 GiB).
// Profile peak: logits 8192 x 2880 x 2 + 256 x 201088 x (2 + 4) = 356057088. Budget 80 GiB x 0.9
// = 77309411328, pool = 77309411328 - 65248815872 - 356057088 - 73400320 = 11631138048; KV per
// token 36 layers x 8 heads x 128 x 2 = 73728, block 1179648 -> 9859 blocks = 157744 tokens.
// A 131072-token sequence takes 18 full layers x 131072 tokens x 2048 B = 4831838208 plus 18
// sliding layers (window 128) x min(128 - 1 + 8192, 131072) -> 8320 tokens x 2048 B = 306708480
// (vLLM's SlidingWindowSpec), 5138546688 B: the pool holds two (vLLM's hybrid KV manager frees
// the sliding layers' blocks beyond the window).
TEST(DeployRealConfigs, GptOss120bMxfp4OnOneH100) {
  EVAL_MODEL_OR_SKIP(m, "recent/openai__gpt-oss-120b");
  InferenceOptions o = OnGpu("h100", Engine::kVllm);
  o.context_tokens = 131072;
  auto e = EstimateInference(m, o);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->weights.stored_format, "mxfp4");
  EXPECT_EQ(e->weights.stored_quantized_bytes, uint64_t{36} * 1692057600);
  EXPECT_EQ(e->weights_bytes, 65248815872u);
  EXPECT_EQ(e->activation_bytes, 356057088u);
  EXPECT_EQ(e->serving->num_blocks, 9859u);
  EXPECT_EQ(e->serving->sequence_bytes, 5138546688u);
  EXPECT_EQ(e->serving->max_concurrency, 2u);
  // transformers on a V100 (7.0) dequantizes the experts: 36 x 128 x (5760 + 2880) x 2880 x 2
  // bytes of bf16 in place of the MXFP4 bytes.
  InferenceOptions v100 = OnGpu("v100", Engine::kTransformers);
  v100.context_tokens = 1024;
  auto d = EstimateInference(m, v100);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->weights_bytes,
            uint64_t{65248815872} - uint64_t{36} * 1692057600 +
                uint64_t{36} * 128 * (5760 + 2880) * 2880 * 2);
  // Two pipeline stages on two H100s (--pp 2): layers 0-17 with the embedding and inv_freq
  // (18 x 1748118784 + 1158266880 + 128), layers 18-35 with the norm and lm_head (+ 5760): the
  // second is heavier, pool 77309411328 - 32624410752 - 356057088 - 73400320 = 44255543168
  // (the first: 44255548800; both hold 75031 blocks of 16 x 18 x 2048 B, and the first is
  // reported). A sequence takes, in each stage, 9 full layers x 131072 tokens x 2048 B + 9
  // sliding layers x 8320 tokens x 2048 B = 2569306112 B: 17 sequences (the full-context pages of
  // every layer would give 75031 blocks / 8192 = 9).
  InferenceOptions pp = OnGpu("h100", Engine::kVllm);
  pp.context_tokens = 131072;
  pp.pp = 2;
  auto staged = EstimateInference(m, pp);
  ASSERT_TRUE(staged) << staged.error().message;
  EXPECT_EQ(staged->weights_bytes, 32624410752u);
  EXPECT_EQ(staged->serving->kv_pool_bytes, 44255548800u);
  EXPECT_EQ(staged->serving->num_blocks, 75031u);
  EXPECT_EQ(staged->serving->max_concurrency, 17u);
}

// Qwen3-235B-A22B-FP8 on 4 x H100 with SGLang --tp 4 --ep 4 --dp 4 --enable-dp-attention.
// Attention TP = 4 / 4 = 1: per layer (94) q [8192, 4096] 33562624, k and v [512, 4096] 2097664
// each, o [4096, 8192] 33562624 (FP8 + block scales), q/k norms 2 x 256, layer norms 2 x 8192,
// router [128, 4096] bf16 1048576; 128 / 4 = 32 whole experts of 3 x 6292992 = 18878976.
// Per layer 676513280. Embedding replicated (DP attention) 151936 x 4096 x 2 = 1244659712;
// lm_head over tp 4: 37984 rows x 8192 = 311164928; norm 8192; inv_freq 256:
// 94 x 676513280 + 1244659712 + 311164928 + 8448 = 65148081408.
// SGLang static budget 80 GiB x 0.88 = 75591424409 - weights = 10443343001 for KV; per token
// 94 x 4 KV heads x 256 x 2 = 192512 -> 54247 tokens per GPU: one 32768-token sequence per DP
// rank, 4 in all.
TEST(DeployRealConfigs, Qwen3MoeFp8SglangDpAttention) {
  EVAL_MODEL_OR_SKIP(m, "recent/Qwen__Qwen3-235B-A22B-FP8");
  InferenceOptions o = OnGpu("h100", Engine::kSglang);
  o.gpu_memory_utilization = 0.88;
  o.tp = 4;
  o.ep = 4;
  o.dp = 4;
  o.dp_attention = true;
  o.context_tokens = 32768;
  auto e = EstimateInference(m, o);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->weights.stored_format, "fp8-block");
  EXPECT_EQ(e->gpus, 4u);
  EXPECT_EQ(e->weights_bytes, 65148081408u);
  EXPECT_EQ(e->serving->token_capacity, 54247u);
  EXPECT_EQ(e->serving->max_concurrency, 4u);
}

// Llama-3.1-70B: per-tensor FP8 (--quant fp8: n + 8 bytes per linear, the layout of nvidia's
// FP8 release) on 2 x H100 with vLLM --tp 2, against bfloat16 on 4 x H100 --tp 4. Per layer (80)
// linears q, o 8192 x 8192, k, v 1024 x 8192, gate, up, down 28672 x 8192; norms 2 x 16384.
// FP8 / 2: sum (n + 8) / 2 = 419430432 + 16384 per layer; embedding and lm_head 64128 rows x
// 16384 = 1050673152 each; norm 16384; inv_freq 256 -> 36329507264.
// bf16 / 4: sum 2n / 4 = 419430400 + 16384; 32064 rows x 16384 = 525336576 each -> 35278831872.
TEST(DeployRealConfigs, Llama70bFp8OnTwoH100VersusBf16OnFour) {
  EVAL_MODEL_OR_SKIP(m, "recent/meta-llama__Meta-Llama-3.1-70B");
  InferenceOptions fp8 = OnGpu("h100", Engine::kVllm);
  fp8.tp = 2;
  fp8.quant.scheme = QuantScheme::kFp8;
  fp8.context_tokens = 8192;
  auto a = EstimateInference(m, fp8);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->weights_bytes, 36329507264u);
  InferenceOptions bf16 = OnGpu("h100", Engine::kVllm);
  bf16.tp = 4;
  bf16.context_tokens = 8192;
  auto b = EstimateInference(m, bf16);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->weights_bytes, 35278831872u);
  EXPECT_GT(a->serving->max_concurrency, 0u);
  EXPECT_GT(b->serving->max_concurrency, 0u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
