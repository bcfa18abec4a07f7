#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

nlohmann::json TinyQwen2Moe() {
  auto j = TinyDecoder("qwen2_moe");
  j["num_experts"] = 2;
  j["num_experts_per_tok"] = 1;
  j["moe_intermediate_size"] = 3;
  j["shared_expert_intermediate_size"] = 5;
  return j;
}

// Per sparse layer: q 64+8, k 32+4, v 32+4, o 64 (=208), gate 16, experts 2x(3x8x3) = 144,
// shared expert 3x8x5 = 120, shared_expert_gate 8, norms 16: 512; 1024 + 80 + 8 + 80 = 1192.
// With mlp_only_layers [0], layer 0 is dense: 208 + 288 + 16 = 512 as well (by coincidence),
// so check the tensors instead.
TEST(Qwen2MoeBuilder, TinyConfigCountsByHand) {
  auto m = BuildJson(TinyQwen2Moe());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1192u);
  EXPECT_TRUE(m->hp.layers[0].moe);
  auto j = TinyQwen2Moe();
  j["mlp_only_layers"] = {0};
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_FALSE(m->hp.layers[0].moe);
  EXPECT_NE(FindTensor(*m, "model.layers.0.mlp.gate_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.shared_expert_gate.weight"), nullptr);
}

TEST(Qwen2MoeBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyQwen2Moe(), {{"moe_intermediate_size", nullptr}},
                               "moe_intermediate_size");
  testing::ExpectPatchRejected(TinyQwen2Moe(), {{"mlp_only_layers", {"zero"}}}, "mlp_only_layers");
  testing::ExpectPatchRejected(TinyQwen2Moe(), {{"num_attention_heads", 0}}, "num_attention_heads");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
