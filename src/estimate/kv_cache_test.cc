#include <gtest/gtest.h>

#include "memfit/estimate_inference.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

Model Decoder(uint64_t layers, uint64_t heads, uint64_t kv_heads, uint64_t head_dim) {
  Model m;
  m.name = "test";
  m.hp.num_layers = layers;
  m.hp.num_attention_heads = heads;
  m.hp.num_kv_heads = kv_heads;
  m.hp.head_dim = head_dim;
  m.hp.hidden_size = heads * head_dim;
  for (uint64_t i = 0; i < layers; ++i) {
    m.hp.layers.push_back({.num_heads = heads, .num_kv_heads = kv_heads, .head_dim_k = head_dim,
                           .head_dim_v = head_dim});
  }
  return m;
}

TEST(KvCacheTest, Llama2_7bAt4096TokensFp16IsExactly2GiB) {
  // 2 (K,V) x 32 layers x 32 heads x 128 x 2 bytes x 4096 tokens = 2^31.
  auto e = EstimateKvCache(Decoder(32, 32, 32, 128),
                           {.context_tokens = 4096, .model_dtype = Dtype::kF16});
  ASSERT_TRUE(e.has_value()) << e.error().message;
  EXPECT_EQ(e->bytes, uint64_t{1} << 31);
  EXPECT_EQ(e->bytes_per_token, 524288u);  // 512 KiB per token (the "0.5 GB per 1000 tokens")
}

TEST(KvCacheTest, GqaLlama3_8bIs128KiBPerToken) {
  // 2 x 32 x 8 x 128 x 2 = 131072.
  auto e = EstimateKvCache(Decoder(32, 32, 8, 128), {.context_tokens = 1});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->bytes_per_token, 131072u);
}

TEST(KvCacheTest, KvDtypesScaleTheCache) {
  Model m = Decoder(32, 32, 8, 128);
  auto f8 = EstimateKvCache(m, {.context_tokens = 1000, .batch = 2, .dtype = KvDtype::kFp8});
  auto i4 = EstimateKvCache(m, {.context_tokens = 1000, .batch = 2, .dtype = KvDtype::kInt4});
  auto f32 = EstimateKvCache(m, {.context_tokens = 1000, .batch = 2, .dtype = KvDtype::kF32});
  ASSERT_TRUE(f8 && i4 && f32);
  EXPECT_EQ(f8->bytes, 65536u * 1000 * 2);   // 1 byte per element
  EXPECT_EQ(i4->bytes, 32768u * 1000 * 2);   // half a byte
  EXPECT_EQ(f32->bytes, 262144u * 1000 * 2);
}

TEST(KvCacheTest, TensorParallelSplitsThenReplicatesKvHeads) {
  Model m = Decoder(32, 32, 8, 128);
  auto tp8 = EstimateKvCache(m, {.context_tokens = 1, .tp = 8});
  auto tp16 = EstimateKvCache(m, {.context_tokens = 1, .tp = 16});
  ASSERT_TRUE(tp8 && tp16);
  EXPECT_EQ(tp8->bytes_per_token, 131072u / 8);   // one KV head per GPU
  EXPECT_EQ(tp16->bytes_per_token, 131072u / 8);  // still one: replicated
  EXPECT_FALSE(tp16->assumptions.empty());
}

TEST(KvCacheTest, SlidingWindowLayersKeepTheWindow) {
  Model m = Decoder(2, 8, 8, 64);
  m.hp.layers[1].attention = AttentionKind::kSliding;
  m.hp.layers[1].window_tokens = 1024;
  auto e = EstimateKvCache(m, {.context_tokens = 8192});
  ASSERT_TRUE(e.has_value());
  // Layer 0: 2 x 8 x 64 x 2 = 2048 B/token x 8192; layer 1 the same per token x 1024.
  EXPECT_EQ(e->layers[0].bytes, 2048u * 8192);
  EXPECT_EQ(e->layers[1].bytes, 2048u * 1024);
  EXPECT_EQ(e->bytes, 2048u * (8192 + 1024));
}

TEST(KvCacheTest, MlaCachesOneLatentPerToken) {
  // DeepSeek-V3: 61 layers x (kv_lora_rank 512 + rope 64) x 2 bytes = 70272 B/token.
  Model m = Decoder(61, 128, 128, 192);
  m.hp.kv_lora_rank = 512;
  m.hp.qk_rope_head_dim = 64;
  for (auto& l : m.hp.layers) { l.attention = AttentionKind::kMla; l.head_dim_v = 128; }
  auto latent = EstimateKvCache(m, {.context_tokens = 1, .tp = 8});
  ASSERT_TRUE(latent.has_value());
  EXPECT_EQ(latent->bytes_per_token, 70272u);  // not split by TP
  auto full = EstimateKvCache(m, {.context_tokens = 1, .mla_latent = false});
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->bytes_per_token, 61u * 128 * (192 + 128) * 2);
}

TEST(KvCacheTest, PagedEnginesRoundUpToBlocks) {
  auto e = EstimateKvCache(Decoder(32, 32, 32, 128), {.context_tokens = 1000, .block_size = 16});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->layers[0].tokens, 1008u);  // ceil(1000/16) x 16
  EXPECT_EQ(e->bytes, 524288u * 1008);
}

TEST(KvCacheTest, EncoderDecoderAddsCrossAttention) {
  Model m = Decoder(4, 8, 8, 64);
  m.hp.is_encoder_decoder = true;
  m.hp.encoder_max_positions = 1500;
  auto e = EstimateKvCache(m, {.context_tokens = 448});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->bytes, 4u * 2048 * (448 + 1500));  // 2 x 8 x 64 x 2 = 2048 B per token-layer
  // T5-style models state no encoder length: the prompt (--context) is the encoder's, and the
  // assumption says so.
  Model no_len = m;
  no_len.hp.encoder_max_positions = 0;
  auto t5 = EstimateKvCache(no_len, {.context_tokens = 448});
  ASSERT_TRUE(t5.has_value());
  EXPECT_EQ(t5->bytes, 4u * 2048 * (448 + 448));
  auto said = [](const KvCacheEstimate& e, std::string_view what) {
    for (const auto& a : e.assumptions) {
      if (a.find(what) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(said(*t5, "--encoder-tokens"));
  EXPECT_TRUE(said(*t5, "--decoder-tokens"));
  // The decoder's self-attention holds only its own tokens (the start token and those generated,
  // validation/FINDINGS.md 1h): 4 layers x 2048 B x (5 self + 448 cross).
  auto generated = EstimateKvCache(no_len, {.context_tokens = 448, .decoder_tokens = 5});
  ASSERT_TRUE(generated.has_value());
  EXPECT_EQ(generated->bytes, 4u * 2048 * (5 + 448));
  // A model with a stated encoder length: the context is the decoder's, --decoder-tokens changes
  // nothing.
  auto whisper = EstimateKvCache(m, {.context_tokens = 448, .decoder_tokens = 5});
  ASSERT_TRUE(whisper.has_value());
  EXPECT_EQ(whisper->bytes, e->bytes);
}

TEST(KvCacheTest, MissingShapeIsAnError) {
  Model m;
  m.name = "empty";
  auto e = EstimateKvCache(m, {});
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("empty"), std::string::npos);
}

// The engines' own words: fp8_e4m3 / fp8_e5m2 are fp8 (one byte per element either way);
// fp8_ds_mla and nvfp4 are refused, each naming why.
TEST(KvCacheTest, EngineKvDtypeWords) {
  EXPECT_EQ(ParseKvDtype("fp8_e4m3").value(), KvDtype::kFp8);
  EXPECT_EQ(ParseKvDtype("fp8_e5m2").value(), KvDtype::kFp8);
  EXPECT_EQ(ParseKvDtype("q8_0").value(), KvDtype::kInt8);
  auto ds = ParseKvDtype("fp8_ds_mla");
  ASSERT_FALSE(ds);
  EXPECT_EQ(ds.error().message,
            "--kv-dtype fp8_ds_mla: pass --kv-dtype fp8 (vLLM and SGLang store an fp8 cache of "
            "DeepSeek-V3.2 as fp8_ds_mla, 656 bytes per token and layer)");
  auto fp4 = ParseKvDtype("nvfp4");
  ASSERT_FALSE(fp4);
  EXPECT_TRUE(fp4.error().message.starts_with("--kv-dtype nvfp4: memfit does not model"));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
