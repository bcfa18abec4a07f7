// The MoeLayout::kRouted rows (decoder_families.cc): olmoe, afmoe, exaone_moe, hy_v3,
// cohere2_moe. Each: a hand-counted two-layer config, the layer kinds, a hostile key, and the
// real configuration's total where one is published.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::ExpectError;
using testing::FindTensor;
using testing::TinyDecoder;

// TinyDecoder: vocab 10, hidden 8, 2 heads of 4, 1 KV head, intermediate 12, float32. In every
// tiny case below: q 8x8 = 64, k 8x4 = 32, v 32, o 8x8 = 64 (attention 192); a dense MLP
// 3 x 8 x 12 = 288; two routed experts of width 3: 2 x 3 x (8 x 3) = 144; a router [2, 8] = 16;
// one shared expert of width 3: 3 x 8 x 3 = 72; embed_tokens 80, lm_head 80, model.norm 8.
nlohmann::json Routed(const std::string& type) {
  auto j = TinyDecoder(type);
  j["num_experts"] = 2;
  j["num_experts_per_tok"] = 1;
  j["moe_intermediate_size"] = 3;
  return j;
}

uint64_t SlidingLayers(const Model& m) {
  uint64_t n = 0;
  for (const auto& l : m.hp.layers) n += l.attention == AttentionKind::kSliding ? 1 : 0;
  return n;
}

// OLMoE: per layer attention 192, q_norm [8] + k_norm [1 x 4] = 12, router 16, experts of
// "intermediate_size" 3: 144, input/post-attention norms 16 = 380; 2 x 380 + 80 + 80 + 8 = 928.
TEST(RoutedMoe, OlmoeTinyCountsByHand) {
  auto j = Routed("olmoe");
  j.erase("moe_intermediate_size");
  j["intermediate_size"] = 3;
  auto m = testing::BuildCounted(j, 928u);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->hp.layers[0].moe && m->hp.layers[1].moe);
  ASSERT_NE(FindTensor(*m, "model.layers.0.self_attn.k_norm.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.k_norm.weight")->numel, 4u);
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.experts.1.down_proj.weight"), nullptr);
  j.erase("num_experts");
  ExpectError(j, "num_experts");
}

// allenai/OLMoE-1B-7B-0924 config.json. Per layer: attention 4 x 2048^2 = 16,777,216, q/k norms
// 4,096, router 64 x 2048 = 131,072, experts 64 x 3 x 2048 x 1024 = 402,653,184, norms 4,096:
// 419,569,664; x 16 = 6,713,114,624; + embed and lm_head 2 x 50304 x 2048 = 206,045,184 + norm
// 2,048 = 6,919,161,856, the Hub's safetensors count (6.92B).
TEST(RoutedMoe, OlmoeRealConfigMatchesPublishedCount) {
  auto m = BuildJson({{"model_type", "olmoe"}, {"architectures", {"OlmoeForCausalLM"}},
                      {"vocab_size", 50304}, {"hidden_size", 2048}, {"intermediate_size", 1024},
                      {"num_hidden_layers", 16}, {"num_attention_heads", 16},
                      {"num_key_value_heads", 16}, {"num_experts", 64},
                      {"num_experts_per_tok", 8}, {"tie_word_embeddings", false},
                      {"torch_dtype", "bfloat16"}});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 6919161856u);
}

// AFMoE, num_dense_layers 1. Layer 0: attention 192 + q/k norms 4 + 4 + gate_proj 8 x 8 = 64
// + dense MLP 288 + four norms 32 = 584. Layer 1: 192 + 8 + 64 + router 16 + expert_bias 2
// + experts 144 + shared 72 + norms 32 = 530. 584 + 530 + 80 + 80 + 8 = 1282.
TEST(RoutedMoe, AfmoeTinyCountsByHand) {
  auto j = Routed("afmoe");
  j["head_dim"] = 4;
  j["num_shared_experts"] = 1;
  j["num_dense_layers"] = 1;
  j["global_attn_every_n_layers"] = 2;
  j["sliding_window"] = 4;
  auto m = testing::BuildCounted(j, 1282u);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->hp.layers[0].moe);
  EXPECT_TRUE(m->hp.layers[1].moe);
  // (i + 1) % 2 != 0 slides: layer 0 sliding (window 4), layer 1 global.
  testing::ExpectLayer(m->hp, 0, {.attention = AttentionKind::kSliding, .window_tokens = 4u});
  testing::ExpectLayer(m->hp, 1, {.attention = AttentionKind::kFull});
  const Tensor* bias = FindTensor(*m, "model.layers.1.mlp.expert_bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->dtype, Dtype::kF32);
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.router.gate.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.0.self_attn.gate_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.shared_experts.down_proj.weight"), nullptr);
  j["global_attn_every_n_layers"] = 0;
  ExpectError(j, "global_attn_every_n_layers");
}

// arcee-ai/Trinity-Nano-Preview config.json (as quoted in aws-neuron's Trinity port tests):
// 56 layers, every 4th global: 14 global, 42 sliding of window 2048.
TEST(RoutedMoe, AfmoeTrinityNanoLayerKinds) {
  auto m = BuildJson({{"model_type", "afmoe"}, {"architectures", {"AfmoeForCausalLM"}},
                      {"vocab_size", 200192}, {"hidden_size", 1024}, {"intermediate_size", 3072},
                      {"moe_intermediate_size", 256}, {"num_hidden_layers", 56},
                      {"num_dense_layers", 2}, {"num_attention_heads", 8},
                      {"num_key_value_heads", 2}, {"head_dim", 128}, {"num_experts", 128},
                      {"num_experts_per_tok", 8}, {"num_shared_experts", 1},
                      {"global_attn_every_n_layers", 4}, {"sliding_window", 2048},
                      {"tie_word_embeddings", false}, {"dtype", "bfloat16"}});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(SlidingLayers(*m), 42u);
  EXPECT_EQ(m->hp.layers[3].attention, AttentionKind::kFull);
  EXPECT_FALSE(m->hp.layers[1].moe);
  EXPECT_TRUE(m->hp.layers[2].moe);
}

// EXAONE-MoE, first_k_dense_replace 1 by default. Layer 0: attention 192 + q/k norms 8 + dense
// 288 + norms 16 = 504. Layer 1: 192 + 8 + router 16 + experts 144 + shared 72 + norms 16 = 448
// (e_score_correction_bias [2] is a buffer). 504 + 448 + 168 = 1120. One MTP layer by default,
// stored only: mtp.fc 16 x 8 = 128 + a dense layer 504 + three norms 24 = 656 floats (2,624
// bytes); with the buffer's 8 bytes, 2,632 stored bytes beyond the parameters.
TEST(RoutedMoe, ExaoneMoeTinyCountsByHand) {
  auto j = Routed("exaone_moe");
  j["num_shared_experts"] = 1;
  j["sliding_window"] = 4;
  j["layer_types"] = {"sliding_attention", "full_attention"};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  const auto totals = ComputeTotals(*m);
  EXPECT_EQ(totals.parameters, 1120u);
  EXPECT_EQ(totals.stored_bytes, 1120u * 4 + 2632u);
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kSliding);
  EXPECT_FALSE(m->hp.layers[0].moe);
  const Tensor* bias = FindTensor(*m, "model.layers.1.mlp.gate.e_score_correction_bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->dtype, Dtype::kF32);
  const Tensor* fc = FindTensor(*m, "mtp.fc.weight");
  ASSERT_NE(fc, nullptr);
  EXPECT_FALSE(fc->loaded);
  // "is_moe_layer" (early configs) and "mlp_layer_types" choose the sparse layers.
  j["is_moe_layer"] = {true, false};
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_TRUE(m->hp.layers[0].moe);
  EXPECT_FALSE(m->hp.layers[1].moe);
  j["mlp_layer_types"] = {"sparse"};
  ExpectError(j, "mlp_layer_types");
}

// LGAI-EXAONE/K-EXAONE-236B-A23B: transformers docs/source/en/model_doc/exaone_moe.md (48 main
// layers + 1 MTP layer, 12 x (3 sliding + 1 global), window 128, 64 Q / 8 KV heads of 128,
// 128 experts of 2,048, 1 shared, vocab 153,600, hidden 6,144) and the config TensorRT-LLM's
// test_modeling_exaone_moe.py copies (intermediate 18,432, first layer dense, "LLLG").
// Dense layer: attention 6144 x (8192 + 1024 + 1024) + 8192 x 6144 = 113,246,208, q/k norms
// 256, norms 12,288, MLP 3 x 6144 x 18432 = 339,738,624: 452,997,376. Sparse layer: 113,246,208
// + 256 + 12,288 + router 786,432 + experts 128 x 3 x 6144 x 2048 = 4,831,838,208 + shared
// 37,748,736 = 4,983,632,128 (+ 128 bias). Loaded: 452,997,376 + 47 x 4,983,632,128 + 2 x
// 153600 x 6144 + 6,144 = 236,571,150,336 ("236B"). MTP: a dense layer + fc 75,497,472 + 3
// norms = 528,513,280. Stored elements 236,571,150,336 + 528,513,280 + 47 x 128 =
// 237,099,669,632, the Hub's count (237.1B); in BF16 with the f32 biases: 2 x 237,099,663,616
// + 4 x 6,016 = 474,199,351,296 bytes.
TEST(RoutedMoe, KExaoneMatchesPublishedCount) {
  auto m = testing::BuildCounted({{"model_type", "exaone_moe"},
                                  {"architectures", {"ExaoneMoeForCausalLM"}},
                                  {"vocab_size", 153600},
                                  {"hidden_size", 6144},
                                  {"intermediate_size", 18432},
                                  {"moe_intermediate_size", 2048},
                                  {"num_hidden_layers", 48},
                                  {"num_attention_heads", 64},
                                  {"num_key_value_heads", 8},
                                  {"head_dim", 128},
                                  {"num_experts", 128},
                                  {"num_experts_per_tok", 8},
                                  {"num_shared_experts", 1},
                                  {"first_k_dense_replace", 1},
                                  {"sliding_window", 128},
                                  {"sliding_window_pattern", "LLLG"},
                                  {"tie_word_embeddings", false},
                                  {"dtype", "bfloat16"}},
                                 236571150336u, 474199351296u);
  ASSERT_TRUE(m);
  EXPECT_EQ(SlidingLayers(*m), 36u);
  EXPECT_EQ(m->hp.num_mtp_layers, 1u);
}

// HY-V3: layer 0 dense (504 as EXAONE-MoE's), layer 1: 192 + 8 + router 16 + experts 144 +
// shared 72 + norms 16 = 448 (mlp.e_score_correction_bias [2] a buffer); 1120 in all. The NextN
// layer model.layers.2, stored only: 448 + enorm 8 + hnorm 8 + eh_proj 128 + final_layernorm 8
// = 600 floats, with the two biases (2 x 2 floats) 2,416 bytes beyond the parameters.
TEST(RoutedMoe, HyV3TinyCountsByHand) {
  auto j = Routed("hy_v3");
  j["head_dim"] = 4;
  j["num_shared_experts"] = 1;
  j["num_nextn_predict_layers"] = 1;
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  const auto totals = ComputeTotals(*m);
  EXPECT_EQ(totals.parameters, 1120u);
  EXPECT_EQ(totals.stored_bytes, 1120u * 4 + 2416u);
  EXPECT_FALSE(m->hp.layers[0].moe);
  EXPECT_TRUE(m->hp.layers[1].moe);
  const Tensor* eh = FindTensor(*m, "model.layers.2.eh_proj.weight");
  ASSERT_NE(eh, nullptr);
  EXPECT_FALSE(eh->loaded);
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.e_score_correction_bias"), nullptr);
  j["mlp_layer_types"] = {"sparse", "dense"};
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_TRUE(m->hp.layers[0].moe);
  j["num_nextn_predict_layers"] = 3;
  ExpectError(j, "num_nextn_predict_layers");
}

// tencent/Hy3-preview: HYV3Config's defaults (configuration of modular_hy_v3.py, whose
// docstring checkpoint it is). Dense layer 0: attention 4096 x (8192 + 1024 + 1024) + 8192 x
// 4096 = 75,497,472, q/k norms 256, norms 8,192, MLP 3 x 4096 x 13312 = 163,577,856:
// 239,083,776. Sparse: 75,505,920 + router 786,432 + experts 192 x 3 x 4096 x 1536 =
// 3,623,878,656 + shared 18,874,368 = 3,719,045,376. 239,083,776 + 79 x 3,719,045,376 +
// 2 x 120832 x 4096 + 4,096 = 295,033,528,320; with the 79 x 192 routing biases
// 295,033,543,488.
TEST(RoutedMoe, Hy3PreviewCountsByHand) {
  auto m = BuildJson({{"model_type", "hy_v3"}, {"architectures", {"HYV3ForCausalLM"}},
                      {"vocab_size", 120832}, {"hidden_size", 4096}, {"intermediate_size", 13312},
                      {"num_hidden_layers", 80}, {"num_attention_heads", 64},
                      {"num_key_value_heads", 8}, {"num_experts", 192}, {"num_experts_per_tok", 8},
                      {"num_shared_experts", 1}, {"moe_intermediate_size", 1536},
                      {"dtype", "bfloat16"}});
  ASSERT_TRUE(m) << m.error().message;
  const auto totals = ComputeTotals(*m);
  EXPECT_EQ(totals.parameters, 295033528320u);
  EXPECT_EQ(totals.parameters + (totals.stored_bytes - 2 * totals.parameters) / 4,
            295033543488u);
}

// tencent/Hy3 (revision 716aa72; Hy3-preview's config is the same) names no dtype; its
// model.safetensors.index.json holds 47,138 tensors, total_size 597,572,342,272: 298,786,140,416
// BF16 elements and 15,360 float32 routing biases (80 sparse layers, the NextN one included, x
// 192), as a public survey of the checkpoint reads it. The count above plus the NextN layer
// 3,719,045,376 + enorm/hnorm/final norm 12,288 + eh_proj 33,554,432 = 298,786,140,416. Read as
// float32 (transformers' old default) the estimate was twice the checkpoint.
TEST(RoutedMoe, Hy3WithoutDtypeMatchesItsIndex) {
  auto m = BuildJson({{"model_type", "hy_v3"}, {"architectures", {"HYV3ForCausalLM"}},
                      {"vocab_size", 120832}, {"hidden_size", 4096}, {"intermediate_size", 13312},
                      {"num_hidden_layers", 80}, {"num_nextn_predict_layers", 1},
                      {"num_attention_heads", 64}, {"num_key_value_heads", 8}, {"head_dim", 128},
                      {"qk_norm", true}, {"first_k_dense_replace", 1}, {"num_experts", 192},
                      {"num_experts_per_tok", 8}, {"num_shared_experts", 1},
                      {"expert_hidden_dim", 1536}, {"moe_intermediate_size", 1536},
                      {"tie_word_embeddings", false}});
  ASSERT_TRUE(m) << m.error().message;
  const auto totals = ComputeTotals(*m);
  EXPECT_EQ(totals.parameters, 295033528320u);
  EXPECT_EQ(totals.stored_bytes, 597572342272u);
  uint64_t stored = 0;
  for (const auto& t : m->tensors) stored += t.stored ? t.copies : 0;
  EXPECT_EQ(stored, 47138u);
  ASSERT_NE(FindTensor(*m, "model.layers.80.eh_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.80.eh_proj.weight")->dtype, Dtype::kBF16);
}

// Cohere2-MoE, first_k_dense_replace 1, tied. Layer 0: input norm 8 + attention 192 + dense
// MLP of prefix_dense_intermediate_size 12: 288 = 488. Layer 1: 8 + 192 + router 16 + experts of
// "intermediate_size" 3: 144 + shared 72 = 432. 488 + 432 + embed 80 + norm 8 = 1008.
TEST(RoutedMoe, Cohere2MoeTinyCountsByHand) {
  auto j = TinyDecoder("cohere2_moe");
  j["head_dim"] = 4;
  j["intermediate_size"] = 3;
  j["num_experts"] = 2;
  j["num_experts_per_tok"] = 1;
  j["num_shared_experts"] = 1;
  j["first_k_dense_replace"] = 1;
  j["prefix_dense_intermediate_size"] = 12;
  j["sliding_window"] = 4;
  auto m = testing::BuildCounted(j, 1008u);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hp.layers[0].intermediate_size, 12u);
  // The dense prefix: every 1st layer global; then (i - 1 + 1) % 4 != 0 slides.
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kFull);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kSliding);
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.shared_experts.up_proj.weight"), nullptr);
  j["prefix_dense_sliding_window_pattern"] = 0;
  ExpectError(j, "prefix_dense_sliding_window_pattern");
}

// CohereLabs/North-Mini-Code-1.0 (the config its GPTQModel / MLX ports pin): layer 0 dense:
// attention 2048 x (4096 + 512 + 512) + 4096 x 2048 = 18,874,368, norm 2,048, MLP 3 x 2048 x
// 3072 = 18,874,368: 37,750,784. Sparse: 18,876,416 + router 262,144 + experts 128 x 3 x 2048 x
// 768 = 603,979,776: 623,118,336. 37,750,784 + 48 x 623,118,336 + embed 262144 x 2048 =
// 536,870,912 (tied) + 2,048 = 30,484,303,872. Layers i % 4 == 0 global: 13 of 49.
TEST(RoutedMoe, NorthMiniCodeCountsByHand) {
  auto m = BuildJson({{"model_type", "cohere2_moe"}, {"architectures", {"Cohere2MoeForCausalLM"}},
                      {"vocab_size", 262144}, {"hidden_size", 2048}, {"head_dim", 128},
                      {"num_hidden_layers", 49}, {"intermediate_size", 768},
                      {"prefix_dense_intermediate_size", 3072}, {"num_attention_heads", 32},
                      {"num_key_value_heads", 4}, {"num_experts", 128},
                      {"num_experts_per_tok", 8}, {"num_shared_experts", 0},
                      {"first_k_dense_replace", 1}, {"sliding_window", 4096},
                      {"tie_word_embeddings", nullptr}, {"rms_norm_eps", 1e-6},
                      {"dtype", "bfloat16"}});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 30484303872u);
  EXPECT_EQ(SlidingLayers(*m), 36u);
  EXPECT_EQ(m->hp.layers[4].attention, AttentionKind::kFull);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
