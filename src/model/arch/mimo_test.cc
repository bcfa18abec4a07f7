// MiMo-7B (model_type "mimo", remote code modeling_mimo.py): Qwen2 plus MiMoMTPLayers under
// model.mtp_layers, counted by hand on a tiny config and on the real MiMo-7B-Base config.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::FindTensor;
using testing::TinyDecoder;

nlohmann::json TinyMiMo() {
  auto j = TinyDecoder("mimo");
  j["architectures"] = {"MiMoForCausalLM"};
  j["num_nextn_predict_layers"] = 1;
  j["attention_bias"] = true;  // as MiMo's config says; Qwen2Attention ignores it for o_proj
  return j;
}

// Qwen2 layer: input norm 8, q 8x8 + 8 = 72, k 8x4 + 4 = 36, v 36, o 64 (no bias), gate/up/down
// 3 x 8 x 12 = 288, post norm 8: 512. Two layers 1024 + embed 80 + norm 8 + untied lm_head 80:
// 1192. The MTP layer: token/hidden/final norms 24 + input_proj 16 x 8 = 128 + a layer 512 =
// 664. 1856 parameters, float32: 7424 stored bytes.
TEST(MiMoBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyMiMo(), 1856u, 7424u);
  ASSERT_TRUE(m);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.o_proj.bias"), nullptr);
  ASSERT_NE(FindTensor(*m, "model.layers.0.self_attn.q_proj.bias"), nullptr);
  const Tensor* proj = FindTensor(*m, "model.mtp_layers.0.input_proj.weight");
  ASSERT_NE(proj, nullptr);
  EXPECT_EQ(proj->shape, (std::vector<uint64_t>{8, 16}));
  EXPECT_TRUE(proj->loaded);
  EXPECT_NE(FindTensor(*m, "model.mtp_layers.0.self_attn.k_proj.bias"), nullptr);
  EXPECT_EQ(m->hp.layers.size(), 2u);  // the MTP layer keeps no cache in plain decoding
  EXPECT_EQ(m->hp.num_mtp_layers, 1u);
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
}

TEST(MiMoBuilder, HostileConfigsNameTheField) {
  testing::ExpectHostileRejected("mimo");
  testing::ExpectPatchRejected(TinyMiMo(), {{"num_nextn_predict_layers", uint64_t{1} << 40}},
                               "num_nextn_predict_layers");
  testing::ExpectPatchRejected(TinyMiMo(), {{"num_nextn_predict_layers", "one"}},
                               "num_nextn_predict_layers");
}

// XiaomiMiMo/MiMo-7B-Base: embed and lm_head 151680 x 4096 = 621,281,280 each; a layer: q
// 4096 x 4096 + 4096, k and v 4096 x 1024 + 1024, o 4096 x 4096, MLP 3 x 4096 x 11008, two norms:
// 177,223,680; 36 layers 6,380,052,480; final norm 4096: 7,622,619,136. The MTP layer: a layer +
// input_proj 8192 x 4096 + three norms = 210,790,400. 7,833,409,536 parameters (the card: "7B"
// for the model, 7.8B with MTP), bfloat16: 15,666,819,072 bytes.
TEST(MiMoBuilder, RealMiMo7BBase) {
  auto m = testing::BuildEvalConfig("recent/XiaomiMiMo__MiMo-7B-Base");
  if (!m) GTEST_SKIP() << "../shared/eval/recent/XiaomiMiMo__MiMo-7B-Base is absent";
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 7833409536u);
  EXPECT_EQ(t.stored_bytes, 15666819072u);
  EXPECT_EQ(m->model_type, "mimo");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
