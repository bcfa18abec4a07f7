#include <gtest/gtest.h>

#include <algorithm>

#include "formats/hf_config_json.h"
#include "model/arch/arch_test_util.h"
#include "model/arch/families.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::ExpectError;
using testing::FindTensor;

nlohmann::json TinyGemma4() {
  nlohmann::json text = {
      {"vocab_size", 10},         {"hidden_size", 8},
      {"num_hidden_layers", 2},   {"num_attention_heads", 2},
      {"num_key_value_heads", 1}, {"head_dim", 4},
      {"global_head_dim", 8},     {"num_global_key_value_heads", 1},
      {"attention_k_eq_v", true}, {"intermediate_size", 12},
      {"sliding_window", 16},     {"layer_types", {"sliding_attention", "full_attention"}}};
  return {{"model_type", "gemma4"},
          {"architectures", {"Gemma4ForConditionalGeneration"}},
          {"dtype", "float32"},
          {"tie_word_embeddings", true},
          {"text_config", text}};
}

// Layer 0 (sliding, head_dim 4, 1 KV head): input norm 8, q 8 x 8 = 64, q_norm 4, k_norm 4,
// k 8 x 4 = 32, v 32, o 64, gate/up/down 3 x 8 x 12 = 288, three more norms 24: 520.
// Layer 1 (full: global_head_dim 8, k_eq_v with 1 global KV head, no v_proj): 8 + q 8 x 16 = 128
// + q/k norms 16 + k 8 x 8 = 64 + o 128 + 288 + 24 = 656. Embeddings 80 + norm 8, lm_head tied:
// 1264 parameters; two persistent layer_scalar [1] buffers: (1264 + 2) x 4 = 5064 stored bytes.
TEST(Gemma4Builder, TinyTextCountsByHand) {
  auto m = testing::BuildCounted(TinyGemma4(), 1264u, 5064u);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0,
                       {.attention = AttentionKind::kSliding,
                        .head_dim_k = 4u,
                        .window_tokens = 16u,
                        .k_eq_v = false});
  testing::ExpectLayer(
      m->hp, 1,
      {.attention = AttentionKind::kFull, .num_kv_heads = 1u, .head_dim_k = 8u, .k_eq_v = true});
  EXPECT_EQ(FindTensor(*m, "model.language_model.layers.1.self_attn.v_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->tied_to, "model.language_model.embed_tokens.weight");
}

// Vision tower (hidden 4, 1 layer, 2 heads of 2, intermediate 6, patch 2): input_proj 4 x 12 =
// 48, position_embedding_table 2 x 5 x 4 = 40; layer: 4 + q/k/v/o 4 x 16 + q/k norms 4 + MLP
// 3 x 4 x 6 = 72 + three norms 12 = 156; embed_vision 4 x 8 = 32: 276 parameters.
// std_bias/std_scale are Gemma4VisionModel's register_buffer (persistent): stored (8 x 4 bytes),
// not parameters; the encoder's rotary inv_freq/original_inv_freq are not stored.
TEST(Gemma4Builder, VisionTowerIsAComponent) {
  auto j = TinyGemma4();
  j["vision_config"] = {{"hidden_size", 4},
                        {"num_hidden_layers", 1},
                        {"num_attention_heads", 2},
                        {"num_key_value_heads", 2},
                        {"head_dim", 2},
                        {"intermediate_size", 6},
                        {"patch_size", 2},
                        {"position_embedding_size", 5},
                        {"standardize", true}};
  auto m = testing::BuildCounted(j, 1264u + 276u, 5064u + (276u + 8u) * 4u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_tower"), 244u);
  const Tensor* std_bias = FindTensor(*m, "model.vision_tower.std_bias");
  ASSERT_NE(std_bias, nullptr);
  EXPECT_EQ(std_bias->kind, TensorKind::kBuffer);
  EXPECT_TRUE(std_bias->stored);
  const Tensor* q =
      FindTensor(*m, "model.vision_tower.encoder.layers.0.self_attn.q_proj.linear.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->component, "vision_tower");
  j["vision_config"]["use_clipped_linears"] = true;  // 7 linears x 4 scalar buffers, stored
  auto clipped = BuildJson(j);
  ASSERT_TRUE(clipped) << clipped.error().message;
  EXPECT_EQ(ComputeTotals(*clipped).stored_bytes, ComputeTotals(*m).stored_bytes + 7u * 4u * 4u);
}

// enable_moe_block adds per layer: router.proj 2 x 8 = 16, router.scale 8, per_expert_scale 2,
// gate_up_proj 2 x 6 x 8 = 96, down_proj 2 x 8 x 3 = 48, three norms 24: 194 (x 2 layers).
TEST(Gemma4Builder, MoeBlockAndHostileConfigs) {
  auto j = TinyGemma4();
  j["text_config"]["enable_moe_block"] = true;
  j["text_config"]["num_experts"] = 2;
  j["text_config"]["top_k_experts"] = 1;
  j["text_config"]["moe_intermediate_size"] = 3;
  auto m = testing::BuildCounted(j, 1264u + 2u * 194u);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->hp.layers[0].moe);
  j["text_config"].erase("num_experts");
  ExpectError(j, "num_experts");
  testing::ExpectPatchRejected(TinyGemma4(), {{"text_config", {{"layer_types", nullptr}}}},
                               "layer_types");
  testing::ExpectPatchRejected(TinyGemma4(),
                               {{"text_config", {{"num_global_key_value_heads", nullptr}}}},
                               "num_global_key_value_heads");
  testing::ExpectPatchRejected(TinyGemma4(), {{"text_config", {{"num_kv_shared_layers", 3}}}},
                               "num_kv_shared_layers");
  testing::ExpectPatchRejected(
      TinyGemma4(), {{"text_config", {{"hidden_size", uint64_t{1} << 45}}}}, "hidden_size");
  testing::ExpectPatchRejected(TinyGemma4(), {{"text_config", nullptr}}, "text_config");
}

// Audio tower (transformers Gemma4AudioModel; hidden 8, 1 layer, 2 heads of 4, channels [8, 4],
// kernel 3, output_proj_dims 6). Subsampling: conv 8 x 1 x 3 x 3 = 72 + norm 8, conv 4 x 8 x 9
// = 288 + norm 4, input_proj_linear 8 x (8 / 4 x 4) = 64: 436. Layer: two feed-forwards
// 2 x (2 x 8 x 32 + 16) = 1056; self_attn q/k/v/post 4 x 64 + relative_k_proj 64 +
// per_dim_scale 4 = 324; lconv1d linear_start 16 x 8 + linear_end 64 + depthwise 8 x 3 + two
// norms 16 = 232; three norms 24: 1636. output_proj 6 x 8 + 6 = 54; embed_audio 8 x 6 = 48:
// 2174 parameters, float32. With use_clipped_linears (the default): ten clippable linears of 4
// scalar buffers each, 160 bytes more.
TEST(Gemma4Builder, AudioTowerCountsByHand) {
  auto j = TinyGemma4();
  j["audio_config"] = {{"hidden_size", 8},
                       {"num_hidden_layers", 1},
                       {"num_attention_heads", 2},
                       {"subsampling_conv_channels", {8, 4}},
                       {"conv_kernel_size", 3},
                       {"output_proj_dims", 6},
                       {"use_clipped_linears", false}};
  auto m = testing::BuildCounted(j, 1264u + 2174u, 5064u + 2174u * 4u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "audio_tower"), 2126u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "embed_audio"), 48u);
  testing::ExpectShape(*m, "model.audio_tower.layers.0.lconv1d.depthwise_conv1d.weight", {8, 1, 3});
  testing::ExpectShape(*m, "model.audio_tower.subsample_conv_projection.input_proj_linear.weight",
                       {8, 8});
  j["audio_config"].erase("use_clipped_linears");
  auto clipped = BuildJson(j);
  ASSERT_TRUE(clipped) << clipped.error().message;
  EXPECT_EQ(ComputeTotals(*clipped).stored_bytes, ComputeTotals(*m).stored_bytes + 160u);
  auto bad = j;
  bad["audio_config"]["num_attention_heads"] = 3;
  ExpectError(bad, "num_attention_heads");
  bad = j;
  bad["audio_config"]["subsampling_conv_channels"] = {8};
  ExpectError(bad, "subsampling_conv_channels");
}

// google/gemma-4-E2B-it's audio tower: the audio_config of the released checkpoint (hidden 1024,
// 12 layers, 8 heads, channels [128, 32], kernel 5, output_proj_dims 1536; as quoted by
// ollama's x/models/gemma4 tests), counted by hand from the module above: subsampling 1,152 +
// 128 + 36,864 + 32 + 1,048,576 = 1,086,752; per layer 16,781,312 + 5,243,008 + 3,152,896 +
// 3,072 = 25,180,288 (x 12 = 302,163,456); output_proj 1,574,400: 304,824,608 (the card's
// "~300M" audio encoder); embed_audio 1536 x 1536 = 2,359,296.
TEST(Gemma4Builder, RealE2bAudioTowerByHand) {
  auto j = TinyGemma4();
  j["text_config"]["hidden_size"] = 1536;  // E2B's text hidden size, the embed_audio output
  j["audio_config"] = {{"model_type", "gemma4_audio"},
                       {"hidden_size", 1024},
                       {"num_hidden_layers", 12},
                       {"num_attention_heads", 8},
                       {"subsampling_conv_channels", {128, 32}},
                       {"conv_kernel_size", 5},
                       {"output_proj_dims", 1536},
                       {"use_clipped_linears", true}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(arch_test::ComponentParameters(*m, "audio_tower"), 304824608u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "embed_audio"), 2359296u);
}

// Shared-KV layers (num_kv_shared_layers) hold no k/v projections or norms; with
// use_double_wide_mlp their MLP is twice as wide. Layer 1 loses k_norm 8 + k_proj 64 and gains
// 3 x 8 x 12 = 288.
TEST(Gemma4Builder, SharedKvLayers) {
  auto j = TinyGemma4();
  j["text_config"]["num_kv_shared_layers"] = 1;
  j["text_config"]["use_double_wide_mlp"] = true;
  // Layer 1's k_norm and k_proj (no v_proj: k_eq_v) stay in the checkpoint, not loaded:
  // (1264 + 288 + 2 layer_scalars) x 4 bytes stored with them.
  auto m = testing::BuildCounted(j, 1264u - 72u + 288u, (1264u + 288u + 2u) * 4u);
  ASSERT_TRUE(m);
  testing::ExpectLayer(m->hp, 1, {.intermediate_size = 24u, .kv_shared = true});
  testing::ExpectLayer(m->hp, 0, {.kv_shared = false});
  const Tensor* k = FindTensor(*m, "model.language_model.layers.1.self_attn.k_proj.weight");
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->stored);
  EXPECT_FALSE(k->loaded);
  EXPECT_TRUE(FindTensor(*m, "model.language_model.layers.0.self_attn.k_proj.weight")->loaded);
}

// google/gemma-4-E2B-it and E4B-it against the Hub: 5,123,178,051 and 7,996,156,490 elements
// (the Hub's count leaves out rank-0 tensors: the 928 clip scalars, 16 x 7 x 4 of the vision
// tower and 12 x 10 x 4 of the audio tower), and E4B's single model.safetensors holds 2,130
// tensors. All bfloat16: stored bytes 2 x (count + 928). Configs: the released dimensions as
// public ports quote them (text, the audio_config above, vision = Gemma4VisionConfig's defaults
// with use_clipped_linears). The KV-shared layers' k_proj/v_proj/k_norm are part of these totals.
nlohmann::json EModel(uint64_t hidden, uint64_t layers, uint64_t inter, uint64_t kv,
                      uint64_t shared, uint64_t period, bool double_wide) {
  nlohmann::json types = nlohmann::json::array();
  for (uint64_t i = 0; i < layers; ++i) {
    types.push_back(i % period == period - 1 ? "full_attention" : "sliding_attention");
  }
  return {{"model_type", "gemma4"},
          {"architectures", {"Gemma4ForConditionalGeneration"}},
          {"dtype", "bfloat16"},
          {"text_config",
           {{"hidden_size", hidden},
            {"num_hidden_layers", layers},
            {"intermediate_size", inter},
            {"num_attention_heads", 8},
            {"num_key_value_heads", kv},
            {"head_dim", 256},
            {"global_head_dim", 512},
            {"vocab_size", 262144},
            {"vocab_size_per_layer_input", 262144},
            {"hidden_size_per_layer_input", 256},
            {"num_kv_shared_layers", shared},
            {"use_double_wide_mlp", double_wide},
            {"sliding_window", 512},
            {"layer_types", types}}},
          {"vision_config",
           {{"hidden_size", 768},
            {"num_hidden_layers", 16},
            {"num_attention_heads", 12},
            {"head_dim", 64},
            {"intermediate_size", 3072},
            {"patch_size", 16},
            {"position_embedding_size", 10240},
            {"use_clipped_linears", true}}},
          {"audio_config",
           {{"hidden_size", 1024},
            {"num_hidden_layers", 12},
            {"num_attention_heads", 8},
            {"subsampling_conv_channels", {128, 32}},
            {"conv_kernel_size", 5},
            {"output_proj_dims", 1536},
            {"use_clipped_linears", true}}}};
}

TEST(Gemma4Builder, RealE2bAndE4bMatchTheHubCounts) {
  struct Case {
    nlohmann::json config;
    uint64_t hub_elements, parameters;
    size_t stored_tensors;
  };
  const Case cases[] = {{EModel(1536, 35, 6144, 1, 20, 5, true), 5123178051, 5104297504, 2011},
                        {EModel(2560, 42, 10240, 2, 18, 6, false), 7996156490, 7941100832, 2130}};
  for (const auto& c : cases) {
    auto m = BuildJson(c.config);
    ASSERT_TRUE(m) << m.error().message;
    const auto t = ComputeTotals(*m);
    EXPECT_EQ(t.stored_bytes, 2 * (c.hub_elements + 928)) << c.hub_elements;
    EXPECT_EQ(t.parameters, c.parameters) << c.hub_elements;
    EXPECT_EQ(std::count_if(m->tensors.begin(), m->tensors.end(),
                            [](const Tensor& x) { return x.stored && x.tied_to.empty(); }),
              static_cast<std::ptrdiff_t>(c.stored_tensors))
        << c.hub_elements;
  }
}

// NVIDIA's ModelOpt NVFP4 (attention and lm_head in "ignore"): each MLP linear stores weight
// uint8 [out, ceil(in/2)], weight_scale float8_e4m3 [out, ceil(in/16)] and two float32 scalars.
// gate/up [12, 8]: 12 x 4 + 12 x 1 + 8 = 68 bytes each; down [8, 12]: 8 x 6 + 8 x 1 + 8 = 64.
// Per layer 200 bytes instead of 288 x 4 = 1152 in float32: 5064 - 2 x 952 = 3160 stored bytes.
// Logical parameters (built without the quantization): the 1264 of the unquantized model.
TEST(Gemma4Builder, Nvfp4DenseMlpByHand) {
  auto j = TinyGemma4();
  j["quantization_config"] = {{"quant_method", "modelopt"},
                              {"quant_algo", "NVFP4"},
                              {"ignore",
                               {"lm_head", "model.language_model.layers.0.self_attn*",
                                "model.language_model.layers.1.self_attn*"}}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 3160u);
  const Tensor* w = FindTensor(*m, "model.language_model.layers.1.mlp.down_proj.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, Dtype::kU8);
  EXPECT_EQ(w->shape, (std::vector<uint64_t>{8, 6}));
  EXPECT_EQ(FindTensor(*m, "model.language_model.layers.1.mlp.down_proj.weight_scale")->dtype,
            Dtype::kF8E4M3);
  EXPECT_EQ(FindTensor(*m, "model.language_model.layers.0.self_attn.q_proj.weight")->dtype,
            Dtype::kF32);
  BuildOptions unquantized;
  unquantized.ignore_quantization = true;
  auto logical = BuildJson(j, unquantized);
  ASSERT_TRUE(logical) << logical.error().message;
  EXPECT_EQ(ComputeTotals(*logical).parameters, 1264u);
  // Quantized fused experts are stored per expert, as ModelOpt exports them (expert_kit.h). Per
  // layer: router.proj [2, 8] in NVFP4 (weight [2, 4] = 8 bytes, weight_scale [2, 1] = 2, two
  // float32 scalars 8: 18), router.scale 8 x 4 = 32 and per_expert_scale 2 x 4 = 8 bytes, each
  // expert's gate/up [3, 8] (weight [3, 4] = 12 + weight_scale [3, 1] = 3 + 8 = 23 bytes) and
  // down [8, 3] (weight [8, 2] = 16 + weight_scale [8, 1] = 8 + 8 = 32): 2 x 78 = 156, three
  // norms 96: 310 bytes a layer, 3160 + 620 = 3780.
  j["text_config"]["enable_moe_block"] = true;
  j["text_config"]["num_experts"] = 2;
  j["text_config"]["top_k_experts"] = 1;
  j["text_config"]["moe_intermediate_size"] = 3;
  auto config = HfConfig::FromJson(j, "config.json");
  ASSERT_TRUE(config);
  auto exact = BuildGemma4(*config, BuildOptions{}, true);
  ASSERT_TRUE(exact) << exact.error().message;
  EXPECT_EQ(ComputeTotals(*exact).stored_bytes, 3780u);
  EXPECT_EQ(ComputeTotals(*exact).parameters, 1264u + 2u * 194u);
  testing::ExpectShape(*exact, "model.language_model.layers.1.experts.1.down_proj.weight", {8, 2});
  EXPECT_EQ(FindTensor(*exact, "model.language_model.layers.0.experts.gate_up_proj"), nullptr);
}

// nvidia/Gemma-4-31B-IT-NVFP4: the text config of google/gemma-4-31B-it (index total_size
// 62,546,177,752 bytes, bfloat16) with every layer's MLP in NVFP4 (self_attn, the vision tower,
// embed_vision and lm_head ignored). Per layer, gate/up [21504, 5376]: weight 21504 x 2688 =
// 57,802,752 + weight_scale 21504 x 336 = 7,225,344 + 8 = 65,028,104 bytes each; down
// [5376, 21504]: 5376 x 10752 + 5376 x 1344 + 8 = 65,028,104. 195,084,312 bytes instead of
// 3 x 21504 x 5376 x 2 = 693,633,024: 60 layers save 29,912,922,720 bytes, leaving
// 32,633,255,032. Logical parameters: those of the bfloat16 release.
TEST(Gemma4Builder, RealNvfp4ThirtyOneB) {
  auto eval = memfit::testing::EvalDir();
  if (!eval) GTEST_SKIP() << "../shared/eval is absent: the real Gemma 4 configs need it";
  auto fp4 = testing::BuildEvalConfig("recent/nvidia__Gemma-4-31B-IT-NVFP4");
  auto bf16 = testing::BuildEvalConfig("models/google__gemma-4-31B-it");
  if (!fp4 || !bf16) {
    GTEST_SKIP() << "nvidia__Gemma-4-31B-IT-NVFP4 or google__gemma-4-31B-it absent";
  }
  EXPECT_EQ(ComputeTotals(*bf16).stored_bytes, 62546177752u);
  EXPECT_EQ(ComputeTotals(*fp4).stored_bytes, 32633255032u);
  testing::ExpectShape(*fp4, "model.language_model.layers.0.mlp.gate_proj.weight_scale",
                       {21504, 336});
  for (const auto& a : fp4->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  auto logical = testing::BuildEvalConfig("recent/nvidia__Gemma-4-31B-IT-NVFP4",
                                          {.ignore_quantization = true});
  ASSERT_TRUE(logical);
  EXPECT_EQ(ComputeTotals(*logical).parameters, ComputeTotals(*bf16).parameters);
}

// nvidia/Gemma-4-26B-A4B-NVFP4: the MoE Gemma 4 with its routed experts in NVFP4, stored per
// expert (vLLM PR #41683: "layers.0.experts.0.down_proj.input_scale"). It builds exactly, and
// with the quantization ignored its parameters are those of google/gemma-4-26B-A4B.
TEST(Gemma4Builder, RealNvfp4MoeTwentySixB) {
  auto eval = memfit::testing::EvalDir();
  if (!eval) GTEST_SKIP() << "../shared/eval is absent: the real Gemma 4 configs need it";
  auto fp4 = testing::BuildEvalConfig("recent/nvidia__Gemma-4-26B-A4B-NVFP4");
  auto bf16 = testing::BuildEvalConfig("recent/google__gemma-4-26B-A4B");
  if (!fp4 || !bf16)
    GTEST_SKIP() << "nvidia__Gemma-4-26B-A4B-NVFP4 or google__gemma-4-26B-A4B absent";
  for (const auto& a : fp4->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  EXPECT_EQ(ComputeTotals(*fp4).parameters, ComputeTotals(*bf16).parameters);
  EXPECT_LT(ComputeTotals(*fp4).stored_bytes, ComputeTotals(*bf16).stored_bytes / 2);
  EXPECT_NE(FindTensor(*fp4, "model.language_model.layers.1.experts.0.gate_proj.weight_scale_2"),
            nullptr);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
