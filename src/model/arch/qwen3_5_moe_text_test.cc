// qwen3_5_moe_text (the Qwen3.5 language model alone) and Qwen3.5 MoE checkpoints whose routed
// experts NVIDIA ModelOpt quantized (stored per expert, expert_kit.h).

#include <gtest/gtest.h>

#include "formats/hf_config_json.h"
#include "memfit/estimate_load.h"
#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

// Two layers, hidden 8, float32: layer 0 gated delta-net, layer 1 gated full attention; both MoE
// with 2 experts of width 3 and a shared expert of width 3.
nlohmann::json TinyQwen35MoeText() {
  return testing::TinyDecoderWith("qwen3_5_moe_text",
                                  {{"architectures", {"Qwen3_5MoeForCausalLM"}},
                                   {"tie_word_embeddings", false},
                                   {"head_dim", 4},
                                   {"linear_num_key_heads", 1},
                                   {"linear_num_value_heads", 2},
                                   {"linear_key_head_dim", 4},
                                   {"linear_value_head_dim", 4},
                                   {"linear_conv_kernel_dim", 2},
                                   {"num_experts", 2},
                                   {"num_experts_per_tok", 1},
                                   {"moe_intermediate_size", 3},
                                   {"shared_expert_intermediate_size", 3},
                                   {"mtp_num_hidden_layers", 0},
                                   {"layer_types", {"linear_attention", "full_attention"}},
                                   {"intermediate_size", nullptr},
                                   {"max_position_embeddings", nullptr}});
}

// embed 10 x 8 = 80. Layer 0: input norm 8; delta-net (key dim 1 x 4 = 4, value dim 2 x 4 = 8,
// conv dim 2 x 4 + 8 = 16): in_proj_qkv 8 x 16 = 128, in_proj_z 8 x 8 = 64, in_proj_b 16,
// in_proj_a 16, conv1d [16, 1, 2] = 32, dt_bias 2, A_log 2, norm 4, out_proj 64: 328; MoE: gate
// 2 x 8 = 16, experts gate_up [2, 6, 8] = 96 and down [2, 8, 3] = 48, shared expert 3 x 24 = 72,
// shared_expert_gate 8: 240; post norm 8: 584. Layer 1: 8 + q_proj 8 x (2 x 4 x 2) = 128 + k 32
// + v 32 + o 64 + q/k norms 8 + 240 + 8 = 520. Final norm 8, lm_head 80: 1272 parameters, all
// stored in float32: 5088 bytes.
TEST(Qwen35MoeTextBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyQwen35MoeText(), 1272u, 5088u);
  ASSERT_TRUE(m);
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.experts.gate_up_proj"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.0.linear_attn.in_proj_qkv.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "lm_head.weight"), nullptr);
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_TRUE(m->hp.layers[0].recurrent);
  EXPECT_EQ(m->hp.layers[1].num_kv_heads, 1u);
}

// ModelOpt NVFP4 with attention, delta-net, shared experts and lm_head excluded: the routed
// experts are stored per expert. gate_proj [3, 8]: weight [3, 4] uint8 = 12 bytes, weight_scale
// [3, 1] E4M3 = 3, weight_scale_2 and input_scale float32 = 8: 23; up_proj 23; down_proj [8, 3]:
// weight [8, 2] = 16, weight_scale [8, 1] = 8, + 8 = 32. 78 bytes an expert, 156 a layer instead
// of (96 + 48) x 4 = 576: 5088 - 2 x 576 + 2 x 156 = 4248 bytes; parameters stay 1272 (logical).
TEST(Qwen35MoeTextBuilder, Nvfp4ExpertsPerExpertByHand) {
  auto j = TinyQwen35MoeText();
  j["quantization_config"] = {
      {"quant_method", "modelopt"},
      {"quant_algo", "NVFP4"},
      {"ignore", {"lm_head", "*linear_attn*", "*self_attn*", "*shared_expert*"}}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  const auto totals = ComputeTotals(*m);
  EXPECT_EQ(totals.stored_bytes, 4248u);
  EXPECT_EQ(totals.parameters, 1272u);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mlp.experts.gate_up_proj"), nullptr);
  const Tensor* down = FindTensor(*m, "model.layers.1.mlp.experts.1.down_proj.weight");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->dtype, Dtype::kU8);
  EXPECT_EQ(down->shape, (std::vector<uint64_t>{8, 2}));
  const Tensor* scale = FindTensor(*m, "model.layers.1.mlp.experts.1.down_proj.weight_scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->dtype, Dtype::kF8E4M3);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mlp.shared_expert.up_proj.weight")->dtype, Dtype::kF32);
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
}

// ModelOpt MIXED_PRECISION (nvidia/Qwen3.6-35B-A3B-NVFP4's form): "quantized_layers" names the
// experts module and lm_head. Layer 0's experts per expert (156 bytes, not 576); layer 1's stay
// fused in float32; lm_head [10, 8] in NVFP4: weight [10, 4] = 40 + weight_scale [10, 1] = 10 + 8
// = 58 bytes instead of 320. 5088 - 576 + 156 - 320 + 58 = 4406 bytes.
TEST(Qwen35MoeTextBuilder, MixedPrecisionExpertsAndHeadByHand) {
  auto j = TinyQwen35MoeText();
  j["quantization_config"] = {
      {"quant_method", "modelopt"},
      {"quant_algo", "MIXED_PRECISION"},
      {"quantized_layers",
       {{"model.layers.0.mlp.experts", {{"quant_algo", "W4A16_NVFP4"}, {"group_size", 16}}},
        {"lm_head", {{"quant_algo", "W4A16_NVFP4"}, {"group_size", 16}}}}}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 4406u);
  EXPECT_EQ(ComputeTotals(*m).parameters, 1272u);
  EXPECT_NE(FindTensor(*m, "model.layers.0.mlp.experts.0.gate_proj.weight_scale_2"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.experts.gate_up_proj"), nullptr);
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->dtype, Dtype::kU8);
}

// The NVIDIA NVFP4 releases of Qwen3.5/3.6 MoE build exactly. Published totals (model cards,
// Qwen/Qwen3.5-397B-A17B, Qwen/Qwen3.5-122B-A10B, Qwen/Qwen3.6-35B-A3B: 397B, 122B, 35B total
// parameters, vision encoder included, the sizes their names state): loaded logical parameters
// (MTP layers not loaded) 396,802,360,816, 122,562,817,776 and 35,107,181,936, within 1% of
// them (122.56B: the card truncates). With the quantization ignored, the 397B release has
// exactly the parameters of the bfloat16 Qwen/Qwen3.5-397B-A17B config (same architecture).
// nvidia/Qwen3.6-35B-A3B-NVFP4 stores 23,407,590,456 bytes by this count, the 23.4 GB its
// deployment notes quote (SGLang/club-3090 PR #607), not an index total_size.
TEST(Qwen35MoeTextBuilder, RealNvfp4Releases) {
  auto eval = memfit::testing::EvalDir();
  if (!eval) GTEST_SKIP() << "../shared/eval is absent: the real Qwen3.5 NVFP4 configs need it";
  struct Case {
    const char* dir;
    double billions;
  };
  for (const Case& c : {Case{"recent/nvidia__Qwen3.5-397B-A17B-NVFP4", 397},
                        Case{"recent/nvidia__Qwen3.5-122B-A10B-NVFP4", 122},
                        Case{"recent/nvidia__Qwen3.6-35B-A3B-NVFP4", 35}}) {
    auto m = testing::BuildEvalConfig(c.dir);
    if (!m) GTEST_SKIP() << c.dir << " absent";
    for (const auto& a : m->assumptions) {
      EXPECT_EQ(a.find("approximate"), std::string::npos) << c.dir << ": " << a;
    }
    uint64_t loaded = 0;
    for (const auto& t : m->tensors) {
      if (t.kind == TensorKind::kParameter && t.tied_to.empty() && t.loaded) {
        loaded += LogicalParams(t);
      }
    }
    EXPECT_EQ(loaded, ComputeTotals(*m).parameters) << c.dir;
    EXPECT_NEAR(static_cast<double>(loaded) / 1e9 / c.billions, 1.0, 0.01) << c.dir;
    EXPECT_NE(FindTensor(*m, "model.language_model.layers.0.mlp.experts.0.gate_proj.weight"),
              nullptr)
        << c.dir;
  }
  auto logical = testing::BuildEvalConfig("recent/nvidia__Qwen3.5-397B-A17B-NVFP4",
                                          {.ignore_quantization = true});
  auto bf16 = testing::BuildEvalConfig("recent/Qwen__Qwen3.5-397B-A17B");
  if (!logical || !bf16) GTEST_SKIP() << "Qwen__Qwen3.5-397B-A17B absent";
  EXPECT_EQ(ComputeTotals(*logical).parameters, ComputeTotals(*bf16).parameters);
}

// The dense Qwen3.5 releases against the Hub's safetensors totals (Qwen/Qwen3.5-0.8B 873,438,784,
// 2B 2,274,069,824, 4B 4,659,865,088, 9B 9,653,104,368; the 9B index: BF16 9,653,100,528 + F32
// 3,840). Text dimensions as the released config.json files give them (quoted by public ports);
// the 0.8B/2B/4B vision tower is depth 24 / hidden 1024 / 16 heads / 4096 for 2B and 4B, depth 12
// / 768 / 12 / 3072 for 0.8B, 27 / 1152 / 16 / 4304 for 9B. Stored bytes = 2 x total + 2 x the
// float32 elements (A_log and norm of each linear-attention layer: value heads + 128).
nlohmann::json DenseQwen35(uint64_t hidden, uint64_t layers, uint64_t inter, uint64_t heads,
                           uint64_t kv, uint64_t value_heads, bool tie, nlohmann::json vision) {
  nlohmann::json types = nlohmann::json::array();
  for (uint64_t i = 0; i < layers; ++i) {
    types.push_back(i % 4 == 3 ? "full_attention" : "linear_attention");
  }
  vision["patch_size"] = 16;
  vision["temporal_patch_size"] = 2;
  vision["spatial_merge_size"] = 2;
  vision["num_position_embeddings"] = 2304;
  vision["out_hidden_size"] = hidden;
  return {{"architectures", {"Qwen3_5ForConditionalGeneration"}},
          {"model_type", "qwen3_5"},
          {"tie_word_embeddings", tie},
          {"text_config",
           {{"hidden_size", hidden},
            {"num_hidden_layers", layers},
            {"intermediate_size", inter},
            {"num_attention_heads", heads},
            {"num_key_value_heads", kv},
            {"head_dim", 256},
            {"linear_num_key_heads", 16},
            {"linear_num_value_heads", value_heads},
            {"linear_key_head_dim", 128},
            {"linear_value_head_dim", 128},
            {"linear_conv_kernel_dim", 4},
            {"attn_output_gate", true},
            {"vocab_size", 248320},
            {"layer_types", types},
            {"mtp_num_hidden_layers", 1},
            {"tie_word_embeddings", tie},
            {"dtype", "bfloat16"},
            {"partial_rotary_factor", 0.25}}},
          {"vision_config", vision}};
}

TEST(Qwen35MoeTextBuilder, RealDenseReleasesMatchTheHubTotals) {
  const nlohmann::json small = {
      {"depth", 24}, {"hidden_size", 1024}, {"num_heads", 16}, {"intermediate_size", 4096}};
  struct Case {
    nlohmann::json config;
    uint64_t hub_total, float32_elements;
  };
  const Case cases[] = {
      {DenseQwen35(
           1024, 24, 3584, 8, 2, 16, true,
           {{"depth", 12}, {"hidden_size", 768}, {"num_heads", 12}, {"intermediate_size", 3072}}),
       873438784, 18 * (16 + 128)},
      {DenseQwen35(2048, 24, 6144, 8, 2, 16, true, small), 2274069824, 18 * (16 + 128)},
      {DenseQwen35(2560, 32, 9216, 16, 4, 32, true, small), 4659865088, 24 * (32 + 128)},
      {DenseQwen35(
           4096, 32, 12288, 16, 4, 32, false,
           {{"depth", 27}, {"hidden_size", 1152}, {"num_heads", 16}, {"intermediate_size", 4304}}),
       9653104368, 24 * (32 + 128)},
  };
  for (const auto& c : cases) {
    auto m = BuildJson(c.config);
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_EQ(ComputeTotals(*m).stored_bytes, 2 * c.hub_total + 2 * c.float32_elements)
        << c.hub_total;
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
