#include "memfit/parallel.h"

#include <gtest/gtest.h>

#include "estimate/tiny_moe_test_util.h"
#include "memfit/quantization.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using estimate_test::TinyFp8Moe;

Result<ShardedWeights> Shard(const Model& m, const ParallelOptions& o) {
  auto w = EstimateQuantizedWeights(m, QuantOptions{});
  if (!w) return w.error();
  auto layout = ResolveParallel(m, o);
  if (!layout) return layout.error();
  return ShardWeights(m, w->tensor_bytes, *layout);
}

// TinyFp8Moe as stored (tiny_moe_test_util.h), vLLM --tp 2: embed_tokens and lm_head are
// vocab-parallel (128 rows padded to 64 = 128, 64 rows x 32 B = 2048 each); norms (32 + 32) and
// the router (128) replicated = 192; q 516 / 2 = 258, k and v 132 / 2 = 66 (2 KV heads), o 258;
// each expert tensor 132 / 2 = 66, x 8 = 528. 2048 + 2048 + 192 + 258 + 66 + 66 + 258 + 528 = 5464.
TEST(Parallel, VllmTensorParallelByTensor) {
  auto s = Shard(TinyFp8Moe(), ParallelOptions{.engine = Engine::kVllm, .tp = 2});
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->per_gpu_bytes, 5464u);
  EXPECT_EQ(s->replicated_bytes, 192u);
  EXPECT_EQ(s->expert_bytes, 528u);
  EXPECT_EQ(s->sharded_bytes, 5464u - 192 - 528);
}

// --tp 4 with 2 KV heads: k and v are split over 2 GPUs only (one head per GPU, replicated
// twice): 132 / 2 = 66 each; q, o 516 / 4 = 129; embed and lm_head 32 rows x 32 B = 1024 each;
// experts 132 / 4 = 33 x 8 = 264; replicated 192. 1024 + 1024 + 192 + 129 + 66 + 66 + 129 + 264 =
// 2894.
TEST(Parallel, KvHeadsReplicatedBeyondTheirCount) {
  auto s = Shard(TinyFp8Moe(), ParallelOptions{.engine = Engine::kVllm, .tp = 4});
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->per_gpu_bytes, 2894u);
}

// vLLM --dp 3 --ep 3 (--enable-expert-parallel over tp x dp = 3 GPUs): attention and the
// vocabulary whole on each GPU (tp 1), ceil(4 / 3) = 2 whole experts on the heaviest GPU
// (4 x 132 = 528). Without expert parallel every expert tensor is split over the flattened 3
// GPUs: ceil(128 / 3) = 43 per weight + ceil(4 / 3) = 2 per scale, x 8 = 360. The rest is whole:
// 4096 + 4096 + 192 + 1296 = 9680.
TEST(Parallel, VllmExpertParallelSpansDataParallel) {
  auto ep = Shard(TinyFp8Moe(), ParallelOptions{.engine = Engine::kVllm, .tp = 1, .dp = 3, .ep = 3});
  ASSERT_TRUE(ep) << ep.error().message;
  EXPECT_EQ(ep->per_gpu_bytes, 9680u + 528);
  auto flat = Shard(TinyFp8Moe(), ParallelOptions{.engine = Engine::kVllm, .tp = 1, .dp = 3});
  ASSERT_TRUE(flat);
  EXPECT_EQ(flat->per_gpu_bytes, 9680u + 360);
  auto bad = ResolveParallel(TinyFp8Moe(), ParallelOptions{.engine = Engine::kVllm, .tp = 2, .ep = 4});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message.rfind("vllm:", 0), 0u);
}

// SGLang --tp 2 --dp 2 --enable-dp-attention --ep 2: attention TP 2 / 2 = 1 (q, k, v, o whole:
// 1296), the input embedding replicated (enable_tp=not is_dp_attention_enabled(): 4096),
// lm_head over tp 2 (2048), 2 whole experts per GPU (528), norms and router 192: 8160.
TEST(Parallel, SglangDpAttention) {
  ParallelOptions o{.engine = Engine::kSglang, .tp = 2, .dp = 2, .dp_attention = true, .ep = 2};
  auto layout = ResolveParallel(TinyFp8Moe(), o);
  ASSERT_TRUE(layout) << layout.error().message;
  EXPECT_EQ(layout->attn_tp, 1u);
  EXPECT_EQ(layout->replicas, 2u);
  EXPECT_EQ(layout->gpus, 2u);
  auto s = Shard(TinyFp8Moe(), o);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->per_gpu_bytes, 8160u);
  EXPECT_EQ(s->replicated_bytes, 192u + 4096);
}

// vLLM get_pp_indices: 61 layers over 2 stages -> 31, 30; over 4 -> 15, 15, 16, 15 (the
// remainder goes to the stages before the last); 8 over 4 -> 2 each.
TEST(Parallel, PipelineStagesFollowVllm) {
  EXPECT_EQ(PipelineStageLayers(61, 2), (std::vector<uint64_t>{31, 30}));
  EXPECT_EQ(PipelineStageLayers(61, 4), (std::vector<uint64_t>{15, 15, 16, 15}));
  EXPECT_EQ(PipelineStageLayers(8, 4), (std::vector<uint64_t>{2, 2, 2, 2}));
  auto bad = ResolveParallel(TinyFp8Moe(), ParallelOptions{.engine = Engine::kVllm, .pp = 2});
  ASSERT_FALSE(bad);  // one decoder layer cannot make two stages
  auto heads = ResolveParallel(TinyFp8Moe(), ParallelOptions{.engine = Engine::kVllm, .tp = 3});
  ASSERT_FALSE(heads);  // 4 heads over 3 GPUs
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
