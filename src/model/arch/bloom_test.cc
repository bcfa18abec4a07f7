#include <gtest/gtest.h>

#include "model/arch/decoder_test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildText;

TEST(BloomBuilder, TinyModelCountsByHand) {
  auto model = BuildText(R"({"model_type": "bloom", "architectures": ["BloomForCausalLM"],
    "torch_dtype": "bfloat16", "vocab_size": 10, "n_embed": 8, "n_layer": 2,
    "num_attention_heads": 2})");
  ASSERT_TRUE(model) << model.error().message;
  // word_embeddings 80, word_embeddings_layernorm 16; per layer: input_layernorm 16,
  // query_key_value 8*24+24 = 216, dense 72, post_attention_layernorm 16,
  // dense_h_to_4h 8*32+32 = 288, dense_4h_to_h 264 -> 872; two layers 1744; ln_f 16.
  // 80 + 16 + 1744 + 16 = 1856; lm_head tied; ALiBi: no buffers.
  auto totals = ComputeTotals(*model);
  EXPECT_EQ(totals.parameters, 1856u);
  EXPECT_EQ(totals.stored_bytes, 1856u * 2);
  EXPECT_EQ(totals.buffer_bytes, 0u);
  EXPECT_EQ(model->hp.head_dim, 4u);
  // Token classification: classifier Linear(8, 2) with bias = 18.
  auto tok = BuildText(R"({"model_type": "bloom", "architectures": ["BloomForTokenClassification"],
    "vocab_size": 10, "hidden_size": 8, "n_layer": 2, "n_head": 2})");
  ASSERT_TRUE(tok) << tok.error().message;
  EXPECT_EQ(ComputeTotals(*tok).parameters, 1856u + 18);
}

TEST(BloomBuilder, HostileConfigNamesTheField) {
  auto bad = BuildText(R"({"model_type": "bloom", "vocab_size": 10, "n_embed": 9, "n_layer": 2,
    "num_attention_heads": 2})");
  testing::ExpectErrorContains(bad, "n_embed");
  auto missing = BuildText(R"({"model_type": "bloom", "vocab_size": 10, "n_embed": 8,
    "num_attention_heads": 2})");
  testing::ExpectErrorContains(missing, "n_layer");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
