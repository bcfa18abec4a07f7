#include <gtest/gtest.h>

#include "model/arch/decoder_test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildText;
using testing::FindTensor;

TEST(OptBuilder, TinyModelCountsByHand) {
  auto model = BuildText(R"({"model_type": "opt", "architectures": ["OPTForCausalLM"],
    "torch_dtype": "float16", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 2,
    "num_attention_heads": 2, "ffn_dim": 16, "max_position_embeddings": 4,
    "word_embed_proj_dim": 8, "do_layer_norm_before": true})");
  ASSERT_TRUE(model) << model.error().message;
  // embed_tokens 80, embed_positions (4+2)*8 = 48, final_layer_norm 16; per layer:
  // q/k/v/out_proj 4*(64+8) = 288, self_attn_layer_norm 16, fc1 8*16+16 = 144,
  // fc2 16*8+8 = 136, final_layer_norm 16 -> 600; two layers 1200. 80+48+16+1200 = 1344.
  auto totals = ComputeTotals(*model);
  EXPECT_EQ(totals.parameters, 1344u);
  EXPECT_EQ(totals.buffer_bytes, 0u);
  EXPECT_EQ(FindTensor(*model, "lm_head.weight")->tied_to, "model.decoder.embed_tokens.weight");
  EXPECT_EQ(model->no_split_patterns.front(), "model.decoder.layers.*");
}

TEST(OptBuilder, ProjectedEmbeddingsWithoutFinalNorm) {
  // opt-350m's layout: word_embed_proj_dim 4 != hidden 8, post-norm (no final layer norm).
  // embed_tokens 10*4 = 40, positions 48, project_out 8*4 = 32, project_in 4*8 = 32, layers 1200.
  auto model = BuildText(R"({"model_type": "opt", "architectures": ["OPTForCausalLM"],
    "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
    "ffn_dim": 16, "max_position_embeddings": 4, "word_embed_proj_dim": 4,
    "do_layer_norm_before": false})");
  ASSERT_TRUE(model) << model.error().message;
  EXPECT_EQ(ComputeTotals(*model).parameters, 40u + 48 + 32 + 32 + 1200);
  EXPECT_EQ(FindTensor(*model, "model.decoder.final_layer_norm.weight"), nullptr);
}

TEST(OptBuilder, HostileConfigNamesTheField) {
  auto missing = BuildText(R"({"model_type": "opt", "vocab_size": 10, "hidden_size": 8,
    "num_hidden_layers": 2, "num_attention_heads": 2, "max_position_embeddings": 4})");
  testing::ExpectErrorContains(missing, "ffn_dim");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
