#include <gtest/gtest.h>

#include "model/arch/decoder_test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildText;
using testing::FindTensor;

TEST(GptBigcodeBuilder, TinyMultiQueryModelCountsByHand) {
  auto model = BuildText(R"({"model_type": "gpt_bigcode", "architectures": ["GPTBigCodeForCausalLM"],
    "torch_dtype": "bfloat16", "vocab_size": 10, "n_embd": 8, "n_layer": 2, "n_head": 2,
    "n_positions": 4, "multi_query": true})");
  ASSERT_TRUE(model) << model.error().message;
  // wte 80, wpe 32; per layer: ln_1 16, c_attn Linear(8, 8 + 2*4 = 16) 128+16 = 144,
  // c_proj 72, ln_2 16, c_fc 8*32+32 = 288, c_proj 264 -> 800; two layers 1600; ln_f 16.
  // 80 + 32 + 1600 + 16 = 1728; lm_head tied.
  auto totals = ComputeTotals(*model);
  EXPECT_EQ(totals.parameters, 1728u);
  EXPECT_EQ(totals.stored_bytes, 1728u * 2);
  // One model-level causal mask: bool 4*4 = 16 bytes.
  EXPECT_EQ(totals.buffer_bytes, 16u);
  const Tensor* c_attn = FindTensor(*model, "transformer.h.0.attn.c_attn.weight");
  ASSERT_NE(c_attn, nullptr);
  EXPECT_EQ(c_attn->shape, (std::vector<uint64_t>{16, 8}));  // nn.Linear: [out, in]
  EXPECT_EQ(model->hp.layers[0].num_kv_heads, 1u);
  // Without multi-query: c_attn 8*24+24 = 216, 72 more per layer.
  auto mha = BuildText(R"({"model_type": "gpt_bigcode", "vocab_size": 10, "n_embd": 8,
    "n_layer": 2, "n_head": 2, "n_positions": 4, "multi_query": false})");
  ASSERT_TRUE(mha) << mha.error().message;
  EXPECT_EQ(ComputeTotals(*mha).parameters, 1728u + 2 * 72);
  EXPECT_EQ(mha->hp.layers[0].num_kv_heads, 2u);
}

TEST(GptBigcodeBuilder, HostileConfigNamesTheField) {
  auto bad = BuildText(R"({"model_type": "gpt_bigcode", "vocab_size": 10, "n_embd": 8,
    "n_layer": 2, "n_head": 0, "n_positions": 4})");
  testing::ExpectErrorContains(bad, "n_head");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
