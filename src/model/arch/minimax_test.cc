// MiniMax-01 / M1 (minimax, minimax_m1, minimax_text_01; issue 30): lightning attention layers
// among softmax ones, mixtral's experts with a float32 router, counted by hand on two-layer
// configs, and the real MiniMax-M1 config against its checkpoint index.

#include <gtest/gtest.h>

#include "memfit/estimate_inference.h"
#include "memfit/hf_config.h"
#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

// Two layers: layer 0 lightning, layer 1 softmax; hidden 8, 2 heads of 4 (1 KV head), two
// experts of 3, bfloat16.
nlohmann::json TinyM1() {
  auto j = testing::TinyDecoderWith(
      "minimax_m1", {{"architectures", {"MiniMaxM1ForCausalLM"}},
                     {"head_dim", 4},
                     {"intermediate_size", 3},
                     {"num_local_experts", 2},
                     {"num_experts_per_tok", 1},
                     {"attn_type_list", {0, 1}},
                     {"rotary_dim", 2},
                     {"shared_intermediate_size", 0},
                     {"layernorm_mlp_alpha", 3.55},
                     {"postnorm", true},
                     {"torch_dtype", "bfloat16"}});
  j["sliding_window"] =
      nullptr; // stated as null, which a merge patch cannot say
  return j;
}

// Layer 0 (lightning): input norm 8, out_proj [8, 8] 64, norm [2 x 4] 8, qkv_proj [24, 8] 192,
// output_gate [8, 8] 64 -> 336. Layer 1 (softmax): input norm 8, q [8, 8] 64, k [4, 8] 32,
// v 32, o 64 -> 200. Each layer: router [2, 8] 16, experts 2 x (w1 [3, 8] + w2 [8, 3] +
// w3 [3, 8]) = 144, post_attention_layernorm 8 -> 168. Embed 80, lm_head 80, norm 8.
// Parameters 336 + 200 + 2 x 168 + 168 = 1,040. Stored: the two routers (32) in float32, the
// rest bfloat16: 1,008 x 2 + 32 x 4 = 2,144 bytes.
TEST(MiniMaxBuilder, M1TwoLayersByHand) {
  auto m = testing::BuildCounted(TinyM1(), 1040u, 2144u);
  ASSERT_TRUE(m);
  auto t = ComputeTotals(*m);
  testing::ExpectShape(*m, "model.layers.0.self_attn.qkv_proj.weight", {24, 8});
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.q_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.1.self_attn.qkv_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.1.block_sparse_moe.gate.weight")->dtype, Dtype::kF32);
  // Current transformers: one model-level inv_freq [rotary_dim / 2 = 1] float32 (4 bytes).
  EXPECT_EQ(t.resident_bytes, 2144u + 4);
  // transformers 4.42 (the remote code's era): inv_freq [1] and cos/sin caches [16, 2] in the
  // softmax layer only: 4 + 2 x 128 = 260 bytes.
  auto old = BuildJson(TinyM1(), {.buffers = BufferConvention::kTransformers442});
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_EQ(ComputeTotals(*old).resident_bytes, 2144u + 260);
  EXPECT_EQ(FindTensor(*old, "model.layers.0.self_attn.rotary_emb.inv_freq"), nullptr);
  EXPECT_NE(FindTensor(*old, "model.layers.1.self_attn.rotary_emb.cos_cached"), nullptr);

  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0,
                       {.attention = AttentionKind::kNone,
                        .mixer = LayerMixer::kLinearAttention,
                        .moe = true,
                        .recurrent = true});
  testing::ExpectLayer(m->hp, 1, {.mixer = LayerMixer::kAttention, .moe = true});
}

// KV cache at 2 sequences x 100 tokens, bf16: the softmax layer keeps 1 KV head x 4 x 2 (K, V)
// x 2 B = 16 B a token -> 16 x 100 x 2 = 3,200; the lightning layer a [2, 4, 4] state per
// sequence: 32 elements, float32 in transformers (128 B) -> 256, bf16 in vLLM (64 B) -> 128.
TEST(MiniMaxBuilder, M1StateAndKvByHand) {
  auto m = BuildJson(TinyM1());
  ASSERT_TRUE(m) << m.error().message;
  auto t = EstimateKvCache(*m, {.context_tokens = 100, .batch = 2, .model_dtype = Dtype::kBF16});
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->state_bytes, 256u);
  EXPECT_EQ(t->bytes, 3200u + 256);
  auto v = EstimateKvCache(*m, {.context_tokens = 100, .batch = 2, .model_dtype = Dtype::kBF16,
                                .recurrent_state_fp32 = false});
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->state_bytes, 128u);
  EXPECT_EQ(v->bytes, 3200u + 128);
}

// shared_intermediate_size > 0 (MiniMaxM1DecoderLayer): shared_mlp of intermediate_size
// (gate/up [3, 8] 24 each, down [8, 3] 24) and coefficient [1, 8] -> 80 per layer, 1,200 in all.
TEST(MiniMaxBuilder, M1SharedMlpByHand) {
  auto j = TinyM1();
  j["shared_intermediate_size"] = 5;
  auto m = testing::BuildCounted(j, 1040u + 2 * 80);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.1.coefficient.weight", {1, 8});
}

TEST(MiniMaxBuilder, M1BadListsAreNamed) {
  auto j = TinyM1();
  j.erase("attn_type_list");
  testing::ExpectError(j, "attn_type_list");
  j["attn_type_list"] = {0};
  testing::ExpectError(j, "attn_type_list");
  j["attn_type_list"] = {0, 2};
  testing::ExpectError(j, "attn_type_list");
  testing::ExpectPatchRejected(TinyM1(), {{"rotary_dim", 6}}, "rotary_dim");
  testing::ExpectHostileRejected("minimax_m1");
}

// transformers' MiniMaxForCausalLM: the same two layers by "layer_types", block_size 4, float32.
// Tensors as M1's (1,040 parameters); the lightning layer also holds persistent decay buffers
// slope_rate [2, 1, 1] 2, query_decay and key_decay [2, 4, 1] 8 each, diagonal_decay
// [1, 2, 4, 4] 32 -> 50 elements x 4 B = 200 bytes; model-level inv_freq [head_dim / 2 = 2] 8 B.
TEST(MiniMaxBuilder, TransformersTwoLayersByHand) {
  auto j = TinyM1();
  j.erase("attn_type_list");
  j["model_type"] = "minimax";
  j["architectures"] = {"MiniMaxForCausalLM"};
  j["layer_types"] = {"linear_attention", "full_attention"};
  j["block_size"] = 4;
  j["torch_dtype"] = "float32";
  auto m = testing::BuildCounted(j, 1040u);
  ASSERT_TRUE(m);
  auto t = ComputeTotals(*m);
  testing::ExpectShape(*m, "model.layers.0.self_attn.diagonal_decay", {1, 2, 4, 4});
  EXPECT_EQ(t.resident_bytes, 1040u * 4 + 200 + 8);
  EXPECT_EQ(m->hp.layers[0].mixer, LayerMixer::kLinearAttention);
  // Without "layer_types", MiniMaxConfig makes even layers full and odd layers lightning.
  j.erase("layer_types");
  auto d = BuildJson(j);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->hp.layers[0].mixer, LayerMixer::kAttention);
  EXPECT_EQ(d->hp.layers[1].mixer, LayerMixer::kLinearAttention);
  j["layer_types"] = {"linear_attention", "sliding_attention"};
  testing::ExpectError(j, "layer_types");
}

// MiniMaxAI/MiniMax-M1 (h 6144, 80 layers: 70 lightning, 10 softmax; 64 heads of 128, 8 KV heads;
// 32 experts of 9216; vocab 200064; bf16). Lightning layer: qkv [24576, 6144] 150,994,944,
// output_gate and out_proj 50,331,648 each, norm 8,192 -> 251,666,432. Softmax layer: q and o
// 50,331,648 each, k and v 6,291,456 each -> 113,246,208. Every layer: experts 32 x 3 x
// 56,623,104 = 5,435,817,984, two norms 12,288 (bf16); router 32 x 6144 = 196,608 (float32).
// Embed and lm_head 1,229,193,216 each, norm 6,144. bf16 elements 70 x 251,666,432 + 10 x
// 113,246,208 + 80 x 5,435,830,272 + 2,458,392,576 = 456,073,926,656 -> x 2 = 912,147,853,312;
// float32 routers 80 x 196,608 x 4 = 62,914,560: 912,210,767,872 bytes, the index's total_size.
// The config names no torch_dtype: as is, float32 is assumed (and said) for everything,
// 456,089,655,296 elements x 4 = 1,824,358,621,184 bytes; with "bfloat16" given it is exact.
TEST(MiniMaxBuilder, M1EvalConfigMatchesIndex) {
  auto json = testing::EvalConfigJson("models/MiniMaxAI__MiniMax-M1");
  if (!json) GTEST_SKIP() << "../shared/eval/models/MiniMaxAI__MiniMax-M1 not available";
  auto assumed = BuildJson(*json);
  ASSERT_TRUE(assumed) << assumed.error().message;
  EXPECT_EQ(ComputeTotals(*assumed).stored_bytes, 1824358621184u);
  EXPECT_FALSE(assumed->assumptions.empty());
  (*json)["torch_dtype"] = "bfloat16";
  auto m = BuildJson(*json);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 912210767872u);
  uint64_t lightning = 0;
  for (const auto& l : m->hp.layers) lightning += l.mixer == LayerMixer::kLinearAttention;
  EXPECT_EQ(lightning, 70u);
  EXPECT_EQ(m->hp.layers[7].mixer, LayerMixer::kAttention);
}

// MiniMax-Text-01's remote code (modeling_minimax_text_01.py, MiniMaxText01ForCausalLM; read in a
// public copy, zzp1012/nanoGPT) builds M1's modules under M1's names: the two-layer config above as
// model_type "minimax_text_01" counts the same 1,040 parameters and 2,144 bytes (routers float32,
// as M1's checkpoint stores them), with `block_sparse_moe.experts.N.w1/w2/w3`, not the generic
// decoder's approximate `mlp.experts.N.gate_proj` it fell to before.
TEST(MiniMaxBuilder, Text01RemoteCodeIsTheM1Layout) {
  auto j = TinyM1();
  j["model_type"] = "minimax_text_01";
  j["architectures"] = {"MiniMaxText01ForCausalLM"};
  auto m = testing::BuildCounted(j, 1040u, 2144u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.1.block_sparse_moe.experts.1.w2.weight", {8, 3});
  EXPECT_EQ(FindTensor(*m, "model.layers.1.block_sparse_moe.gate.weight")->dtype, Dtype::kF32);
  EXPECT_EQ(FindTensor(*m, "model.layers.1.mlp.gate.weight"), nullptr);
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
}

// MiniMaxAI/MiniMax-Text-01's config (the dimensions of M1 above, which was trained from it; its
// `attn_type_list` puts softmax on every 8th layer): 456,089,655,296 parameters, the model card's
// "456 billion total parameters", and 912,210,767,872 bytes with the float32 routers.
TEST(MiniMaxBuilder, Text01ConfigMatchesTheModelCard) {
  nlohmann::json attn_type_list = nlohmann::json::array();
  for (int i = 0; i < 80; ++i) attn_type_list.push_back((i + 1) % 8 == 0 ? 1 : 0);
  auto m = BuildJson({{"model_type", "minimax_text_01"},
                      {"architectures", {"MiniMaxText01ForCausalLM"}},
                      {"attn_type_list", attn_type_list},
                      {"head_dim", 128},
                      {"hidden_size", 6144},
                      {"intermediate_size", 9216},
                      {"max_position_embeddings", 10240000},
                      {"num_attention_heads", 64},
                      {"num_experts_per_tok", 2},
                      {"num_hidden_layers", 80},
                      {"num_key_value_heads", 8},
                      {"num_local_experts", 32},
                      {"rotary_dim", 64},
                      {"shared_intermediate_size", 0},
                      {"tie_word_embeddings", false},
                      {"torch_dtype", "bfloat16"},
                      {"vocab_size", 200064}});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 456089655296u);
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 912210767872u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
