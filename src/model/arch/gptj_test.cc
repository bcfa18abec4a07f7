#include <gtest/gtest.h>

#include "model/arch/decoder_test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildText;
using testing::FindTensor;

constexpr std::string_view kTinyGptj = R"({"model_type": "gptj",
    "architectures": ["GPTJForCausalLM"], "torch_dtype": "float16", "vocab_size": 10,
    "n_embd": 8, "n_layer": 2, "n_head": 2, "n_positions": 4, "rotary_dim": 2,
    "tie_word_embeddings": false})";

TEST(GptjBuilder, TinyModelCountsByHand) {
  auto model = BuildText(kTinyGptj);
  ASSERT_TRUE(model) << model.error().message;
  // wte 80; per layer: ln_1 16, q/k/v/out_proj 4*64 = 256 (no biases), fc_in 8*32+32 = 288,
  // fc_out 32*8+8 = 264 -> 824; two layers 1648; ln_f 16; lm_head 10*8+10 = 90 (with bias).
  // 80 + 1648 + 16 + 90 = 1834.
  auto totals = ComputeTotals(*model);
  EXPECT_EQ(totals.parameters, 1834u);
  EXPECT_EQ(totals.head_parameters, 90u);
  // Per attention module (transformers >= 4.45): the sinusoidal table embed_positions, float32
  // [n_positions 4, rotary_dim 2] = 32 B, a plain attribute that is resident all the same.
  EXPECT_EQ(totals.buffer_bytes, 2u * 32);
  ASSERT_NE(FindTensor(*model, "transformer.h.1.attn.embed_positions"), nullptr);
  ASSERT_NE(FindTensor(*model, "lm_head.bias"), nullptr);
  EXPECT_EQ(model->hp.layers[0].head_dim_k, 4u);
  // transformers 4.42 (accelerate's reference): causal mask bool 16 B + masked_bias float32 4 B.
  auto old = BuildText(kTinyGptj, {.buffers = BufferConvention::kTransformers442});
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_EQ(ComputeTotals(*old).buffer_bytes, 2u * 20);
  EXPECT_EQ(FindTensor(*old, "transformer.h.1.attn.embed_positions"), nullptr);
}

// A null rotary_dim rotates the whole head: the table is n_embd wide (GPTJAttention's
// `pos_embd_dim = self.rotary_dim or self.embed_dim`): 4 x 8 x 4 = 128 B per layer.
TEST(GptjBuilder, NullRotaryDimMakesTheTableHiddenWide) {
  auto model = BuildText(R"({"model_type": "gptj", "vocab_size": 10, "n_embd": 8, "n_layer": 2,
    "n_head": 2, "n_positions": 4, "rotary_dim": null})");
  ASSERT_TRUE(model) << model.error().message;
  EXPECT_EQ(ComputeTotals(*model).buffer_bytes, 2u * 128);
}

TEST(GptjBuilder, HostileConfigNamesTheField) {
  auto missing = BuildText(R"({"model_type": "gptj", "vocab_size": 10, "n_embd": 8, "n_layer": 2,
    "n_positions": 4})");
  testing::ExpectErrorContains(missing, "n_head");
  auto huge = BuildText(R"({"model_type": "gptj", "vocab_size": 10, "n_embd": 8, "n_layer": 2,
    "n_head": 2, "n_positions": 4, "n_inner": -5})");
  testing::ExpectErrorContains(huge, "n_inner");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
