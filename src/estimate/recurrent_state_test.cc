// Hand-worked KV cache + recurrent state of hybrid models at 2 sequences x 32,768 tokens, from
// configs written in code with the real models' shapes (Nemotron-3-Nano-30B-A3B, Qwen3-Next-80B,
// Qwen3.5-35B-A3B, LFM2-1.2B), for transformers' and vLLM's layouts.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "formats/hf_config_json.h"
#include "memfit/estimate_inference.h"
#include "memfit/recurrent_state.h"
#include "memfit/text_hparams.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

Model FromConfig(const nlohmann::json& j) {
  auto config = HfConfig::FromJson(j, "config.json");
  EXPECT_TRUE(config) << config.error().message;
  auto text = ReadTextHyperparameters(*config);
  EXPECT_TRUE(text) << text.error().message;
  Model m;
  m.name = "test";
  m.hp = text->hp;
  return m;
}

const KvCacheOptions kTransformers{.context_tokens = 32768, .batch = 2,
                                   .model_dtype = Dtype::kBF16};
const KvCacheOptions kVllmUnpaged{.context_tokens = 32768, .batch = 2,
                                  .model_dtype = Dtype::kBF16, .conv_full_kernel = false,
                                  .recurrent_state_fp32 = false};

nlohmann::json NemotronNano() {
  return {{"model_type", "nemotron_h"}, {"hidden_size", 2688}, {"num_hidden_layers", 52},
          {"num_attention_heads", 32}, {"num_key_value_heads", 2}, {"head_dim", 128},
          {"vocab_size", 131072}, {"intermediate_size", 1856},
          {"hybrid_override_pattern", "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"},
          {"mamba_num_heads", 64}, {"mamba_head_dim", 64}, {"n_groups", 8},
          {"ssm_state_size", 128}, {"conv_kernel", 4}, {"mamba_ssm_cache_dtype", "float32"},
          {"n_routed_experts", 128}, {"moe_intermediate_size", 1856}};
}

// 23 Mamba2 layers: conv channels 64 x 64 + 2 x 8 x 128 = 6,144; SSM state 64 heads x 64 x 128
// = 524,288 float32 (mamba_ssm_cache_dtype) = 2,097,152 B. 6 attention layers: 2 KV heads x 128
// x 2 (K, V) x 2 B = 1,024 B per token.
TEST(RecurrentStateTest, NemotronHNanoAt2x32k) {
  Model m = FromConfig(NemotronNano());
  auto t = EstimateKvCache(m, kTransformers);
  ASSERT_TRUE(t) << t.error().message;
  // transformers: conv 4 x 6,144 x 2 B = 49,152 + 2,097,152 = 2,146,304 per layer and sequence.
  EXPECT_EQ(t->state_bytes, 2146304u * 23 * 2);
  EXPECT_EQ(t->bytes_per_token, 1024u * 6);
  EXPECT_EQ(t->bytes, 2146304u * 23 * 2 + 1024ull * 6 * 32768 * 2);  // 501,383,168
  auto v = EstimateKvCache(m, kVllmUnpaged);
  ASSERT_TRUE(v) << v.error().message;
  // vLLM: conv 3 x 6,144 x 2 B = 36,864 + 2,097,152 = 2,134,016.
  EXPECT_EQ(v->state_bytes, 2134016u * 23 * 2);
  EXPECT_EQ(v->bytes, 2134016u * 23 * 2 + 1024ull * 6 * 32768 * 2);  // 500,817,920
}

nlohmann::json Qwen3Next() {
  return {{"model_type", "qwen3_next"}, {"hidden_size", 2048}, {"num_hidden_layers", 48},
          {"num_attention_heads", 16}, {"num_key_value_heads", 2}, {"head_dim", 256},
          {"vocab_size", 151936}, {"intermediate_size", 5120}, {"full_attention_interval", 4},
          {"linear_num_key_heads", 16}, {"linear_num_value_heads", 32},
          {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128},
          {"linear_conv_kernel_dim", 4}, {"num_experts", 512}, {"moe_intermediate_size", 512}};
}

// 36 gated delta-net layers: conv channels 2 x 16 x 128 + 32 x 128 = 8,192; state 32 heads x
// 128 x 128 = 524,288 elements. 12 full-attention layers: 2 x 256 x 2 x 2 B = 2,048 B per token.
TEST(RecurrentStateTest, Qwen3NextAt2x32k) {
  Model m = FromConfig(Qwen3Next());
  auto t = EstimateKvCache(m, kTransformers);
  ASSERT_TRUE(t) << t.error().message;
  // transformers: conv 4 x 8,192 x 2 B = 65,536 + float32 state 2,097,152 = 2,162,688.
  EXPECT_EQ(t->state_bytes, 2162688u * 36 * 2);
  EXPECT_EQ(t->bytes, 2162688ull * 36 * 2 + 2048ull * 12 * 32768 * 2);  // 1,766,326,272
  auto v = EstimateKvCache(m, kVllmUnpaged);
  ASSERT_TRUE(v) << v.error().message;
  // vLLM, no mamba_ssm_cache_dtype: bf16 state. conv 3 x 8,192 x 2 = 49,152 + 1,048,576.
  EXPECT_EQ(v->state_bytes, 1097728u * 36 * 2);
  EXPECT_EQ(v->bytes, 1097728ull * 36 * 2 + 2048ull * 12 * 32768 * 2);  // 1,689,649,152
}

// vLLM's hybrid manager (HybridAttentionMambaModelConfig): attention block = 16 x
// ceil(1,097,728 / (16 x 2,048)) = 16 x 34 = 544 tokens (the block size vLLM logs for
// Qwen3-Next); each recurrent layer takes one page of 544 x 2,048 = 1,114,112 B per sequence;
// attention caches ceil(32,768 / 544) = 61 blocks = 33,184 tokens.
TEST(RecurrentStateTest, VllmPadsStatePagesToTheAttentionPage) {
  Model m = FromConfig(Qwen3Next());
  KvCacheOptions o = kVllmUnpaged;
  o.block_size = 16;
  o.pad_state_to_page = true;
  auto v = EstimateKvCache(m, o);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->block_size, 544u);
  EXPECT_EQ(v->state_bytes, 1114112u * 36 * 2);
  EXPECT_EQ(v->bytes, 1114112ull * 36 * 2 + 2048ull * 12 * 33184 * 2);  // 1,711,276,032
  EXPECT_FALSE(v->assumptions.empty());
}

// Qwen3.5-35B-A3B: 30 gated delta-net + 10 full layers (layer_types), same dims as Qwen3-Next,
// "mamba_ssm_dtype": "float32" in text_config.
TEST(RecurrentStateTest, Qwen35MoeAt2x32k) {
  nlohmann::json text = Qwen3Next();
  text.erase("full_attention_interval");
  text["num_hidden_layers"] = 40;
  text["mamba_ssm_dtype"] = "float32";
  text["model_type"] = "qwen3_5_moe_text";
  nlohmann::json types = nlohmann::json::array();
  for (int i = 0; i < 40; ++i) types.push_back((i + 1) % 4 == 0 ? "full_attention" : "linear_attention");
  text["layer_types"] = types;
  Model m = FromConfig({{"model_type", "qwen3_5_moe"}, {"text_config", text},
                        {"tie_word_embeddings", false}});
  auto t = EstimateKvCache(m, kTransformers);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->bytes, 2162688ull * 30 * 2 + 2048ull * 10 * 32768 * 2);  // 1,471,938,560
  auto v = EstimateKvCache(m, kVllmUnpaged);
  ASSERT_TRUE(v) << v.error().message;
  // vLLM: 49,152 + float32 state 2,097,152 = 2,146,304.
  EXPECT_EQ(v->bytes, 2146304ull * 30 * 2 + 2048ull * 10 * 32768 * 2);  // 1,470,955,520
}

// LFM2-1.2B: 10 short-conv layers of 2,048 channels, conv_L_cache 3; 6 attention layers with 8
// KV heads of 64: 2,048 B per token.
TEST(RecurrentStateTest, Lfm2At2x32k) {
  Model m = FromConfig({{"model_type", "lfm2"}, {"hidden_size", 2048},
                        {"num_hidden_layers", 16}, {"num_attention_heads", 32},
                        {"num_key_value_heads", 8}, {"vocab_size", 65536},
                        {"block_ff_dim", 12288}, {"conv_L_cache", 3},
                        {"full_attn_idxs", {2, 5, 8, 10, 12, 14}}});
  auto t = EstimateKvCache(m, kTransformers);
  ASSERT_TRUE(t) << t.error().message;
  // transformers: 3 x 2,048 x 2 B = 12,288 per layer and sequence.
  EXPECT_EQ(t->bytes, 12288ull * 10 * 2 + 2048ull * 6 * 32768 * 2);  // 805,552,128
  auto v = EstimateKvCache(m, kVllmUnpaged);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->bytes, 8192ull * 10 * 2 + 2048ull * 6 * 32768 * 2);  // 805,470,208
}

// DeepSeek-V3.2's hyperparameters (MLA with the DSA lightning indexer).
Model DeepseekV32() {
  return FromConfig({{"model_type", "deepseek_v32"}, {"hidden_size", 7168},
                     {"num_hidden_layers", 61}, {"num_attention_heads", 128},
                     {"num_key_value_heads", 128}, {"vocab_size", 129280},
                     {"intermediate_size", 18432}, {"kv_lora_rank", 512},
                     {"qk_rope_head_dim", 64}, {"qk_nope_head_dim", 128},
                     {"v_head_dim", 128}, {"index_head_dim", 128}, {"index_n_heads", 64}});
}

// DeepSeek-V3.2 shape in vLLM: MLA latent 512 + 64 = 576 x 2 B = 1,152 B per token and layer,
// plus the DSA indexer's key: 128 fp8 + one float32 scale = 132 B.
TEST(RecurrentStateTest, DsaIndexerKeysBesideTheMlaLatent) {
  Model m = DeepseekV32();
  KvCacheOptions o{.context_tokens = 1000, .mla_latent = true, .fp8_indexer = true};
  auto v = EstimateKvCache(m, o);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->bytes, (1152ull + 132) * 61 * 1000);
  o.fp8_indexer = false;  // transformers' layout keeps the indexer keys in the model dtype
  o.mla_latent = false;   // and K/V decompressed: 128 heads x (192 + 128) x 2 B
  auto t = EstimateKvCache(m, o);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->bytes, (128ull * 320 * 2 + 128 * 2) * 61 * 1000);
}

// The same model with an fp8 cache on a paged engine: FlashMLA's "fp8_ds_mla" layout (vLLM
// turns --kv-cache-dtype fp8 into it for DeepSeek-V3.2; SGLang's NSATokenToKVPool): the latent
// 512 x 1 B + 512 / 128 float32 scales (16 B) + the rope part 64 x 2 B (128 B) = 656 B per token
// and layer, not 576 x 1 B; the indexer keys stay 132 B.
TEST(RecurrentStateTest, DeepseekV32Fp8IsTheDsMlaLayout) {
  Model m = DeepseekV32();
  m.model_type = "deepseek_v32";  // FromConfig reads the hyperparameters only
  KvCacheOptions o{.context_tokens = 1000, .dtype = KvDtype::kFp8, .mla_latent = true,
                   .fp8_indexer = true};
  auto v = EstimateKvCache(m, o);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->bytes, (656ull + 132) * 61 * 1000);
  EXPECT_EQ(v->bytes_per_token, 656ull * 61);  // the attention pages' part
  // Another MLA family (DeepSeek-V3) keeps the plain fp8 latent: 576 B.
  m.model_type = "deepseek_v3";
  auto v3 = EstimateKvCache(m, o);
  ASSERT_TRUE(v3) << v3.error().message;
  EXPECT_EQ(v3->bytes, (576ull + 132) * 61 * 1000);
}

// DeepSeek-V4: a 128-token window on every layer, one shared K=V entry of 512 per
// compress_ratio tokens, indexer keys on ratio-4 layers.
TEST(RecurrentStateTest, DeepseekV4CompressedEntries) {
  Model m = FromConfig({{"model_type", "deepseek_v4"}, {"hidden_size", 4096},
                        {"num_hidden_layers", 3}, {"num_attention_heads", 64},
                        {"num_key_value_heads", 1}, {"head_dim", 512}, {"vocab_size", 1000},
                        {"sliding_window", 128}, {"compress_ratios", {0, 4, 128}},
                        {"index_head_dim", 128}});
  auto e = EstimateKvCache(m, {.context_tokens = 1024, .model_dtype = Dtype::kBF16});
  ASSERT_TRUE(e) << e.error().message;
  // Window: 128 tokens x 512 x 2 B = 131,072 per layer (x3). Ratio 4: 256 entries x 1,024 B
  // = 262,144 + indexer 256 x 128 x 2 B = 65,536. Ratio 128: 8 x 1,024 = 8,192.
  EXPECT_EQ(e->bytes, 131072u * 3 + 262144 + 65536 + 8192);
}

// The formula llama.cpp uses (n_embd_r, n_embd_s) is the shared one with d_conv - 1 steps.
TEST(RecurrentStateTest, LlamaCppFormulaIsTheSharedOne) {
  Hyperparameters hp;
  hp.ssm_conv_kernel = 4;
  hp.ssm_inner_size = 4096;
  hp.ssm_state_size = 128;
  hp.ssm_group_count = 8;
  RecurrentState s = RecurrentStateFromGguf(hp);
  RecurrentElements e = RecurrentStateElements(s, s.conv_kernel - 1);
  EXPECT_EQ(e.conv.value(), 3u * (4096 + 2 * 8 * 128));
  EXPECT_EQ(e.recurrent.value(), 128u * 4096);
  // Tensor parallel: channels and heads split (rounded up).
  RecurrentElements tp = RecurrentStateElements(s, 3, 4);
  EXPECT_EQ(tp.conv.value(), 3u * 6144 / 4);
  EXPECT_EQ(tp.recurrent.value(), 1024u * 128);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
