#include <filesystem>

#include <gtest/gtest.h>

#include "base/error_test_util.h"
#include "gguf_models.h"
#include "memfit/gguf_model.h"
#include "model/layer_test_util.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using namespace memfit::testing;  // NOLINT

Result<Model> FromWriter(const GgufWriter& w) {
  MemoryByteSource src(w.Build());
  MEMFIT_ASSIGN_OR_RETURN(GgufFile f, ReadGgufHeader(src));
  return ModelFromGguf({GgufShard{"x.gguf", std::move(f)}}, "x");
}

TEST(GgufModel, TensorsLayersAndTies) {
  GgufShape s{.tied = true, .type_of = [](const std::string& n, int) { return n == "token_embd.weight" ? kQ8_0 : kQ4_K; }};
  auto m = MakeGgufModel(s);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_TRUE(m->hp.tie_word_embeddings);
  EXPECT_EQ(m->hp.num_layers, 2u);
  const Tensor& q = m->tensors[1];  // blk.0.attn_norm.weight is F32 [256]
  EXPECT_EQ(q.name, "blk.0.attn_norm.weight");
  EXPECT_EQ(q.dtype, Dtype::kF32);
  const Tensor& attn_q = m->tensors[2];
  EXPECT_EQ(attn_q.dtype, Dtype::kBlockQuantized);
  EXPECT_EQ(attn_q.dtype_label, "Q4_K");
  EXPECT_EQ(attn_q.shape, (std::vector<uint64_t>{256, 256}));  // outermost first
  EXPECT_EQ(attn_q.bytes, 256u * 256 * 144 / 256);
  EXPECT_EQ(GgufLayerOf("blk.17.ffn_up.weight"), 17);
  EXPECT_EQ(GgufLayerOf("blk.x.ffn_up.weight"), -1);
  EXPECT_EQ(GgufLayerOf("output.weight"), -1);
  auto blocks = IndivisibleBlocks(*m, {});
  ASSERT_FALSE(blocks.empty());
}

TEST(GgufModel, PerLayerArraysSwaPatternAndRecurrentLayers) {
  GgufWriter w;
  const std::string a = "gemma3";
  w.Str("general.architecture", a).U32(a + ".block_count", 4).U32(a + ".embedding_length", 512)
      .U32Array(a + ".feed_forward_length", {100, 200, 300, 400}).U32(a + ".attention.head_count", 8)
      .I32Array(a + ".attention.head_count_kv", {2, 0, 2, 4}).U32(a + ".attention.sliding_window", 1024)
      .BoolArray(a + ".attention.sliding_window_pattern", {true, false, true, false})
      .U32(a + ".ssm.state_size", 16).U32(a + ".ssm.conv_kernel", 4).U32(a + ".ssm.inner_size", 1024);
  auto m = FromWriter(w);
  ASSERT_TRUE(m) << m.error().message;
  testing::ExpectLayer(m->hp, 2, {.intermediate_size = 300u});
  testing::ExpectLayer(m->hp, 0, {.attention = AttentionKind::kSliding, .window_tokens = 1024u});
  // recurrent: head_count_kv 0 with ssm keys
  testing::ExpectLayer(m->hp, 1, {.attention = AttentionKind::kNone, .recurrent = true});
  // head_dim_k: default n_embd / n_head
  testing::ExpectLayer(m->hp, 3,
                       {.attention = AttentionKind::kFull, .num_kv_heads = 4u, .head_dim_k = 64u});
  // Built-in pattern when the key is absent: gemma3 uses 6 (layers 0-4 SWA, 5 full).
  GgufWriter g;
  g.Str("general.architecture", a).U32(a + ".block_count", 6).U32(a + ".embedding_length", 64)
      .U32(a + ".attention.head_count", 1).U32(a + ".attention.sliding_window", 512);
  auto gm = FromWriter(g);
  ASSERT_TRUE(gm);
  EXPECT_EQ(gm->hp.layers[4].attention, AttentionKind::kSliding);
  EXPECT_EQ(gm->hp.layers[5].attention, AttentionKind::kFull);
  EXPECT_FALSE(gm->assumptions.empty());
}

TEST(GgufModel, BadHyperparametersAreErrors) {
  GgufWriter w;
  w.Str("general.architecture", "llama").U32Array("llama.feed_forward_length", {1, 2}).U32("llama.block_count", 3);
  auto m = FromWriter(w);
  testing::ExpectErrorContains(m, "2 entries for 3 layers");
  GgufWriter no_arch;
  no_arch.U32("llama.block_count", 3);
  EXPECT_FALSE(FromWriter(no_arch));
  GgufWriter neg;
  neg.Str("general.architecture", "llama").I32("llama.block_count", -1);
  EXPECT_FALSE(FromWriter(neg));
  GgufWriter beyond;
  beyond.Str("general.architecture", "llama").U32("llama.block_count", 1).Tensor("blk.5.x.weight", {32}, kF32);
  EXPECT_FALSE(FromWriter(beyond));
}

TEST(GgufModel, ProjectorFilesAreFlagged) {
  GgufWriter w;
  w.Str("general.architecture", "clip").Str("general.type", "mmproj").Tensor("v.patch_embd.weight", {64, 64}, kF16);
  auto m = FromWriter(w);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->tensors[0].component, "projector");
  EXPECT_EQ(m->tensors[0].bytes, 64u * 64 * 2);
}

TEST(GgufModel, RealVocabFilesHyperparameters) {
  auto eval = EvalDir();
  if (!eval || !std::filesystem::exists(*eval + "/gguf/ggml-vocab-phi-3.gguf")) GTEST_SKIP() << "shared/eval/gguf absent";
  auto load = [&](const std::string& f) {
    auto src = OpenFileByteSource(*eval + "/gguf/" + f);
    auto file = ReadGgufHeader(*src);
    EXPECT_TRUE(file);
    return ModelFromGguf({GgufShard{f, std::move(*file)}}, f);
  };
  // Values from docs/reference/gguf-and-llamacpp.md section 5.
  auto phi = load("ggml-vocab-phi-3.gguf");
  ASSERT_TRUE(phi) << phi.error().message;
  EXPECT_EQ(phi->hp.hidden_size, 3072u);
  EXPECT_EQ(phi->hp.intermediate_size, 8192u);
  EXPECT_EQ(phi->hp.num_layers, 32u);
  EXPECT_EQ(phi->hp.vocab_size, 32064u);  // no vocab_size key: the token list
  EXPECT_EQ(phi->hp.head_dim, 96u);       // 3072 / 32
  auto bert = load("ggml-vocab-bert-bge.gguf");
  ASSERT_TRUE(bert) << bert.error().message;
  EXPECT_FALSE(bert->hp.causal);
  EXPECT_EQ(bert->hp.num_layers, 12u);
  EXPECT_EQ(bert->hp.hidden_size, 384u);
  EXPECT_EQ(bert->hp.num_kv_heads, 12u);  // default = head_count
  EXPECT_EQ(bert->hp.max_position_embeddings, 512u);
  auto gpt2 = load("ggml-vocab-gpt-2.gguf");
  ASSERT_TRUE(gpt2) << gpt2.error().message;
  EXPECT_EQ(gpt2->hp.vocab_size, 50257u);
  EXPECT_EQ(gpt2->hp.max_position_embeddings, 1024u);
  EXPECT_EQ(gpt2->hp.hidden_size, 768u);
  auto spm = load("ggml-vocab-llama-spm.gguf");
  ASSERT_TRUE(spm);
  EXPECT_EQ(spm->hp.intermediate_size, 11008u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
