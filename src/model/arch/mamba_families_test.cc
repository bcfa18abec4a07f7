// Mamba (mamba), Falcon-Mamba (falcon_mamba), Mamba-2 (mamba2) and Jamba (jamba): two-layer
// configs counted by hand, their per-layer kinds and recurrent state, the state's bytes in
// transformers' caches (model dtype) and vLLM's, the totals of published configs, hostile configs.

#include <algorithm>

#include <gtest/gtest.h>

#include "memfit/estimate_inference.h"
#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

std::vector<uint64_t> Shape(const Model& m, const std::string& name) {
  const Tensor* t = FindTensor(m, name);
  return t ? t->shape : std::vector<uint64_t>{};
}

// Vocab 10, hidden 8, 2 layers, d_inner 16, d_state 2, kernel 3, time_step_rank "auto" =
// ceil(8 / 16) = 1, float32.
nlohmann::json TinyMamba(const std::string& type) {
  return testing::TinyDecoderWith(type, {{"intermediate_size", 16},
                                         {"state_size", 2},
                                         {"conv_kernel", 3},
                                         {"time_step_rank", "auto"},
                                         {"num_attention_heads", nullptr},
                                         {"num_key_value_heads", nullptr},
                                         {"max_position_embeddings", nullptr}});
}

// Per layer (MambaConfig: use_bias and use_conv_bias true): norm 8; conv1d [16, 1, 3] 48 + bias
// 16 = 64; in_proj [32, 8] 256 + bias 32 = 288; x_proj [1 + 2 x 2, 16] = 80; dt_proj [16, 1] 16
// + bias 16 = 32; A_log [16, 2] = 32; D 16; out_proj [8, 16] 128 + bias 8 = 136. Layer 656.
// Embeddings 80, norm_f 8, lm_head tied: 80 + 2 x 656 + 8 = 1400.
TEST(MambaBuilder, TinyConfigCountsByHand) {
  // the tied head is not stored
  auto m = testing::BuildCounted(TinyMamba("mamba"), 1400u, 1400u * 4);
  ASSERT_TRUE(m);
  EXPECT_EQ(Shape(*m, "backbone.layers.0.mixer.in_proj.weight"), (std::vector<uint64_t>{32, 8}));
  EXPECT_EQ(Shape(*m, "backbone.layers.1.mixer.conv1d.weight"),
            (std::vector<uint64_t>{16, 1, 3}));
  EXPECT_EQ(Shape(*m, "backbone.layers.0.mixer.x_proj.weight"), (std::vector<uint64_t>{5, 16}));
  EXPECT_EQ(Shape(*m, "backbone.layers.0.mixer.dt_proj.weight"), (std::vector<uint64_t>{16, 1}));
  EXPECT_EQ(Shape(*m, "backbone.layers.0.mixer.A_log"), (std::vector<uint64_t>{16, 2}));
  EXPECT_EQ(Shape(*m, "backbone.layers.0.mixer.out_proj.bias"), (std::vector<uint64_t>{8}));
  EXPECT_EQ(FindTensor(*m, "backbone.layers.0.mixer.x_proj.bias"), nullptr);
  EXPECT_EQ(FindTensor(*m, "backbone.layers.0.mixer.b_c_rms"), nullptr);
  EXPECT_NE(FindTensor(*m, "backbone.norm_f.weight"), nullptr);
  const Tensor* head = FindTensor(*m, "lm_head.weight");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->tied_to, "backbone.embeddings.weight");
  ASSERT_EQ(m->hp.layers.size(), 2u);
  for (const auto& L : m->hp.layers) {
    EXPECT_EQ(L.mixer, LayerMixer::kMamba);
    EXPECT_EQ(L.attention, AttentionKind::kNone);
    EXPECT_TRUE(L.recurrent);
    EXPECT_EQ(L.state.conv_channels, 16u);
    EXPECT_EQ(L.state.conv_kernel, 3u);
    EXPECT_EQ(L.state.heads, 16u);
    EXPECT_EQ(L.state.elements_per_head, 2u);
  }
  EXPECT_EQ(m->no_split_patterns, (std::vector<std::string>{"backbone.layers.*"}));
  // No "intermediate_size": int(expand x hidden) = int(1.5 x 8) = 12 (conv1d [12, 1, 3]).
  auto expand = TinyMamba("mamba");
  expand.erase("intermediate_size");
  expand["expand"] = 1.5;
  auto e = BuildJson(expand);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(Shape(*e, "backbone.layers.0.mixer.conv1d.weight"),
            (std::vector<uint64_t>{12, 1, 3}));
  // An integer time_step_rank: 3 -> x_proj [3 + 4, 16], dt_proj [16, 3].
  auto rank = TinyMamba("mamba");
  rank["time_step_rank"] = 3;
  auto r = BuildJson(rank);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Shape(*r, "backbone.layers.0.mixer.x_proj.weight"), (std::vector<uint64_t>{7, 16}));
  EXPECT_EQ(Shape(*r, "backbone.layers.0.mixer.dt_proj.weight"), (std::vector<uint64_t>{16, 3}));
}

// FalconMambaConfig: use_bias false, so 656 - 32 - 8 = 616 per layer; untied head 80:
// 80 + 2 x 616 + 8 + 80 = 1400. Buffers b_c_rms [2] and dt_rms [16] per layer (not stored):
// (2 + 16) x 2 x 4 B = 144 B.
TEST(FalconMambaBuilder, TinyConfigCountsByHand) {
  auto j = TinyMamba("falcon_mamba");
  j["tie_word_embeddings"] = false;
  auto m = testing::BuildCounted(j, 1400u, 1400u * 4);
  ASSERT_TRUE(m);
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.buffer_bytes, 144u);
  EXPECT_EQ(FindTensor(*m, "backbone.layers.0.mixer.in_proj.bias"), nullptr);
  EXPECT_EQ(Shape(*m, "backbone.layers.1.mixer.b_c_rms"), (std::vector<uint64_t>{2}));
  EXPECT_EQ(Shape(*m, "backbone.layers.1.mixer.dt_rms"), (std::vector<uint64_t>{16}));
  EXPECT_NE(FindTensor(*m, "lm_head.weight"), nullptr);
  EXPECT_EQ(m->hp.layers[0].mixer, LayerMixer::kMamba);
}

// Vocab 10, hidden 8, expand 2 -> d_inner 16 = 4 heads x 4, 1 group, state 2, kernel 3.
nlohmann::json TinyMamba2() {
  return testing::TinyDecoderWith("mamba2",
                                  {{"expand", 2},
                                   {"num_heads", 4},
                                   {"head_dim", 4},
                                   {"n_groups", 1},
                                   {"state_size", 2},
                                   {"conv_kernel", 3},
                                   {"chunk_size", 64},
                                   {"num_attention_heads", nullptr},
                                   {"num_key_value_heads", nullptr},
                                   {"intermediate_size", nullptr},
                                   {"max_position_embeddings", nullptr}});
}

// conv_dim = 16 + 2 x 1 x 2 = 20. Per layer: norm 8; in_proj [16 + 20 + 4, 8] = 320; conv1d
// [20, 1, 3] 60 + bias 20 = 80; dt_bias, A_log, D 3 x 4 = 12; gated norm 16; out_proj [8, 16]
// 128 (use_bias false). Layer 564. Embeddings 80 + 2 x 564 + norm_f 8 + untied lm_head 80 = 1296.
TEST(Mamba2Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyMamba2(), 1296u);
  ASSERT_TRUE(m);
  EXPECT_EQ(Shape(*m, "backbone.layers.0.mixer.in_proj.weight"), (std::vector<uint64_t>{40, 8}));
  EXPECT_EQ(Shape(*m, "backbone.layers.0.mixer.conv1d.weight"),
            (std::vector<uint64_t>{20, 1, 3}));
  EXPECT_EQ(Shape(*m, "backbone.layers.1.mixer.norm.weight"), (std::vector<uint64_t>{16}));
  EXPECT_EQ(Shape(*m, "backbone.layers.1.mixer.dt_bias"), (std::vector<uint64_t>{4}));
  EXPECT_EQ(FindTensor(*m, "backbone.layers.0.mixer.out_proj.bias"), nullptr);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  // elements_per_head: head_dim 4 x state 2
  testing::ExpectLayer(m->hp, 1,
                       {.attention = AttentionKind::kNone,
                        .mixer = LayerMixer::kMamba2,
                        .conv_channels = 20u,
                        .conv_kernel = 3u,
                        .state_heads = 4u,
                        .elements_per_head = 8u});
  EXPECT_EQ(m->hp.ssm_chunk_size, 64u);
  EXPECT_EQ(m->hp.ssm_group_count, 1u);
  // "time_step_limit": [0.0, Infinity] as Python's json writes it: parsed, ignored.
  auto parsed = arch_test::Build(
      R"({"model_type": "mamba2", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 2,
          "num_heads": 4, "head_dim": 4, "n_groups": 1, "state_size": 2, "conv_kernel": 3,
          "torch_dtype": "float32", "time_step_limit": [0.0, Infinity]})");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(ComputeTotals(*parsed).parameters, 1296u);
  EXPECT_EQ(parsed->hp.ssm_chunk_size, 256u);  // Mamba2Config's default, said
  EXPECT_TRUE(std::any_of(parsed->assumptions.begin(), parsed->assumptions.end(),
                          [](const auto& a) { return a.find("chunk_size") != std::string::npos; }));
}

// Jamba: layer 1 attention (attn_layer_period 2, offset 1), layer 0 Mamba; layer 0 MoE
// (expert_layer_period 2, offset 0) of 3 experts. d_inner 2 x 8 = 16, state 2, kernel 3, rank 1.
nlohmann::json TinyJamba() {
  auto j = testing::TinyDecoder("jamba");  // vocab 10, hidden 8, 2 heads of 4, 1 KV head, I 12
  j["attn_layer_period"] = 2;
  j["attn_layer_offset"] = 1;
  j["expert_layer_period"] = 2;
  j["expert_layer_offset"] = 0;
  j["num_experts"] = 3;
  j["num_experts_per_tok"] = 2;
  j["mamba_expand"] = 2;
  j["mamba_d_state"] = 2;
  j["mamba_d_conv"] = 3;
  return j;
}

// Layer 0: Mamba conv1d 48 + 16; in_proj [32, 8] 256 (mamba_proj_bias false); x_proj [5, 16] 80;
//   dt_proj 16 + 16; A_log 32; D 16; out_proj 128; dt/b/c layernorms 1 + 2 + 2: 613.
//   MoE router [3, 8] 24 + 3 experts x (gate, up [12, 8], down [8, 12]: 288) = 888. Norms 16.
//   Layer 1517.
// Layer 1: q [8, 8] 64, k [4, 8] 32, v 32, o 64 = 192; dense MLP 288; norms 16: 496.
// Embeddings 80 + 1517 + 496 + final_layernorm 8 + untied lm_head 80 = 2181.
TEST(JambaBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyJamba(), 2181u);
  ASSERT_TRUE(m);
  EXPECT_EQ(Shape(*m, "model.layers.0.mamba.in_proj.weight"), (std::vector<uint64_t>{32, 8}));
  EXPECT_EQ(Shape(*m, "model.layers.0.mamba.dt_layernorm.weight"), (std::vector<uint64_t>{1}));
  EXPECT_EQ(Shape(*m, "model.layers.0.mamba.c_layernorm.weight"), (std::vector<uint64_t>{2}));
  EXPECT_EQ(Shape(*m, "model.layers.0.feed_forward.router.weight"), (std::vector<uint64_t>{3, 8}));
  EXPECT_EQ(Shape(*m, "model.layers.0.feed_forward.experts.2.down_proj.weight"),
            (std::vector<uint64_t>{8, 12}));
  EXPECT_EQ(Shape(*m, "model.layers.1.self_attn.k_proj.weight"), (std::vector<uint64_t>{4, 8}));
  EXPECT_EQ(Shape(*m, "model.layers.1.feed_forward.gate_proj.weight"),
            (std::vector<uint64_t>{12, 8}));
  EXPECT_EQ(FindTensor(*m, "model.layers.1.mamba.in_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.rotary_emb.inv_freq"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.final_layernorm.weight"), nullptr);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0,
                       {.attention = AttentionKind::kNone,
                        .mixer = LayerMixer::kMamba,
                        .moe = true,
                        .conv_channels = 16u,
                        .elements_per_head = 2u});
  testing::ExpectLayer(m->hp, 1,
                       {.attention = AttentionKind::kFull,
                        .num_kv_heads = 1u,
                        .moe = false,
                        .intermediate_size = 12u,
                        .recurrent = false});
  EXPECT_EQ(m->hp.num_experts, 3u);
  EXPECT_EQ(m->hp.experts_per_token, 2u);
  // num_experts 1: every feed_forward dense (layers_num_experts all 1): 613 + 288 + 16 = 917.
  auto dense = TinyJamba();
  dense["num_experts"] = 1;
  auto d = testing::BuildCounted(dense, 80u + 917u + 496u + 8u + 80u);
  ASSERT_TRUE(d);
}

// The recurrent state per sequence, whatever the context, in transformers' caches (model dtype,
// conv_kernel steps) and vLLM's (conv_kernel - 1 steps), bf16, 2 sequences x 4,096 tokens.
TEST(MambaFamilies, RecurrentStateBytes) {
  const KvCacheOptions hf{.context_tokens = 4096, .batch = 2, .model_dtype = Dtype::kBF16};
  const KvCacheOptions vllm{.context_tokens = 4096, .batch = 2, .model_dtype = Dtype::kBF16,
                            .conv_full_kernel = false, .recurrent_state_fp32 = false};
  auto m = BuildJson(TinyMamba("mamba"));
  ASSERT_TRUE(m) << m.error().message;
  // conv 16 x 3 x 2 B = 96 + SSM 16 x 2 x 2 B = 64: 160 per layer and sequence (not float32:
  // MambaCache is made in the model dtype), x 2 layers x 2 sequences = 640.
  auto t = EstimateKvCache(*m, hf);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->state_bytes, 640u);
  EXPECT_EQ(t->bytes, 640u);
  EXPECT_EQ(t->bytes_per_token, 0u);
  // vLLM: conv 16 x 2 x 2 = 64 + 64 = 128, x 4 = 512.
  auto v = EstimateKvCache(*m, vllm);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->state_bytes, 512u);
  // Mamba-2: conv 20 x 3 x 2 = 120 + SSM 4 heads x 8 x 2 = 64: 184, x 4 = 736.
  auto m2 = BuildJson(TinyMamba2());
  ASSERT_TRUE(m2) << m2.error().message;
  auto t2 = EstimateKvCache(*m2, hf);
  ASSERT_TRUE(t2) << t2.error().message;
  EXPECT_EQ(t2->state_bytes, 736u);
  // Jamba: layer 0's state (Mamba-1, 160 B per sequence) x 2 = 320; layer 1 attention: 1 KV
  // head x 4 x 2 (K, V) x 2 B = 16 B per token, x 4,096 x 2 = 131,072.
  auto j = BuildJson(TinyJamba());
  ASSERT_TRUE(j) << j.error().message;
  auto tj = EstimateKvCache(*j, hf);
  ASSERT_TRUE(tj) << tj.error().message;
  EXPECT_EQ(tj->state_bytes, 320u);
  EXPECT_EQ(tj->bytes_per_token, 16u);
  EXPECT_EQ(tj->bytes, 320u + 131072u);
}

TEST(MambaFamilies, HostileConfigs) {
  testing::ExpectPatchRejected(TinyMamba("mamba"), {{"hidden_size", nullptr}}, "hidden_size");
  testing::ExpectPatchRejected(TinyMamba("mamba"), {{"state_size", 0}}, "state_size");
  testing::ExpectPatchRejected(TinyMamba("falcon_mamba"), {{"time_step_rank", "big"}},
                               "time_step_rank");
  testing::ExpectPatchRejected(TinyMamba("mamba"), {{"num_hidden_layers", "two"}},
                               "num_hidden_layers");
  testing::ExpectPatchRejected(TinyMamba("mamba"), {{"intermediate_size", nullptr}, {"expand", -1}},
                               "expand");
  // 3 x 4 != 16
  testing::ExpectPatchRejected(TinyMamba2(), {{"num_heads", 3}}, "num_heads");
  testing::ExpectPatchRejected(TinyMamba2(), {{"n_groups", 0}}, "n_groups");
  testing::ExpectHostileRejected("jamba");
  // must be below the period
  testing::ExpectPatchRejected(TinyJamba(), {{"attn_layer_offset", 2}}, "attn_layer_offset");
  testing::ExpectPatchRejected(TinyJamba(), {{"expert_layer_period", 0}}, "expert_layer_offset");
  testing::ExpectPatchRejected(TinyJamba(), {{"mamba_d_conv", 0}}, "mamba_d_conv");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
