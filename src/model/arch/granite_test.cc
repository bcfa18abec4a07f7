#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

// Tiny granite (llama layout): 192 + 288 + 16 = 496 per layer; 992 + 80 + 8 + lm_head 80 = 1160.
TEST(GraniteBuilder, GraniteCountsByHand) {
  auto m = testing::BuildCounted(TinyDecoder("granite"), 1160u);
  ASSERT_TRUE(m);
}

// Tiny granitemoe (2 experts, intermediate 6, tied): attention 192, input_linear 2x12x8 = 192,
// output_linear 2x8x6 = 96, router 16, norms 16: 512 per layer; 1024 + 80 + 8 = 1112.
// granitemoeshared with shared_intermediate_size 5 adds 10x8 + 8x5 = 120 per layer.
TEST(GraniteBuilder, GraniteMoeFusedExperts) {
  auto j = TinyDecoder("granitemoe");
  j["intermediate_size"] = 6;
  j["num_local_experts"] = 2;
  j["num_experts_per_tok"] = 1;
  j["tie_word_embeddings"] = true;
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1112u);
  testing::ExpectShape(*m, "model.layers.0.block_sparse_moe.input_linear.weight", {2, 12, 8});
  j["model_type"] = "granitemoeshared";
  j["shared_intermediate_size"] = 5;
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1112u + 240);
  j.erase("num_local_experts");
  testing::ExpectError(j, "num_local_experts");
}

TEST(GraniteBuilder, HostileConfigsNameTheField) {
  testing::ExpectHostileRejected("granite");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
