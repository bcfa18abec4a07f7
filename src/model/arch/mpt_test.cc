#include <gtest/gtest.h>

#include "model/arch/decoder_test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildText;
using testing::FindTensor;

TEST(MptBuilder, TinyModelCountsByHand) {
  auto model = BuildText(R"({"model_type": "mpt", "architectures": ["MptForCausalLM"],
    "torch_dtype": "bfloat16", "vocab_size": 10, "d_model": 8, "n_layers": 2, "n_heads": 2,
    "expansion_ratio": 4, "max_seq_len": 16})");
  ASSERT_TRUE(model) << model.error().message;
  // wte 80; per layer (no biases anywhere): norm_1 8, Wqkv 8*24 = 192, out_proj 64, norm_2 8,
  // up_proj 8*32 = 256, down_proj 256 -> 784; two layers 1568; norm_f 8. 80 + 1568 + 8 = 1656.
  auto totals = ComputeTotals(*model);
  EXPECT_EQ(totals.parameters, 1656u);
  EXPECT_EQ(totals.buffer_bytes, 0u);
  EXPECT_EQ(FindTensor(*model, "transformer.blocks.0.norm_1.bias"), nullptr);
  EXPECT_EQ(model->no_split_patterns.front(), "transformer.blocks.*");
}

TEST(MptBuilder, HostileConfigNamesTheField) {
  auto bad = BuildText(R"({"model_type": "mpt", "vocab_size": 10, "d_model": 8, "n_layers": 2,
    "n_heads": 2, "expansion_ratio": 0})");
  testing::ExpectErrorContains(bad, "expansion_ratio");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
