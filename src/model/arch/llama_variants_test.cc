// Issue 15 llama-like DecoderSpec rows: glm4, seed_oss, apertus, ernie4_5, hunyuan_v1_dense, internlm. Tiny
// configs counted by hand, and real configs (the fields the builders read, written here) against
// published parameter counts or a weight index's total_size.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

// The tiny decoder's llama layer: input norm 8, q 8x8 = 64, k 8x4 = 32, v 32, o 64,
// gate/up/down 3 x 8 x 12 = 288, post norm 8: 496 per layer; embed 10x8 = 80, norm 8, untied
// lm_head 80.
uint64_t Parameters(const nlohmann::json& j) {
  auto m = BuildJson(j);
  EXPECT_TRUE(m) << m.error().message;
  return m ? ComputeTotals(*m).parameters : 0;
}

// Glm4: q/k/v biased by default (8 + 4 + 4), o_proj never; gate_up_proj [24, 8] = 192 and
// down_proj 96 (= 288); four norms 32. Per layer 528; 2 x 528 + 80 + 8 + 80 = 1224.
TEST(Glm4Builder, TinyConfigCountsByHand) {
  auto j = TinyDecoder("glm4");
  j["head_dim"] = 4;  // Glm4Config's default is 128
  auto m = testing::BuildCounted(j, 1224u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.1.mlp.gate_up_proj.weight", {24, 8});
  EXPECT_NE(FindTensor(*m, "model.layers.0.post_self_attn_layernorm.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.0.post_mlp_layernorm.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.0.self_attn.k_proj.bias"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.o_proj.bias"), nullptr);
  // partial_rotary_factor 0.5 (Glm4Config's default): inv_freq [int(4 x 0.5) / 2].
  testing::ExpectShape(*m, "model.rotary_emb.inv_freq", {1});
  j["attention_bias"] = false;
  EXPECT_EQ(Parameters(j), 1224u - 2 * 16);
  testing::ExpectHostileRejected("glm4");
}

// Seed-OSS: q/k/v biased by default (+16 per layer), o_proj only with attention_out_bias (+8).
TEST(SeedOssBuilder, TinyConfigCountsByHand) {
  auto j = TinyDecoder("seed_oss");
  j["head_dim"] = 4;
  EXPECT_EQ(Parameters(j), 2 * (496u + 16) + 168);
  j["attention_out_bias"] = true;
  EXPECT_EQ(Parameters(j), 2 * (496u + 24) + 168);
  testing::ExpectHostileRejected("seed_oss");
}

// Apertus: attention_layernorm/feedforward_layernorm, q_norm/k_norm [4], up/down only (192), and
// xIELU's alpha_p/alpha_n [1] parameters with persistent scalar buffers beta/eps. Per layer
// 16 + 192 + 8 + 192 + 2 = 410; 2 x 410 + 168 = 988 parameters, float32; stored adds the four
// scalar buffers: 988 x 4 + 4 x 4 = 3968 bytes.
TEST(ApertusBuilder, TinyConfigCountsByHand) {
  auto j = TinyDecoder("apertus");
  j["hidden_act"] = "xielu";
  auto m = testing::BuildCounted(j, 988u, 3968u);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->hp.gated_mlp);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mlp.gate_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.act_fn.alpha_p"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.act_fn.eps"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.0.attention_layernorm.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.0.feedforward_layernorm.weight"), nullptr);
  j["hidden_act"] = "relu2";  // no learnable activation
  EXPECT_EQ(Parameters(j), 988u - 4);
  testing::ExpectHostileRejected("apertus");
}

// ERNIE 4.5: tied by default; use_bias puts biases on q/k/v/o (24) and the MLP (12 + 12 + 8).
TEST(Ernie45Builder, TinyConfigCountsByHand) {
  auto j = TinyDecoder("ernie4_5");
  EXPECT_EQ(Parameters(j), 2 * 496u + 88);
  j["use_bias"] = true;
  EXPECT_EQ(Parameters(j), 2 * (496u + 56) + 88);
  testing::ExpectHostileRejected("ernie4_5");
}

// Hunyuan dense: per-head query_layernorm/key_layernorm [4] (+8 per layer).
TEST(HunYuanDenseBuilder, TinyConfigCountsByHand) {
  auto j = TinyDecoder("hunyuan_v1_dense");
  j["head_dim"] = 4;  // HunYuanDenseV1Config's default is 128
  auto m = testing::BuildCounted(j, 2 * 504u + 168);
  ASSERT_TRUE(m);
  EXPECT_NE(FindTensor(*m, "model.layers.0.self_attn.query_layernorm.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.0.self_attn.key_layernorm.weight"), nullptr);
  testing::ExpectHostileRejected("hunyuan_v1_dense");
}

// InternLM (v1 remote code): "bias" (default true) on q/k/v/o: +24 per layer.
TEST(InternLmBuilder, TinyConfigCountsByHand) {
  auto j = TinyDecoder("internlm");
  EXPECT_EQ(Parameters(j), 2 * (496u + 24) + 168);
  j["bias"] = false;
  EXPECT_EQ(Parameters(j), 2 * 496u + 168);
  testing::ExpectHostileRejected("internlm");
}

// Sources: GLM-4-9B-0414 and Seed-OSS-36B-Instruct, Apertus-8B-2509, ERNIE-4.5-0.3B-PT: the
// Hugging Face model pages' safetensors parameter counts (9.40B, 36.15B, 8.05B, 0.36B: rounded
// figures; memfit's exact counts are within their rounding). Apertus's page total also holds the
// 2 x 32 scalar beta/eps buffers, which are not parameters here.
TEST(LlamaVariantsPublished, RealConfigsMatchPublishedCounts) {
  const testing::Published kModels[] = {
      {"THUDM/GLM-4-9B-0414 (9.40B)",
       R"({"model_type":"glm4","architectures":["Glm4ForCausalLM"],"vocab_size":151552,
         "hidden_size":4096,"intermediate_size":13696,"num_hidden_layers":40,
         "num_attention_heads":32,"num_key_value_heads":2,"head_dim":128,"attention_bias":true,
         "partial_rotary_factor":0.5,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})",
       9400279040u},
      {"ByteDance-Seed/Seed-OSS-36B-Instruct (36.15B)",
       R"({"model_type":"seed_oss","architectures":["SeedOssForCausalLM"],"vocab_size":155136,
         "hidden_size":5120,"intermediate_size":27648,"num_hidden_layers":64,
         "num_attention_heads":80,"num_key_value_heads":8,"head_dim":128,"attention_bias":true,
         "attention_out_bias":false,"mlp_bias":false,"tie_word_embeddings":false,
         "torch_dtype":"bfloat16"})",
       36151104512u},
      {"swiss-ai/Apertus-8B-2509 (8.05B)",
       R"({"model_type":"apertus","architectures":["ApertusForCausalLM"],"vocab_size":131072,
         "hidden_size":4096,"intermediate_size":21504,"num_hidden_layers":32,
         "num_attention_heads":32,"num_key_value_heads":8,"hidden_act":"xielu",
         "tie_word_embeddings":false,"torch_dtype":"bfloat16"})",
       8053338176u},
      {"baidu/ERNIE-4.5-0.3B-PT (0.36B)",
       R"({"model_type":"ernie4_5","architectures":["Ernie4_5ForCausalLM"],"vocab_size":103424,
         "hidden_size":1024,"intermediate_size":3072,"num_hidden_layers":18,
         "num_attention_heads":16,"num_key_value_heads":2,"head_dim":128,"use_bias":false,
         "tie_word_embeddings":true,"torch_dtype":"bfloat16"})",
       360748032u},
  };
  testing::ExpectPublishedCounts(kModels);
}

// internlm/internlm-20b (remote code, bias false): its pytorch_model.bin.index.json total_size is
// 40,177,428,480 bytes (bfloat16), and it lists llama names without any rotary buffer.
TEST(InternLmBuilder, InternLm20bMatchesIndexTotalSize) {
  auto m = BuildJson(nlohmann::json::parse(
      R"({"model_type":"internlm","architectures":["InternLMForCausalLM"],"bias":false,
         "hidden_size":5120,"intermediate_size":13824,"num_hidden_layers":60,
         "num_attention_heads":40,"num_key_value_heads":40,"vocab_size":103168,
         "max_position_embeddings":4096,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 40177428480u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
