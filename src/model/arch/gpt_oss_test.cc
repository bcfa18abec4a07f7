#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"
#include "formats/hf_config_json.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

nlohmann::json TinyGptOss() {
  auto j = TinyDecoder("gpt_oss");
  j["head_dim"] = 4;
  j["intermediate_size"] = 4;
  j["num_local_experts"] = 2;
  j["num_experts_per_tok"] = 1;
  j["sliding_window"] = 4;
  return j;
}

// Unquantized: q 64+8, k 32+4, v 32+4, o 64+8, sinks 2 (=218), router 16+2, experts gate_up
// 2x8x8 = 128 + bias 16, down 2x4x8 = 64 + bias 16 (=224), norms 16: 476 per layer;
// 952 + 80 + 8 + lm_head 80 = 1120. Layer 0 slides, layer 1 is global.
TEST(GptOssBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyGptOss(), 1120u);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kSliding);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kFull);
}

// MXFP4 experts with hidden 32, intermediate 32, 1 expert: gate_up_proj_blocks [1, 64, 1, 16]
// uint8 = 1024 bytes, scales [1, 64, 1]; down_proj_blocks [1, 32, 1, 16].
TEST(GptOssBuilder, Mxfp4ExpertsAsStored) {
  auto j = TinyGptOss();
  j["hidden_size"] = 32;
  j["intermediate_size"] = 32;
  j["num_local_experts"] = 1;
  j["quantization_config"] = {{"quant_method", "mxfp4"},
                              {"modules_to_not_convert", {"model.layers.*.self_attn", "lm_head"}}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  const Tensor* blocks = FindTensor(*m, "model.layers.0.mlp.experts.gate_up_proj_blocks");
  ASSERT_NE(blocks, nullptr);
  EXPECT_EQ(blocks->bytes, 1024u);
  testing::ExpectShape(*m, "model.layers.0.mlp.experts.down_proj_scales", {1, 32, 1});
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mlp.experts.gate_up_proj"), nullptr);
  j["hidden_size"] = 40;
  testing::ExpectError(j, "divisible by 32");
}

TEST(GptOssBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyGptOss(), {{"num_local_experts", nullptr}}, "num_local_experts");
  testing::ExpectPatchRejected(TinyGptOss(), {{"num_attention_heads", 0}}, "num_attention_heads");
  testing::ExpectPatchRejected(TinyGptOss(), {{"vocab_size", uint64_t{1} << 50}}, "vocab_size");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
