// OLMo Hybrid (olmo_hybrid; issue 30): gated DeltaNet layers between olmo3 attention layers,
// counted by hand on a two-layer config, with the per-layer state and KV cache.

#include <gtest/gtest.h>

#include "memfit/estimate_inference.h"
#include "memfit/hf_config.h"
#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

// Layer 0 gated DeltaNet, layer 1 attention; hidden 8, 2 heads of 4 (2 KV heads), MLP 6;
// linear: 2 key heads of 2, 2 value heads of 4, conv kernel 4; float32.
nlohmann::json TinyOlmoHybrid() {
  auto j = testing::TinyDecoderWith(
      "olmo_hybrid", {{"architectures", {"OlmoHybridForCausalLM"}},
                      {"intermediate_size", 6},
                      {"layer_types", {"linear_attention", "full_attention"}},
                      {"linear_num_key_heads", 2},
                      {"linear_key_head_dim", 2},
                      {"linear_num_value_heads", 2},
                      {"linear_value_head_dim", 4},
                      {"linear_conv_kernel_dim", 4},
                      {"max_position_embeddings", 64},
                      {"num_key_value_heads", nullptr}});
  j["rope_parameters"] =
      nullptr; // stated as null, which a merge patch cannot say
  return j;
}

// Layer 0: input_layernorm 8; q and k [4, 8] 32 each, v [8, 8] 64, a and b [2, 8] 16 each,
// g [8, 8] 64, o [8, 8] 64; conv1d [2 x 4 + 8 = 16, 1, 4] 64; A_log and dt_bias [2] 2 each,
// o_norm [4] 4 -> 368; MLP gate/up [6, 8] 48 each, down [8, 6] 48 -> 144; post_attention_layernorm
// 8 -> 520. Layer 1: q, k, v, o [8, 8] 64 each, q_norm and k_norm over the projection [8] 8 each
// -> 272; MLP 144; post_attention and post_feedforward norms 16 -> 432. Embed 80, lm_head 80,
// norm 8 -> 168. 520 + 432 + 168 = 1,120 parameters; no rotary buffer (no rope_theta).
TEST(OlmoHybridBuilder, TwoLayersByHand) {
  auto m = testing::BuildCounted(TinyOlmoHybrid(), 1120u, 1120u * 4);
  ASSERT_TRUE(m);
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.resident_bytes, 1120u * 4);
  testing::ExpectShape(*m, "model.layers.0.linear_attn.conv1d.weight", {16, 1, 4});
  EXPECT_NE(FindTensor(*m, "model.layers.0.input_layernorm.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.post_feedforward_layernorm.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.1.input_layernorm.weight"), nullptr);
  testing::ExpectShape(*m, "model.layers.1.self_attn.k_norm.weight", {8});
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0,
                       {.attention = AttentionKind::kNone, .mixer = LayerMixer::kGatedDeltaNet});
  testing::ExpectLayer(m->hp, 1, {.mixer = LayerMixer::kAttention});
  // A rope_theta brings OlmoHybridRotaryEmbedding: inv_freq [head_dim / 2 = 2] float32, 8 bytes.
  auto j = TinyOlmoHybrid();
  j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 500000.0}};
  auto r = BuildJson(j);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(ComputeTotals(*r).resident_bytes, 1120u * 4 + 8);
}

// 2 sequences x 100 tokens, bf16. DeltaNet layer per sequence (transformers): conv 4 steps x 16
// channels x 2 B = 128, state 2 heads x 2 x 4 = 16 float32 = 64 -> 192; x 2 = 384. Attention
// layer: 2 KV heads x 4 x 2 (K, V) x 2 B = 32 B a token -> 32 x 100 x 2 = 6,400.
TEST(OlmoHybridBuilder, StateAndKvByHand) {
  auto m = BuildJson(TinyOlmoHybrid());
  ASSERT_TRUE(m) << m.error().message;
  auto t = EstimateKvCache(*m, {.context_tokens = 100, .batch = 2, .model_dtype = Dtype::kBF16});
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->state_bytes, 384u);
  EXPECT_EQ(t->bytes, 6400u + 384);
}

// OlmoHybridConfig defaults: without "layer_types" a 2-layer model is linear then full (the last
// layer), 4+ layers put full attention on i % 4 == 3; key head dim int(0.75 x 8 / 2) = 3, value
// head dim 6: conv1d [2 x 6 + 12 = 24, 1, 4].
TEST(OlmoHybridBuilder, ConfigDefaults) {
  auto j = TinyOlmoHybrid();
  for (const char* k : {"layer_types", "linear_num_key_heads", "linear_key_head_dim",
                        "linear_num_value_heads", "linear_value_head_dim"}) {
    j.erase(k);
  }
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.layers[0].mixer, LayerMixer::kGatedDeltaNet);
  EXPECT_EQ(m->hp.layers[1].mixer, LayerMixer::kAttention);
  testing::ExpectShape(*m, "model.layers.0.linear_attn.conv1d.weight", {24, 1, 4});
  j["num_hidden_layers"] = 5;
  auto five = BuildJson(j);
  ASSERT_TRUE(five) << five.error().message;
  for (uint64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(five->hp.layers[i].mixer == LayerMixer::kAttention, i == 3) << i;
  }
  j["layer_types"] = {"linear_attention", "mamba"};
  j["num_hidden_layers"] = 2;
  testing::ExpectError(j, "layer_types");
  j.erase("layer_types");
  j["linear_num_value_heads"] = 0;
  testing::ExpectError(j, "linear_num_value_heads");
  testing::ExpectHostileRejected("olmo_hybrid");
}

// allenai/Olmo-Hybrid-7B: 7,430,870,688 parameters (the Hub's safetensors metadata, as public
// model surveys and a conversion script that asserts the released total quote it). Config
// (OlmoHybridConfig's defaults, which are this model's; AllenAI's open-instruct pins them):
// hidden 3,840, 32 layers (3 DeltaNet : 1 attention), 30 heads of 128, MLP 11,008, vocab
// 100,352, untied, 30 key/value heads of 96/192, conv 4, NoPE.
// Attention layer: 4 x 3,840^2 + q/k norms 2 x 3,840 + 2 post norms x 3,840 + MLP 3 x 3,840 x
// 11,008 = 185,809,920. DeltaNet layer: q, k 2 x 3,840 x 2,880, v, g, o 3 x 3,840 x 5,760, a, b
// 2 x 3,840 x 30, conv1d 11,520 x 4, A_log and dt_bias 2 x 30, o_norm 192, 2 norms x 3,840, MLP
// = 215,570,172. 8 x 185,809,920 + 24 x 215,570,172 + 2 x 385,351,680 + 3,840 = 7,430,870,688.
TEST(OlmoHybridBuilder, OlmoHybrid7bPublishedCount) {
  nlohmann::json layer_types = nlohmann::json::array();
  for (int i = 0; i < 32; ++i)
    layer_types.push_back(i % 4 == 3 ? "full_attention" : "linear_attention");
  auto m = testing::BuildCounted({{"model_type", "olmo_hybrid"},
                                  {"architectures", {"OlmoHybridForCausalLM"}},
                                  {"vocab_size", 100352},
                                  {"hidden_size", 3840},
                                  {"intermediate_size", 11008},
                                  {"num_hidden_layers", 32},
                                  {"num_attention_heads", 30},
                                  {"num_key_value_heads", 30},
                                  {"layer_types", layer_types},
                                  {"linear_num_key_heads", 30},
                                  {"linear_num_value_heads", 30},
                                  {"linear_key_head_dim", 96},
                                  {"linear_value_head_dim", 192},
                                  {"linear_conv_kernel_dim", 4},
                                  {"tie_word_embeddings", false},
                                  {"torch_dtype", "bfloat16"}},
                                 7430870688u, 2 * 7430870688u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.0.linear_attn.conv1d.weight", {11520, 1, 4});
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
