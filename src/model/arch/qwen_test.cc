#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyQwenV1() {
  return testing::TinyDecoderWith("qwen",
                                  {{"architectures", {"QWenLMHeadModel"}},
                                   {"kv_channels", 4},
                                   {"no_bias", true},
                                   {"num_key_value_heads", nullptr},
                                   {"max_position_embeddings", nullptr}});
}

// Per block: ln_1 8, c_attn 8x24 + 24 = 216, c_proj 8x8 = 64, ln_2 8, w1 and w2 8x6 = 48 each,
// mlp.c_proj 6x8 = 48: 440. Two blocks 880 + wte 80 + ln_f 8 + lm_head 80 = 1048.
// Buffers (not stored): logn_tensor 32767 float32 per block, inv_freq [2].
TEST(QwenV1Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyQwenV1(), 1048u, 1048u * 4);
  ASSERT_TRUE(m);
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.buffer_bytes, 2u * 32767 * 4 + 2 * 4);
  EXPECT_EQ(m->hp.intermediate_size, 6u);
  EXPECT_EQ(m->hp.head_dim, 4u);
  testing::ExpectShape(*m, "transformer.h.1.attn.c_attn.weight", {24, 8});
  // No dtype at all ("auto"): bfloat16 assumed and said.
  auto j = TinyQwenV1();
  j.erase("torch_dtype");
  j["bf16"] = false;
  auto autodtype = BuildJson(j);
  ASSERT_TRUE(autodtype);
  EXPECT_EQ(ComputeTotals(*autodtype).stored_bytes, 1048u * 2);
  EXPECT_FALSE(autodtype->assumptions.empty());
  j["fp32"] = true;
  EXPECT_EQ(ComputeTotals(*BuildJson(j)).stored_bytes, 1048u * 4);
}

TEST(QwenV1Builder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyQwenV1(), {{"kv_channels", nullptr}}, "kv_channels");
  testing::ExpectPatchRejected(TinyQwenV1(), {{"intermediate_size", 13}}, "intermediate_size");
  testing::ExpectPatchRejected(TinyQwenV1(), {{"num_attention_heads", 0}}, "num_attention_heads");
  testing::ExpectPatchRejected(
      TinyQwenV1(),
      {{"kv_channels", uint64_t{1} << 40}, {"num_attention_heads", uint64_t{1} << 30}}, "");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
