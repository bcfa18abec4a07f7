#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

// Tiny internlm2 (bias on): attention_norm 8, wqkv 16x8 + 16 = 144, wo 64 + 8 = 72, ffn_norm 8,
// w1/w3/w2 288: 520 per layer; 1040 + tok_embeddings 80 + norm 8 + output 80 = 1208.
TEST(InternLm2Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyDecoder("internlm2"), 1208u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.0.attention.wqkv.weight", {16, 8});
  EXPECT_TRUE(FindTensor(*m, "output.weight")->in_head);
}

TEST(InternLm2Builder, HostileConfigsNameTheField) {
  testing::ExpectHostileRejected("internlm2");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
