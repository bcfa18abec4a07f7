// Falcon-H1 (falcon_h1): a two-layer config counted by hand (attention and a Mamba-2 mixer in
// every layer, the optional gated norm, projectors_bias), the layer facts for the KV cache and
// the Mamba state, the class defaults (mamba_d_ssm 1024), hostile configs, and
// Falcon-H1-0.5B at full size.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyFalconH1() {
  auto j = testing::TinyDecoder("falcon_h1");  // vocab 10, hidden 8, 2 heads of 4, 1 KV, I 12
  j["architectures"] = {"FalconH1ForCausalLM"};
  j["head_dim"] = 4;
  j["mamba_d_ssm"] = 16;
  j["mamba_n_heads"] = 2;
  j["mamba_d_head"] = 8;
  j["mamba_n_groups"] = 1;
  j["mamba_d_state"] = 2;
  j["mamba_d_conv"] = 3;
  j["mamba_expand"] = 2;
  j["mamba_chunk_size"] = 4;
  j["mamba_conv_bias"] = true;
  j["mamba_proj_bias"] = false;
  j["projectors_bias"] = false;
  j["mamba_rms_norm"] = true;
  j["tie_word_embeddings"] = false;
  return j;
}

// Hidden 8, vocab 10, untied head: embed 80 + lm_head 80.
// Per layer: input_layernorm 8; mamba: d_ssm 16, conv_dim 16 + 2 x 1 x 2 = 20, in_proj
// [16 + 20 + 2, 8] 304, conv1d [20, 1, 3] 60 + bias 20, dt_bias/A_log/D 3 x 2 = 6, norm [16] 16,
// out_proj [8, 16] 128: 534; attention q 64, k 32, v 32, o 64 = 192; pre_ff_layernorm 8;
// feed_forward 3 x 96 = 288: 8 + 534 + 192 + 8 + 288 = 1030.
// model.final_layernorm 8: 80 + 80 + 2 x 1030 + 8 = 2228. Buffers (not parameters): per layer
// mamba.mup_vector [1, 1, 2 x 16 + 2 x 1 x 2 + 2 = 38], model.rotary_emb.inv_freq [2].
TEST(FalconH1Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyFalconH1(), 2228u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.0.mamba.in_proj.weight", {38, 8});
  EXPECT_NE(FindTensor(*m, "model.layers.0.mamba.norm.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.1.self_attn.k_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.1.feed_forward.down_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.final_layernorm.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mamba.out_proj.bias"), nullptr);
  const Tensor* mup = FindTensor(*m, "model.layers.1.mamba.mup_vector");
  ASSERT_NE(mup, nullptr);
  EXPECT_EQ(mup->shape, (std::vector<uint64_t>{1, 1, 38}));
  EXPECT_EQ(mup->kind, TensorKind::kNonPersistentBuffer);
  testing::ExpectShape(*m, "model.rotary_emb.inv_freq", {2});
  // Each layer keeps a KV cache and a Mamba-2 state.
  ASSERT_EQ(m->hp.layers.size(), 2u);
  // elements_per_head: mamba_d_head 8 x d_state 2
  testing::ExpectLayer(m->hp, 1,
                       {.attention = AttentionKind::kFull,
                        .mixer = LayerMixer::kMamba2,
                        .num_kv_heads = 1u,
                        .head_dim_k = 4u,
                        .intermediate_size = 12u,
                        .recurrent = true,
                        .conv_channels = 20u,
                        .conv_kernel = 3u,
                        .state_heads = 2u,
                        .elements_per_head = 16u});
  EXPECT_EQ(m->hp.ssm_inner_size, 16u);
  EXPECT_EQ(m->hp.ssm_chunk_size, 4u);
}

// mamba_rms_norm false: no mamba.norm (-16 per layer): 2196. projectors_bias: out_proj.bias [8]
// per layer: 2228 + 16 = 2244. mamba_d_ssm null: mamba_expand x H = 16 as well, same count.
TEST(FalconH1Builder, OptionalNormBiasAndInnerSize) {
  auto j = TinyFalconH1();
  j["mamba_rms_norm"] = false;
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 2196u);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mamba.norm.weight"), nullptr);
  j = TinyFalconH1();
  j["projectors_bias"] = true;
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 2244u);
  EXPECT_NE(FindTensor(*m, "model.layers.0.mamba.out_proj.bias"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mamba.in_proj.bias"), nullptr);
  j = TinyFalconH1();
  j["mamba_d_ssm"] = nullptr;
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 2228u);
}

// Absent keys take FalconH1Config's defaults and say so: mamba_d_ssm 1024 (not expand x H),
// mamba_rms_norm false, mamba_chunk_size 256, an untied head.
TEST(FalconH1Builder, ClassDefaultsArePrinted) {
  auto j = TinyFalconH1();
  for (const char* key : {"mamba_d_ssm", "mamba_d_head", "mamba_rms_norm", "mamba_chunk_size",
                          "tie_word_embeddings"}) {
    j.erase(key);
  }
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.ssm_inner_size, 1024u);
  EXPECT_EQ(m->hp.ssm_chunk_size, 256u);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mamba.norm.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "lm_head.weight"), nullptr);
  int said = 0;
  for (const auto& a : m->assumptions) {
    for (const char* key : {"\"mamba_d_ssm\" absent", "\"mamba_rms_norm\" absent",
                            "\"mamba_chunk_size\" absent", "\"tie_word_embeddings\" absent"}) {
      said += a.find(key) != std::string::npos;
    }
  }
  EXPECT_EQ(said, 4);
}

TEST(FalconH1Builder, HostileConfigs) {
  testing::ExpectPatchRejected(TinyFalconH1(), {{"hidden_size", nullptr}}, "hidden_size");
  // 2 x 7 != mamba_d_ssm 16
  testing::ExpectPatchRejected(TinyFalconH1(), {{"mamba_d_head", 7}}, "mamba_d_ssm");
  testing::ExpectPatchRejected(TinyFalconH1(), {{"mamba_d_conv", 0}}, "mamba_d_conv");
  testing::ExpectPatchRejected(TinyFalconH1(), {{"mamba_rms_norm", "yes"}}, "mamba_rms_norm");
  testing::ExpectPatchRejected(TinyFalconH1(), {{"vocab_size", uint64_t{1} << 50}}, "vocab_size");
}

// Falcon-H1-0.5B: the config of tiiuae/Falcon-H1-0.5B-Base as NVIDIA Megatron-Bridge's test
// copies it (tests/unit_tests/models/falcon_h1, FALCON_H1_500M_CONFIG), the keys that shape
// tensors. That copy leaves out "mamba_d_ssm"; FalconH1Config accepts only
// mamba_n_heads x mamba_d_head = 24 x 64 = 1536 there (its validate_architecture), so the test
// writes 1536.
// By hand: d_ssm 1536, conv_dim 1536 + 2 x 128 = 1792. Per layer: in_proj (1536 + 1792 + 24) x
// 1024 = 3,432,448; conv1d 1792 x 4 + 1792 = 8960; dt_bias/A_log/D 72; no gated norm; out_proj
// 1024 x 1536 = 1,572,864; attention 2 x 1024 x 512 + 2 x 1024 x 128 = 1,310,720; feed-forward
// 3 x 1024 x 2048 = 6,291,456; norms 2048: 12,618,568. 36 layers 454,268,448; embed and untied
// lm_head 2 x 32784 x 1024 = 67,141,632; final norm 1024: 521,411,104.
// The model card calls it "0.5B" (rounded: 0.52B). No safetensors index of it was found in the
// public mirrors searched, so stored bytes are checked only against this arithmetic.
TEST(FalconH1Builder, FalconH1HalfBCountsItsParameters) {
  const nlohmann::json j = {
      {"architectures", {"FalconH1ForCausalLM"}}, {"model_type", "falcon_h1"},
      {"attention_bias", false}, {"head_dim", 64}, {"hidden_act", "silu"}, {"hidden_size", 1024},
      {"intermediate_size", 2048}, {"mamba_chunk_size", 128}, {"mamba_conv_bias", true},
      {"mamba_d_conv", 4}, {"mamba_d_head", 64}, {"mamba_d_ssm", 1536}, {"mamba_d_state", 128},
      {"mamba_expand", 2}, {"mamba_n_groups", 1}, {"mamba_n_heads", 24},
      {"mamba_norm_before_gate", false}, {"mamba_proj_bias", false}, {"mamba_rms_norm", false},
      {"mamba_use_mlp", true}, {"max_position_embeddings", 16384}, {"mlp_bias", false},
      {"num_attention_heads", 8}, {"num_hidden_layers", 36}, {"num_key_value_heads", 2},
      {"projectors_bias", false}, {"rms_norm_eps", 1e-5}, {"tie_word_embeddings", false},
      {"torch_dtype", "bfloat16"}, {"vocab_size", 32784}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  const auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 521'411'104u);
  EXPECT_EQ(t.stored_bytes, 2u * 521'411'104u);  // bfloat16, nothing stored twice
  EXPECT_EQ(m->hp.ssm_chunk_size, 128u);
  EXPECT_EQ(m->hp.layers[35].state.elements_per_head, 64u * 128u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
