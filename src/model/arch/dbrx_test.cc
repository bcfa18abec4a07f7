// DBRX (dbrx.cc): a hand-counted two-layer config, the buffers of each transformers version, a
// hostile nested key, and databricks/dbrx-instruct's published count.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyDbrx() {
  return {{"model_type", "dbrx"}, {"architectures", {"DbrxForCausalLM"}}, {"vocab_size", 10},
          {"d_model", 8}, {"n_heads", 2}, {"n_layers", 2}, {"max_seq_len", 16},
          {"attn_config", {{"kv_n_heads", 1}}},
          {"ffn_config", {{"ffn_hidden_size", 3}, {"moe_num_experts", 2}, {"moe_top_k", 1}}},
          {"torch_dtype", "float32"}};
}

// head_dim 8 / 2 = 4. Per block: norm_1 8, Wqkv 8 x (8 + 2 x 1 x 4) = 128, out_proj 64, norm_2 8,
// router 2 x 8 = 16, w1 / v1 / w2 3 x (2 x 3) x 8 = 144: 368. 2 x 368 + wte 80 + norm_f 8 +
// lm_head 80 = 904.
TEST(DbrxBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyDbrx(), 904u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "transformer.blocks.1.ffn.experts.mlp.w2", {6, 8});
  EXPECT_NE(FindTensor(*m, "transformer.blocks.0.norm_attn_norm.attn.Wqkv.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "transformer.blocks.0.norm_attn_norm.norm_1.bias"), nullptr);
  EXPECT_TRUE(m->hp.layers[0].moe);
  EXPECT_EQ(m->hp.num_kv_heads, 1u);
  // 5.x: one transformer.rotary_emb.inv_freq [2]; 4.42: one per attention module.
  EXPECT_NE(FindTensor(*m, "transformer.rotary_emb.inv_freq"), nullptr);
  auto old = BuildJson(TinyDbrx(), {.buffers = BufferConvention::kTransformers442});
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_EQ(ComputeTotals(*old).buffer_bytes, 2u * 2 * 4);
}

TEST(DbrxBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyDbrx(), {{"attn_config", {{"kv_n_heads", 3}}}}, "kv_n_heads");
  testing::ExpectPatchRejected(TinyDbrx(), {{"ffn_config", {{"moe_num_experts", "many"}}}},
                               "moe_num_experts");
  testing::ExpectPatchRejected(TinyDbrx(), {{"d_model", nullptr}}, "d_model");
}

// databricks/dbrx-instruct config.json (as quoted in the MLX port's tests): d_model 6144, 48
// heads, kv_n_heads 8, 40 layers, 16 experts of 10,752, vocab 100,352, untied. Per block:
// Wqkv 6144 x (6144 + 2048) = 50,331,648, out_proj 37,748,736, norms 12,288, router 98,304,
// experts 3 x 16 x 10752 x 6144 = 3,170,893,824: 3,259,084,800; x 40 = 130,363,392,000; + wte
// and lm_head 2 x 100352 x 6144 = 1,233,125,376 + norm_f 6,144 = 131,596,523,520 (132B).
TEST(DbrxBuilder, DbrxInstructCountsByHand) {
  auto m = BuildJson({{"model_type", "dbrx"}, {"architectures", {"DbrxForCausalLM"}},
                      {"vocab_size", 100352}, {"d_model", 6144}, {"n_heads", 48},
                      {"n_layers", 40}, {"max_seq_len", 32768},
                      {"attn_config", {{"kv_n_heads", 8}, {"clip_qkv", 8}, {"rope_theta", 500000}}},
                      {"ffn_config", {{"ffn_act_fn", {{"name", "silu"}}}, {"ffn_hidden_size", 10752},
                                      {"moe_num_experts", 16}, {"moe_top_k", 4}}},
                      {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"}});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 131596523520u);
  EXPECT_EQ(m->hp.experts_per_token, 4u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
