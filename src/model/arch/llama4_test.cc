#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyLlama4Text() {
  return testing::TinyDecoderWith("llama4_text",
                                  {{"architectures", {"Llama4ForCausalLM"}},
                                   {"head_dim", 4},
                                   {"intermediate_size", 3},
                                   {"intermediate_size_mlp", 12},
                                   {"num_local_experts", 2},
                                   {"interleave_moe_layer_step", 2},
                                   {"no_rope_layer_interval", 2},
                                   {"attention_chunk_size", 16},
                                   {"max_position_embeddings", nullptr}});
}

// Layer 0 (dense, RoPE -> chunked): q 64, k 32, v 32, o 64, gate/up/down 3 x 8 x 12 = 288,
// norms 16: 496. Layer 1 (MoE, NoPE -> full): attention 192, router 2 x 8 = 16, gate_up_proj
// 2 x 8 x 6 = 96, down_proj 2 x 3 x 8 = 48, shared expert 3 x 8 x 3 = 72, norms 16: 440.
// Embeddings 80, norm 8, lm_head 80: 1104 parameters, 4416 bytes in float32.
TEST(Llama4Builder, TinyTextCountsByHand) {
  auto m = testing::BuildCounted(TinyLlama4Text(), 1104u, 4416u);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0,
                       {.attention = AttentionKind::kChunked,
                        .window_tokens = 16u,
                        .moe = false,
                        .intermediate_size = 12u});
  testing::ExpectLayer(m->hp, 1, {.attention = AttentionKind::kFull, .moe = true});
  testing::ExpectShape(*m, "model.layers.1.feed_forward.experts.gate_up_proj", {2, 8, 6});
}

// Llama4ForConditionalGeneration with a tiny vision model (hidden 4, 1 layer, intermediate 6,
// image 4, patch 2): patch_embedding 4 x 12 = 48, class_embedding 4, positions (2 x 2 + 1) x 4 =
// 20, layernorm_pre/post 16; layer: q/k/v/o 4 x 20 = 80, fc1 24 + 6, fc2 24 + 4, two LayerNorms
// 16: 154; vision_adapter fc1 6 x 7 = 42, fc2 7 x 7 = 49: 333; multi_modal_projector 5 x 8 = 40.
TEST(Llama4Builder, MultimodalComponentsAndNames) {
  auto text = TinyLlama4Text();
  text.erase("architectures");
  nlohmann::json j = {{"model_type", "llama4"},
                      {"architectures", {"Llama4ForConditionalGeneration"}},
                      {"torch_dtype", "float32"},
                      {"text_config", text},
                      {"vision_config",
                       {{"hidden_size", 4},
                        {"num_hidden_layers", 1},
                        {"intermediate_size", 6},
                        {"image_size", 4},
                        {"patch_size", 2},
                        {"vision_output_dim", 5},
                        {"projector_input_dim", 7},
                        {"projector_output_dim", 7}}}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1104u + 333u + 40u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_model"), 333u);
  EXPECT_NE(FindTensor(*m, "language_model.model.layers.0.self_attn.q_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "language_model.lm_head.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "multi_modal_projector.linear_1.weight"), nullptr);
  j.erase("vision_config");  // transformers' defaults, recorded as an assumption
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_FALSE(m->assumptions.empty());
}

TEST(Llama4Builder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyLlama4Text(), {{"hidden_size", nullptr}}, "hidden_size");
  testing::ExpectPatchRejected(TinyLlama4Text(), {{"interleave_moe_layer_step", 0}},
                               "interleave_moe_layer_step");
  testing::ExpectPatchRejected(TinyLlama4Text(), {{"no_rope_layers", {1}}}, "no_rope_layers");
  testing::ExpectPatchRejected(
      TinyLlama4Text(),
      {{"num_local_experts", uint64_t{1} << 40}, {"intermediate_size", uint64_t{1} << 40}}, "");
  testing::ExpectPatchRejected(TinyLlama4Text(), {{"num_key_value_heads", 3}},
                               "num_key_value_heads");
}

// Llama-4-Scout-17B-16E (text_config as in ../shared/eval/recent; vision_config from the Hub
// repository, which the eval copy lacks): 48 MoE layers of 16 experts + shared expert,
// 107,769,861,120 text parameters; vision 871,932,416: 108,641,793,536 (card: 109B).
TEST(Llama4Builder, ScoutMatchesItsCard) {
  nlohmann::json text = {{"vocab_size", 202048},        {"hidden_size", 5120},
                         {"num_hidden_layers", 48},     {"num_attention_heads", 40},
                         {"num_key_value_heads", 8},    {"head_dim", 128},
                         {"intermediate_size", 8192},   {"intermediate_size_mlp", 16384},
                         {"num_local_experts", 16},     {"interleave_moe_layer_step", 1},
                         {"attention_chunk_size", 8192}};
  nlohmann::json vision = {{"hidden_size", 1408},
                           {"num_hidden_layers", 34},
                           {"intermediate_size", 5632},
                           {"image_size", 336},
                           {"patch_size", 14},
                           {"vision_output_dim", 4096},
                           {"projector_input_dim", 4096},
                           {"projector_output_dim", 4096}};
  auto m = BuildJson({{"model_type", "llama4"},
                      {"architectures", {"Llama4ForConditionalGeneration"}},
                      {"torch_dtype", "bfloat16"},
                      {"text_config", text},
                      {"vision_config", vision}});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 108641793536u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_model"), 871932416u - 4096u * 5120u);
  // NoPE every fourth layer: full attention there, chunked elsewhere.
  EXPECT_EQ(m->hp.layers[3].attention, AttentionKind::kFull);
  EXPECT_EQ(m->hp.layers[4].attention, AttentionKind::kChunked);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
