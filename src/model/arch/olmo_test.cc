#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

// Tiny olmo: no norm tensors; attention 192 + mlp 288 = 480 per layer; 960 + embed 80 +
// lm_head 80 = 1120.
TEST(OlmoBuilder, OlmoHasNoNormTensors) {
  auto m = testing::BuildCounted(TinyDecoder("olmo"), 1120u);
  ASSERT_TRUE(m);
  EXPECT_EQ(FindTensor(*m, "model.norm.weight"), nullptr);
}

// olmo2: + q_norm [8] + k_norm [4] + two RMSNorms 16 = 508 per layer; 1016 + 80 + 8 + 80 = 1184.
TEST(OlmoBuilder, Olmo2CountsByHand) {
  auto m = testing::BuildCounted(TinyDecoder("olmo2"), 1184u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.0.self_attn.k_norm.weight", {4});
}

// olmo3: olmo2's tensors (1184 parameters); without "layer_types" every 4th layer is global and
// the rest slide over "sliding_window" (default 4096).
TEST(OlmoBuilder, Olmo3IsOlmo2WithSlidingLayers) {
  auto j = TinyDecoder("olmo3");
  j["num_hidden_layers"] = 4;
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 4 * 508u + 168);
  ASSERT_EQ(m->hp.layers.size(), 4u);
  testing::ExpectLayer(m->hp, 0, {.attention = AttentionKind::kSliding, .window_tokens = 4096u});
  testing::ExpectLayer(m->hp, 3, {.attention = AttentionKind::kFull});
  j["layer_types"] = {"full_attention", "sliding_attention", "full_attention", "full_attention"};
  j["sliding_window"] = 16;
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kFull);
  EXPECT_EQ(m->hp.layers[1].window_tokens, 16u);
  testing::ExpectHostileRejected("olmo3");
}

// cohere: LayerNorm weight 8 + 192 + 288 = 488 per layer; 976 + 80 + 8 = 1064 (tied).
// use_qk_norm adds q_norm [2, 4] and k_norm [1, 4]: +12 per layer.
TEST(OlmoBuilder, CohereCountsByHand) {
  auto j = TinyDecoder("cohere");
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1064u);
  j["use_qk_norm"] = true;
  m = BuildJson(j);
  ASSERT_TRUE(m);
  EXPECT_EQ(ComputeTotals(*m).parameters, 1088u);
  j = TinyDecoder("cohere2");
  j["sliding_window"] = 4;
  j["sliding_window_pattern"] = 2;
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1064u);
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kSliding);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kFull);
}

TEST(OlmoBuilder, HostileConfigsNameTheField) {
  testing::ExpectHostileRejected("olmo");
  testing::ExpectHostileRejected("olmo2");
  testing::ExpectHostileRejected("cohere");
  testing::ExpectHostileRejected("cohere2");
}

// Olmo-3 releases (olmo3; vocab 100,278, untied, q_norm over the whole q projection, k_norm over
// the k projection, post-attention and post-feedforward RMSNorms). Published parameter counts:
// allenai/Olmo-3-1025-7B 7,298,011,136 (the Hub's safetensors count, quoted by a fine-tune's card
// and by a public benchmark table of loaded models); allenai/Olmo-3.1-32B-Instruct 32,233,522,176
// (a public probing course's model sheet, transformers' num_parameters()).
// 7B: layer 4 x 4,096^2 + 3 x 4,096 x 11,008 + 4 x 4,096 = 202,391,552; x 32 + 2 x 410,738,688
// (embed, lm_head) + 4,096 = 7,298,011,136.
// 32B: layer q/o 2 x 5,120^2 + k/v 2 x 1,024 x 5,120 + 3 x 5,120 x 27,648 + q_norm 5,120 + k_norm
// 1,024 + 2 x 5,120 = 487,604,224; x 64 + 2 x 513,423,360 + 5,120 = 32,233,522,176.
TEST(OlmoBuilder, Olmo3PublishedCounts) {
  nlohmann::json layer_types = nlohmann::json::array();
  for (int i = 0; i < 64; ++i)
    layer_types.push_back(i % 4 == 3 ? "full_attention" : "sliding_attention");
  nlohmann::json j = {{"model_type", "olmo3"},        {"architectures", {"Olmo3ForCausalLM"}},
                      {"vocab_size", 100278},         {"hidden_size", 4096},
                      {"intermediate_size", 11008},   {"num_hidden_layers", 32},
                      {"num_attention_heads", 32},    {"num_key_value_heads", 32},
                      {"sliding_window", 4096},       {"rope_theta", 500000},
                      {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"}};
  j["layer_types"] =
      nlohmann::json(std::vector<nlohmann::json>(layer_types.begin(), layer_types.begin() + 32));
  auto m = testing::BuildCounted(j, 7298011136u, 2 * 7298011136u);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hp.layers[3].attention, AttentionKind::kFull);
  EXPECT_EQ(m->hp.layers[4].window_tokens, 4096u);
  j["hidden_size"] = 5120;
  j["intermediate_size"] = 27648;
  j["num_hidden_layers"] = 64;
  j["num_attention_heads"] = 40;
  j["num_key_value_heads"] = 8;
  j["layer_types"] = layer_types;
  m = testing::BuildCounted(j, 32233522176u, 2 * 32233522176u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.0.self_attn.k_norm.weight", {1024});
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
