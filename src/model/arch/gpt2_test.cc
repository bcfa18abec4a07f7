#include <gtest/gtest.h>

#include "model/arch/decoder_test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildText;
using testing::FindTensor;

constexpr std::string_view kTinyGpt2 = R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
  "torch_dtype": "float32", "vocab_size": 10, "n_embd": 8, "n_layer": 2, "n_head": 2,
  "n_positions": 4, "n_inner": null})";

TEST(Gpt2Builder, TinyModelCountsByHand) {
  auto model = BuildText(kTinyGpt2);
  ASSERT_TRUE(model) << model.error().message;
  // wte 10*8 = 80, wpe 4*8 = 32; per layer: ln_1 16, c_attn 8*24+24 = 216, c_proj 8*8+8 = 72,
  // ln_2 16, c_fc 8*32+32 = 288, c_proj 32*8+8 = 264 -> 872; two layers 1744; ln_f 16.
  // 80 + 32 + 1744 + 16 = 1872, lm_head tied to wte (not counted again).
  auto totals = ComputeTotals(*model);
  EXPECT_EQ(totals.parameters, 1872u);
  EXPECT_EQ(totals.head_parameters, 0u);
  EXPECT_EQ(totals.stored_bytes, 1872u * 4);
  // Buffers per attention: causal mask bool 1*1*4*4 = 16 B + masked_bias float32 4 B.
  EXPECT_EQ(totals.buffer_bytes, 2u * (16 + 4));
  // Conv1D weights are [in, out].
  testing::ExpectShape(*model, "transformer.h.0.attn.c_attn.weight", {8, 24});
  const Tensor* lm_head = FindTensor(*model, "lm_head.weight");
  ASSERT_NE(lm_head, nullptr);
  EXPECT_EQ(lm_head->tied_to, "transformer.wte.weight");
  EXPECT_FALSE(lm_head->stored);
  EXPECT_EQ(model->base_model_prefix, "transformer.");
  ASSERT_EQ(model->hp.layers.size(), 2u);
  EXPECT_EQ(model->hp.layers[1].num_kv_heads, 2u);
  EXPECT_EQ(model->hp.layers[1].head_dim_k, 4u);
  EXPECT_EQ(model->hp.intermediate_size, 32u);
}

TEST(Gpt2Builder, HeadsAndCrossAttention) {
  // Sequence classification with 3 labels: score 8*3 = 24, no bias: 1872 + 24.
  auto seq = BuildText(R"({"model_type": "gpt2", "architectures": ["GPT2ForSequenceClassification"],
    "vocab_size": 10, "n_embd": 8, "n_layer": 2, "n_head": 2, "n_positions": 4, "num_labels": 3})");
  ASSERT_TRUE(seq) << seq.error().message;
  EXPECT_EQ(ComputeTotals(*seq).parameters, 1872u + 24);
  EXPECT_EQ(ComputeTotals(*seq).head_parameters, 24u);
  // No torch_dtype: float32 assumed and said.
  EXPECT_FALSE(seq->assumptions.empty());
  // Cross attention adds per layer c_attn 8*16+16 = 144, q_attn 72, c_proj 72, ln 16 = 304.
  auto cross = BuildText(R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
    "vocab_size": 10, "n_embd": 8, "n_layer": 2, "n_head": 2, "n_positions": 4,
    "add_cross_attention": true})");
  ASSERT_TRUE(cross) << cross.error().message;
  EXPECT_EQ(ComputeTotals(*cross).parameters, 1872u + 2 * 304);
  // Double heads: lm_head tied + multiple_choice_head.summary Linear(8, 2 labels) = 18.
  auto dbl = BuildText(R"({"model_type": "gpt2", "architectures": ["GPT2DoubleHeadsModel"],
    "vocab_size": 10, "n_embd": 8, "n_layer": 2, "n_head": 2, "n_positions": 4})");
  ASSERT_TRUE(dbl) << dbl.error().message;
  EXPECT_EQ(ComputeTotals(*dbl).parameters, 1872u + 18);
}

TEST(Gpt2Builder, HostileConfigNamesTheField) {
  auto bad = BuildText(R"({"model_type": "gpt2", "vocab_size": 10, "n_embd": 10, "n_layer": 2,
    "n_head": 3, "n_positions": 4})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("n_embd"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("n_head"), std::string::npos) << bad.error().message;
  auto missing = BuildText(R"({"model_type": "gpt2", "n_embd": 8, "n_layer": 2, "n_head": 2,
    "n_positions": 4})");
  testing::ExpectErrorContains(missing, "vocab_size");
  auto head = BuildText(R"({"model_type": "gpt2", "architectures": ["GPT2ForImageMagic"],
    "vocab_size": 10, "n_embd": 8, "n_layer": 2, "n_head": 2, "n_positions": 4})");
  testing::ExpectErrorContains(head, "GPT2ForImageMagic");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
