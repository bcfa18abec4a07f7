// Nemotron-NAS (DeciLM block_configs): a tiny config counted by hand with each kind of block,
// the real Llama-3.3-Nemotron-Super-49B config against the reference formula, hostile configs.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::ExpectError;
using testing::FindTensor;
using testing::TinyDecoder;

nlohmann::json Block(nlohmann::json attention, nlohmann::json ffn) {
  return {{"attention", std::move(attention)}, {"ffn", std::move(ffn)}};
}

nlohmann::json TinyNas() {
  auto j = TinyDecoder("nemotron-nas");
  j["architectures"] = {"DeciLMForCausalLM"};
  j["num_hidden_layers"] = 3;
  j.erase("intermediate_size");
  j["num_key_value_heads"] = nullptr;  // as the real config: per block instead
  j["block_configs"] = {
      Block({{"n_heads_in_group", 2}, {"no_op", false}, {"replace_with_linear", false}},
            {{"ffn_mult", 1.5}, {"no_op", false}, {"replace_with_linear", false}}),
      Block({{"n_heads_in_group", nullptr}, {"no_op", true}},
            {{"ffn_mult", nullptr}, {"replace_with_linear", true}}),
      Block({{"replace_with_linear", true}}, {{"no_op", true}})};
  return j;
}

// hidden 8, 2 heads of 4. Layer 0: input norm 8, q 8x8 = 64, k and v 8 x 4 (2 heads a group: 1
// KV head) = 32 each, o 64; ffn_mult 1.5: int(2 x 1.5 x 8 / 3) = 8, rounded up to 256: post norm
// 8 + 3 x 8 x 256 = 6144; 6352 in all. Layer 1 (no attention, linear FFN): post norm 8 +
// mlp.linear_mlp 64 = 72. Layer 2 (linear attention, no FFN): input norm 8 + linear_attn 64 = 72.
// Embed 80 + final norm 8 + untied lm_head 80: 6664 parameters, float32: 26,656 bytes.
TEST(NemotronNasBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyNas(), 6664u, 26656u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.0.mlp.gate_proj.weight", {256, 8});
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.linear_mlp.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.1.input_layernorm.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.2.self_attn.linear_attn.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.2.post_attention_layernorm.weight"), nullptr);
  ASSERT_EQ(m->hp.layers.size(), 3u);
  testing::ExpectLayer(
      m->hp, 0, {.attention = AttentionKind::kFull, .num_kv_heads = 1u, .intermediate_size = 256u});
  testing::ExpectLayer(m->hp, 1, {.attention = AttentionKind::kNone});
  testing::ExpectLayer(m->hp, 2, {.attention = AttentionKind::kNone});
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
}

TEST(NemotronNasBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyNas(), {{"block_configs", nullptr}}, "block_configs");
  testing::ExpectPatchRejected(TinyNas(), {{"num_hidden_layers", 4}}, "block_configs");
  auto j = TinyNas();
  j["block_configs"][0]["attention"]["n_heads_in_group"] = 3;
  ExpectError(j, "n_heads_in_group");
  j = TinyNas();
  j["block_configs"][0]["attention"].erase("n_heads_in_group");
  ExpectError(j, "n_heads_in_group");
  j = TinyNas();
  j["block_configs"][0]["ffn"].erase("ffn_mult");
  ExpectError(j, "ffn_mult");
  j = TinyNas();
  j["block_configs"][0]["ffn"]["ffn_mult"] = 1e300;
  ExpectError(j, "ffn_mult");
  j = TinyNas();
  j["block_configs"][0]["ffn"]["ffn_mult"] = -1;
  ExpectError(j, "ffn_mult");
  j = TinyNas();
  j["block_configs"][1] = "attention";
  ExpectError(j, "block_configs[1]");
  j = TinyNas();
  j["block_configs"][2].erase("ffn");
  ExpectError(j, "ffn");
  testing::ExpectPatchRejected(TinyNas(), {{"hidden_size", nullptr}}, "hidden_size");
  testing::ExpectPatchRejected(TinyNas(), {{"vocab_size", uint64_t{1} << 50}}, "vocab_size");
}

// nvidia/Llama-3_3-Nemotron-Super-49B-v1: 80 blocks, 49 with GQA attention (8 KV heads of 128:
// q/o 8192^2, k/v 8192 x 1024, input norm), 31 without; FFN widths from ffn_mult 5.25 -> 28672,
// 2.625 -> 14336, 1.3125 -> 7168, 1.0 -> int(5461.33) = 5461 -> 5632, 0.5 -> 2730 -> 2816,
// 3.28125 -> 17920. With the untied 128256 x 8192 embedding and head and the final norm:
// 49,867,145,216 parameters (the card: 49B; the Hub: 49.9B), bfloat16: 99,734,290,432 bytes.
TEST(NemotronNasBuilder, RealSuper49B) {
  auto m = testing::BuildEvalConfig("recent/nvidia__Llama-3_3-Nemotron-Super-49B-v1");
  if (!m) GTEST_SKIP() << "../shared/eval/recent/nvidia__Llama-3_3-Nemotron-Super-49B-v1 is absent";
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 49867145216u);
  EXPECT_EQ(t.stored_bytes, 99734290432u);
  size_t attention = 0;
  for (const auto& l : m->hp.layers) attention += l.attention == AttentionKind::kFull;
  EXPECT_EQ(attention, 49u);
  EXPECT_EQ(m->hp.num_kv_heads, 8u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
