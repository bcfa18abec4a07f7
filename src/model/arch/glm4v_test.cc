// glm4v / glm4v_moe (glm4v.cc): the glm4 and glm4_moe text builders under model.language_model,
// lm_head at the top, and the GLM-4.1V / GLM-4.5V vision tower under model.visual.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::HasLine;

uint64_t Parameters(const Model& m, const std::string& component) {
  return arch_test::ComponentParameters(m, component);
}

// Tensor elements and count of what the checkpoint stores (a safetensors listing counts these).
struct Stored {
  uint64_t tensors = 0, elements = 0;
};
Stored StoredTensors(const Model& m) {
  Stored s;
  for (const auto& t : m.tensors) {
    if (!t.stored || !t.tied_to.empty() || t.kind == TensorKind::kNonPersistentBuffer) continue;
    ++s.tensors;
    s.elements += t.numel;
  }
  return s;
}

// The tiny vision tower of the tests: width 8, 2 heads of 4, 2 blocks, out_hidden_size 8 (the
// text width), merger width 16, 3 channels, 8 px images of 2 px patches (16 positions), 2 frames
// a patch, 2 x 2 merge. Parameters by hand:
// - embeddings.position_embedding [16, 8] = 128;
// - patch_embed.proj Conv3d(3, 8, [2, 2, 2]) = 192 + bias 8 = 200;
// - a block: norm1 + norm2 16, attn.qkv [24, 8] = 192 (no bias), attn.proj 64, mlp gate/up/down
//   [8, 8] each 192 -> 464; two blocks 928;
// - merger: proj [8, 8] 64, post_projection_norm 8 + 8, gate/up [16, 8] 128 each, down [8, 16]
//   128 -> 464;
// - post_conv_layernorm 8, downsample Conv2d(8, 8, [2, 2]) 256 + bias 8, post_layernorm 8 -> 280.
// In all 2000.
nlohmann::json TinyVision() {
  return {{"depth", 2}, {"hidden_size", 8}, {"num_heads", 2}, {"out_hidden_size", 8},
          {"intermediate_size", 16}, {"in_channels", 3}, {"image_size", 8}, {"patch_size", 2},
          {"temporal_patch_size", 2}, {"spatial_merge_size", 2}, {"attention_bias", false},
          {"model_type", "glm4v"}};
}

// Tiny glm4v text (the glm4 spec row's layout): vocab 10, width 8, 2 layers, 2 heads of
// 8 / 2 = 4 (Glm4vTextAttention: hidden / heads), 1 KV head, intermediate 12, float32. A layer:
// input_layernorm 8, q [8, 8] + 8 = 72, k [4, 8] + 4 = 36, v 36, o [8, 8] 64 (no bias),
// gate_up [24, 8] 192, down [8, 12] 96, post_attention/post_self_attn/post_mlp norms 24 -> 528;
// two layers 1056, embed 80, norm 8, lm_head 80: 1224.
nlohmann::json TinyGlm4v() {
  nlohmann::json text = {{"model_type", "glm4v_text"}, {"vocab_size", 10}, {"hidden_size", 8},
                         {"num_hidden_layers", 2}, {"num_attention_heads", 2},
                         {"num_key_value_heads", 1}, {"intermediate_size", 12},
                         {"attention_bias", true}, {"max_position_embeddings", 16},
                         {"rope_scaling", {{"rope_type", "default"}, {"mrope_section", {1, 0, 0}}}},
                         {"partial_rotary_factor", 0.5}, {"dtype", "float32"}};
  return {{"model_type", "glm4v"}, {"architectures", {"Glm4vForConditionalGeneration"}},
          {"tie_word_embeddings", false}, {"text_config", text}, {"vision_config", TinyVision()}};
}

TEST(Glm4vBuilder, TinyConfigCountsByHand) {
  auto m = BuildJson(TinyGlm4v());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(Parameters(*m, "language_model"), 1224u);
  EXPECT_EQ(Parameters(*m, "vision_tower"), 2000u);
  const auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 3224u);
  EXPECT_EQ(t.stored_bytes, 3224u * 4);  // float32; the buffers are not persistent
  EXPECT_FALSE(HasLine(m->assumptions, "approximate"));
  EXPECT_EQ(m->architecture, "Glm4vForConditionalGeneration");
  // The checkpoint's names (GLM-4.1V's index): model.language_model.*, lm_head, model.visual.*.
  for (const char* name :
       {"model.language_model.embed_tokens.weight", "model.language_model.norm.weight",
        "model.language_model.layers.1.mlp.gate_up_proj.weight",
        "model.language_model.layers.1.post_self_attn_layernorm.weight",
        "model.language_model.layers.1.post_mlp_layernorm.weight",
        "model.language_model.layers.0.self_attn.q_proj.bias", "lm_head.weight",
        "model.visual.embeddings.position_embedding.weight", "model.visual.patch_embed.proj.bias",
        "model.visual.blocks.1.attn.qkv.weight", "model.visual.blocks.1.mlp.down_proj.weight",
        "model.visual.merger.post_projection_norm.bias", "model.visual.downsample.bias",
        "model.visual.post_conv_layernorm.weight", "model.visual.post_layernorm.weight"}) {
    EXPECT_NE(FindTensor(*m, name), nullptr) << name;
  }
  EXPECT_EQ(FindTensor(*m, "model.language_model.layers.0.self_attn.o_proj.bias"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.visual.blocks.0.attn.qkv.bias"), nullptr);
  // out_hidden_size, not intermediate_size
  testing::ExpectShape(*m, "model.visual.blocks.0.mlp.up_proj.weight", {8, 8});
  testing::ExpectShape(*m, "model.visual.merger.up_proj.weight", {16, 8});
  testing::ExpectShape(*m, "model.visual.patch_embed.proj.weight", {8, 3, 2, 2, 2});
  testing::ExpectShape(*m, "model.visual.downsample.weight", {8, 8, 2, 2});
  const Tensor* ids = FindTensor(*m, "model.visual.embeddings.position_ids");
  ASSERT_NE(ids, nullptr);
  EXPECT_EQ(ids->kind, TensorKind::kNonPersistentBuffer);
  EXPECT_EQ(ids->shape, (std::vector<uint64_t>{1, 16}));
  // Vision rotary: Glm4vVisionRotaryEmbedding(4 / 2) -> arange(0, 2, 2): 1 frequency. Text
  // rotary: int(4 x 0.5) / 2 = 1.
  testing::ExpectShape(*m, "model.visual.rotary_pos_emb.inv_freq", {1});
  testing::ExpectShape(*m, "model.language_model.rotary_emb.inv_freq", {1});
  EXPECT_EQ(m->hp.num_layers, 2u);
  EXPECT_EQ(m->hp.head_dim, 4u);
  EXPECT_EQ(m->hp.num_kv_heads, 1u);
  EXPECT_EQ(m->hp.text_config_key, "text_config");
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->component, "language_model");
  EXPECT_EQ(FindTensor(*m, "model.visual.downsample.weight")->component, "vision_tower");
  EXPECT_EQ(m->no_split_patterns,
            (std::vector<std::string>{"model.language_model.layers.*", "model.visual.blocks.*"}));
}

// GLM-4.1V-9B-Thinking's first config.json kept the text fields at the top level (Glm4vConfig
// then builds its text config from them); the same model.
TEST(Glm4vBuilder, FlatConfigIsTheSameModel) {
  nlohmann::json j = TinyGlm4v();
  for (const auto& [k, v] : j["text_config"].items()) {
    if (k != "model_type") j[k] = v;
  }
  j.erase("text_config");
  auto m = testing::BuildCounted(j, 3224u);
  ASSERT_TRUE(m);
  EXPECT_NE(FindTensor(*m, "model.language_model.layers.1.mlp.gate_up_proj.weight"), nullptr);
  EXPECT_EQ(m->hp.text_config_key, "");
}

// transformers 5 configs keep the dtype in text_config only and partial_rotary_factor in
// rope_parameters (the converters in transformers' models/glm4v/ write them so).
TEST(Glm4vBuilder, Transformers5ConfigFields) {
  nlohmann::json j = TinyGlm4v();
  j["text_config"].erase("partial_rotary_factor");
  j["text_config"].erase("rope_scaling");
  j["text_config"]["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 10000.0},
                                         {"mrope_section", {1, 0, 0}},
                                         {"partial_rotary_factor", 1.0}};
  j["text_config"]["dtype"] = "bfloat16";
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 3224u * 2);  // the tower in text_config's dtype
  EXPECT_EQ(FindTensor(*m, "model.visual.blocks.0.attn.qkv.weight")->dtype, Dtype::kBF16);
  testing::ExpectShape(*m, "model.language_model.rotary_emb.inv_freq", {2});  // int(4 x 1.0) / 2
}

// Tiny glm4v_moe text: glm4_moe_test.cc's TinyGlm4Moe (1656 loaded parameters: a dense layer, a
// MoE layer of 4 experts + 1 shared, embed, norm, lm_head) with "use_qk_norm" and an MTP layer
// named, neither of which Glm4vMoeTextModel builds. Stored: 1656 x 4 + the float32
// e_score_correction_bias [4] of layer 1 = 6640 B; with the tower, 3656 parameters and 14,640 B.
nlohmann::json TinyGlm4vMoe() {
  nlohmann::json text = {{"model_type", "glm4v_moe_text"}, {"vocab_size", 10},
                         {"hidden_size", 8}, {"num_hidden_layers", 2},
                         {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"head_dim", 4},
                         {"intermediate_size", 12}, {"moe_intermediate_size", 6},
                         {"n_routed_experts", 4}, {"n_shared_experts", 1},
                         {"num_experts_per_tok", 2}, {"first_k_dense_replace", 1},
                         {"attention_bias", true}, {"use_qk_norm", true},
                         {"num_nextn_predict_layers", 1}, {"partial_rotary_factor", 0.5},
                         {"max_position_embeddings", 16}, {"dtype", "float32"}};
  return {{"model_type", "glm4v_moe"}, {"architectures", {"Glm4vMoeForConditionalGeneration"}},
          {"tie_word_embeddings", false}, {"text_config", text}, {"vision_config", TinyVision()}};
}

TEST(Glm4vMoeBuilder, TinyConfigCountsByHand) {
  auto m = BuildJson(TinyGlm4vMoe());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(Parameters(*m, "language_model"), 1656u);
  EXPECT_EQ(Parameters(*m, "vision_tower"), 2000u);
  const auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 3656u);
  EXPECT_EQ(t.stored_bytes, 14640u);
  EXPECT_EQ(m->architecture, "Glm4vMoeForConditionalGeneration");
  EXPECT_EQ(m->hp.num_mtp_layers, 0u);
  EXPECT_EQ(FindTensor(*m, "model.language_model.layers.2.eh_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.language_model.layers.0.self_attn.q_norm.weight"), nullptr);
  EXPECT_TRUE(HasLine(m->assumptions, "multi-token-prediction"));
  EXPECT_TRUE(HasLine(m->notes, "use_qk_norm"));
  const Tensor* bias =
      FindTensor(*m, "model.language_model.layers.1.mlp.gate.e_score_correction_bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->dtype, Dtype::kF32);
  EXPECT_NE(FindTensor(*m, "model.language_model.layers.1.mlp.experts.3.down_proj.weight"),
            nullptr);
  EXPECT_NE(FindTensor(*m, "model.language_model.layers.1.mlp.shared_experts.up_proj.weight"),
            nullptr);
  EXPECT_TRUE(m->hp.layers[1].moe);
  EXPECT_EQ(m->hp.num_experts, 4u);
}

// zai-org/GLM-4.1V-9B-Thinking's architecture (text: GLM-4-9B-0414's, 9,400,279,040 parameters,
// llama_variants_test.cc; vision: the 24-block AIMv2 tower of width 1536 whose MLP is 4096 wide,
// with a 13,696-wide merger: 892,498,432), in the form transformers' GLM-4.6V-Flash converter
// writes (a text_config with rope_parameters and "dtype"). 10,292,777,472 parameters is the Hub's
// safetensors count of zai-org/GLM-4.6V-Flash (Glm4vForConditionalGeneration, "about 20.6 GB in
// five shards", quoted from the Hub API in public repositories): stored bytes 2 x that.
nlohmann::json Glm41vConfig() {
  nlohmann::json text = {{"model_type", "glm4v_text"}, {"attention_bias", true},
                         {"hidden_act", "silu"}, {"hidden_size", 4096},
                         {"intermediate_size", 13696}, {"max_position_embeddings", 65536},
                         {"num_attention_heads", 32}, {"num_hidden_layers", 40},
                         {"num_key_value_heads", 2}, {"rms_norm_eps", 1e-05},
                         {"dtype", "bfloat16"}, {"vocab_size", 151552},
                         {"tie_word_embeddings", false},
                         {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000.0},
                                              {"mrope_section", {8, 12, 12}},
                                              {"partial_rotary_factor", 0.5}}}};
  nlohmann::json vision = {{"model_type", "glm4v_vision"}, {"hidden_size", 1536}, {"depth", 24},
                           {"num_heads", 12}, {"attention_bias", false},
                           {"intermediate_size", 13696}, {"hidden_act", "silu"},
                           {"image_size", 336}, {"patch_size", 14}, {"out_hidden_size", 4096},
                           {"rms_norm_eps", 1e-05}, {"spatial_merge_size", 2},
                           {"temporal_patch_size", 2}};
  return {{"architectures", {"Glm4vForConditionalGeneration"}}, {"model_type", "glm4v"},
          {"image_start_token_id", 151339}, {"image_end_token_id", 151340},
          {"video_start_token_id", 151341}, {"video_end_token_id", 151342},
          {"text_config", text}, {"vision_config", vision}};
}

TEST(Glm4vBuilder, Glm41vPublishedCount) {
  auto m = BuildJson(Glm41vConfig());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(Parameters(*m, "language_model"), 9400279040u);
  EXPECT_EQ(Parameters(*m, "vision_tower"), 892498432u);
  const auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 10292777472u);
  EXPECT_EQ(t.stored_bytes, 2 * 10292777472u);
  EXPECT_EQ(m->hp.head_dim, 128u);
  EXPECT_EQ(m->hp.max_position_embeddings, 65536u);
  testing::ExpectShape(*m, "model.language_model.rotary_emb.inv_freq", {32});
  // head_dim 128 / 2 = 64, arange(0, 64, 2)
  testing::ExpectShape(*m, "model.visual.rotary_pos_emb.inv_freq", {32});
}

// zai-org/GLM-4.5V: its config.json (the fields a public model report prints from it with
// transformers 5.7; the same as transformers' glm4v_moe converter writes) and the report's list
// of the 46 safetensors files: 18,106 tensors, 107,710,933,120 elements, 200.63 GiB, every tensor
// bfloat16 but the 45 float32 e_score_correction_bias [128]; layers 0-45 only (no MTP layer).
// So: 107,710,927,360 parameters (GLM-4.5-Air's 106,852,245,504 loaded, glm4_moe_test.cc, + the
// 858,681,856 of the tower with its 10,944-wide merger) + 5,760 router biases, and
// 2 x 107,710,927,360 + 4 x 5,760 = 215,421,877,760 bytes. zai-org/GLM-4.6V (glm4v_moe too) has
// the same Hub count, 107,710,933,120.
nlohmann::json Glm45vConfig() {
  nlohmann::json text = {
      {"model_type", "glm4v_moe_text"}, {"attention_bias", true}, {"attention_dropout", 0.0},
      {"eos_token_id", {151329, 151336, 151338}}, {"first_k_dense_replace", 1},
      {"head_dim", 128}, {"hidden_act", "silu"}, {"hidden_size", 4096},
      {"intermediate_size", 10944}, {"max_position_embeddings", 65536},
      {"moe_intermediate_size", 1408}, {"n_group", 1}, {"n_routed_experts", 128},
      {"n_shared_experts", 1}, {"norm_topk_prob", true}, {"num_attention_heads", 96},
      {"num_experts_per_tok", 8}, {"num_hidden_layers", 46}, {"num_key_value_heads", 8},
      {"pad_token_id", 151329}, {"partial_rotary_factor", 0.5}, {"rms_norm_eps", 1e-05},
      {"rope_scaling", {{"rope_type", "default"}, {"mrope_section", {8, 12, 12}}}},
      {"rope_theta", 10000.0}, {"routed_scaling_factor", 1.0}, {"topk_group", 1},
      {"use_qk_norm", false}, {"vocab_size", 151552}, {"dtype", "bfloat16"}};
  nlohmann::json vision = {
      {"attention_bias", false}, {"depth", 24}, {"hidden_act", "silu"}, {"hidden_size", 1536},
      {"image_size", 336}, {"in_channels", 3}, {"intermediate_size", 10944},
      {"model_type", "glm4v_moe"}, {"num_heads", 12}, {"out_hidden_size", 4096},
      {"patch_size", 14}, {"rms_norm_eps", 1e-05}, {"spatial_merge_size", 2},
      {"temporal_patch_size", 2}};
  return {{"architectures", {"Glm4vMoeForConditionalGeneration"}}, {"model_type", "glm4v_moe"},
          {"dtype", "bfloat16"}, {"image_start_token_id", 151339},
          {"image_end_token_id", 151340}, {"image_token_id", 151363},
          {"video_start_token_id", 151341}, {"video_end_token_id", 151342},
          {"video_token_id", 151364}, {"tie_word_embeddings", false}, {"text_config", text},
          {"vision_config", vision}};
}

TEST(Glm4vMoeBuilder, Glm45vMatchesTheCheckpointListing) {
  auto m = BuildJson(Glm45vConfig());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(Parameters(*m, "language_model"), 106852245504u);
  EXPECT_EQ(Parameters(*m, "vision_tower"), 858681856u);
  const auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 107710927360u);
  EXPECT_EQ(t.stored_bytes, 215421877760u);
  const Stored s = StoredTensors(*m);
  EXPECT_EQ(s.tensors, 18106u);
  EXPECT_EQ(s.elements, 107710933120u);
  EXPECT_FALSE(HasLine(m->assumptions, "multi-token-prediction"));
  // One row of each group of the listing (name, shape).
  const std::pair<const char*, std::vector<uint64_t>> rows[] = {
      {"lm_head.weight", {151552, 4096}},
      {"model.language_model.embed_tokens.weight", {151552, 4096}},
      {"model.language_model.layers.45.self_attn.q_proj.weight", {12288, 4096}},
      {"model.language_model.layers.45.self_attn.q_proj.bias", {12288}},
      {"model.language_model.layers.45.self_attn.k_proj.bias", {1024}},
      {"model.language_model.layers.45.self_attn.o_proj.weight", {4096, 12288}},
      {"model.language_model.layers.0.mlp.gate_proj.weight", {10944, 4096}},
      {"model.language_model.layers.0.mlp.down_proj.weight", {4096, 10944}},
      {"model.language_model.layers.1.mlp.experts.127.down_proj.weight", {4096, 1408}},
      {"model.language_model.layers.45.mlp.gate.weight", {128, 4096}},
      {"model.language_model.layers.45.mlp.gate.e_score_correction_bias", {128}},
      {"model.language_model.layers.1.mlp.shared_experts.gate_proj.weight", {1408, 4096}},
      {"model.language_model.norm.weight", {4096}},
      {"model.visual.blocks.23.attn.qkv.weight", {4608, 1536}},
      {"model.visual.blocks.23.attn.proj.weight", {1536, 1536}},
      {"model.visual.blocks.23.mlp.gate_proj.weight", {4096, 1536}},
      {"model.visual.blocks.23.mlp.down_proj.weight", {1536, 4096}},
      {"model.visual.blocks.23.norm2.weight", {1536}},
      {"model.visual.downsample.weight", {4096, 1536, 2, 2}},
      {"model.visual.downsample.bias", {4096}},
      {"model.visual.embeddings.position_embedding.weight", {576, 1536}},
      {"model.visual.merger.proj.weight", {4096, 4096}},
      {"model.visual.merger.gate_proj.weight", {10944, 4096}},
      {"model.visual.merger.down_proj.weight", {4096, 10944}},
      {"model.visual.merger.post_projection_norm.bias", {4096}},
      {"model.visual.patch_embed.proj.weight", {1536, 3, 2, 14, 14}},
      {"model.visual.patch_embed.proj.bias", {1536}},
      {"model.visual.post_conv_layernorm.weight", {1536}},
      {"model.visual.post_layernorm.weight", {1536}},
  };
  for (const auto& [name, shape] : rows) {
    const Tensor* t = FindTensor(*m, name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->shape, shape) << name;
  }
  EXPECT_EQ(FindTensor(*m, "model.language_model.layers.46.eh_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.language_model.layers.45.mlp.gate.e_score_correction_bias")
                ->dtype, Dtype::kF32);
  EXPECT_EQ(m->hp.num_layers, 46u);
  EXPECT_EQ(m->hp.num_kv_heads, 8u);
  EXPECT_EQ(m->hp.head_dim, 128u);
  EXPECT_EQ(m->hp.experts_per_token, 8u);
}

// A quantization_config reaches the language model under the checkpoint's names: the list names
// model.language_model.* and lm_head, the text builder builds model.* (CarryQuantization). Tiny
// glm4v_moe, fine-grained FP8 with 4 x 4 blocks: layer 0's q_proj (listed by its checkpoint name)
// and lm_head stay float32, layer 1's k_proj is float8 [4, 8] = 32 B with scales
// [ceil(4/4), ceil(8/4)] = [1, 2] x 4 = 8 B; the tower is built unquantized and an assumption
// names its 2 x 5 + 4 = 14 weight matrices the list does not exclude.
TEST(Glm4vMoeBuilder, QuantizationAppliesToTheLanguageModelByCheckpointNames) {
  nlohmann::json j = TinyGlm4vMoe();
  j["quantization_config"] = {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"},
                              {"fmt", "e4m3"}, {"weight_block_size", {4, 4}},
                              {"modules_to_not_convert",
                               {"lm_head", "model.language_model.layers.0.self_attn.q_proj"}}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  const std::string l = "model.language_model.layers.";
  EXPECT_EQ(FindTensor(*m, l + "0.self_attn.q_proj.weight")->dtype, Dtype::kF32);
  EXPECT_EQ(FindTensor(*m, l + "0.self_attn.q_proj.weight_scale_inv"), nullptr);
  EXPECT_EQ(FindTensor(*m, l + "1.self_attn.q_proj.weight")->dtype, Dtype::kF8E4M3);
  const Tensor* k = FindTensor(*m, l + "1.self_attn.k_proj.weight");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->dtype, Dtype::kF8E4M3);
  EXPECT_EQ(k->bytes, 32u);
  const Tensor* ks = FindTensor(*m, l + "1.self_attn.k_proj.weight_scale_inv");
  ASSERT_NE(ks, nullptr);
  EXPECT_EQ(ks->shape, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(FindTensor(*m, l + "1.mlp.experts.0.gate_proj.weight")->dtype, Dtype::kF8E4M3);
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->dtype, Dtype::kF32);
  EXPECT_EQ(FindTensor(*m, "model.visual.blocks.0.attn.qkv.weight")->dtype, Dtype::kF32);
  EXPECT_TRUE(HasLine(m->assumptions, "does not exclude 14 weight matrices"));
  EXPECT_FALSE(HasLine(m->notes, "not applied"));
  // Logical parameters are the unquantized release's.
  BuildOptions plain;
  plain.ignore_quantization = true;
  auto logical = BuildJson(j, plain);
  ASSERT_TRUE(logical);
  EXPECT_EQ(ComputeTotals(*m).parameters, ComputeTotals(*logical).parameters);
  // A list that names the tower keeps the assumption away.
  j["quantization_config"]["modules_to_not_convert"].push_back("model.visual");
  auto kept = BuildJson(j);
  ASSERT_TRUE(kept);
  EXPECT_FALSE(HasLine(kept->assumptions, "weight matri"));
}

// zai-org/GLM-4.5V-FP8 as stored, assuming the quantization_config form of Z.ai's own FP8
// releases (zai-org/GLM-5-FP8's, in ../shared/eval/recent: "fp8", e4m3, dynamic, 128 x 128 blocks,
// lm_head, the embeddings, every norm and router listed); the text of GLM-4.5V-FP8's own list was
// not found in a public mirror. Quantized elements: attention a layer q [12288, 4096] + k, v
// [1024, 4096] + o [4096, 12288] = 109,051,904, x 46 = 5,016,387,584; layer 0's dense MLP
// 3 x 10944 x 4096 = 134,479,872; a MoE layer (128 experts + the shared one) 129 x 3 x 1408 x
// 4096 = 2,231,894,016, x 45 = 100,435,230,720: 105,586,098,176. 128 x 128 blocks: attention
// 96x32 + 8x32 x 2 + 32x96 = 6656, x 46 = 306,176; dense 86x32 x 2 + 32x86 = 8256; MoE
// 129 x (11x32 x 2 + 32x11) = 136,224, x 45 = 6,130,080: 6,444,512 x 4 B = 25,778,048 B.
// Stored = 215,421,877,760 - 105,586,098,176 + 25,778,048 = 109,861,557,632 B.
TEST(Glm4vMoeBuilder, Glm45vFp8) {
  nlohmann::json j = Glm45vConfig();
  nlohmann::json skip = {"lm_head", "model.language_model.embed_tokens",
                         "model.language_model.norm"};
  for (int i = 0; i < 46; ++i) {
    const std::string l = "model.language_model.layers." + std::to_string(i);
    skip.push_back(l + ".input_layernorm");
    skip.push_back(l + ".post_attention_layernorm");
    if (i > 0) {
      skip.push_back(l + ".mlp.gate");
      skip.push_back(l + ".mlp.gate.e_score_correction_bias");
    }
  }
  j["quantization_config"] = {{"activation_scheme", "dynamic"}, {"fmt", "e4m3"},
                              {"quant_method", "fp8"}, {"weight_block_size", {128, 128}},
                              {"modules_to_not_convert", skip}};
  auto m = testing::BuildCounted(j, 107710927360u, 109861557632u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.language_model.layers.0.mlp.down_proj.weight_scale_inv",
                       {32, 86});
  EXPECT_EQ(FindTensor(*m, "model.visual.merger.proj.weight")->dtype, Dtype::kBF16);
  EXPECT_TRUE(HasLine(m->assumptions, "does not exclude 124 weight matrices"));
}

TEST(Glm4vBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyGlm4v(), {{"text_config", {{"hidden_size", nullptr}}}},
                               "hidden_size");
  testing::ExpectPatchRejected(TinyGlm4v(), {{"vision_config", {{"num_heads", 3}}}}, "num_heads");
  testing::ExpectPatchRejected(TinyGlm4v(), {{"vision_config", {{"patch_size", 0}}}}, "patch_size");
  testing::ExpectPatchRejected(TinyGlm4v(), {{"vision_config", {{"depth", "two"}}}}, "depth");
  testing::ExpectPatchRejected(TinyGlm4v(),
                               {{"vision_config", {{"image_size", uint64_t{1} << 40}}}}, "");
  auto j = TinyGlm4v();
  j["vision_config"]["depth"] = uint64_t{1} << 40;
  EXPECT_FALSE(BuildJson(j));  // stops at the tensor cap
  testing::ExpectPatchRejected(TinyGlm4vMoe(),
                               {{"text_config", {{"n_routed_experts", uint64_t{1} << 40}}}}, "");
  testing::ExpectPatchRejected(TinyGlm4vMoe(), {{"text_config", {{"num_key_value_heads", 3}}}},
                               "num_key_value_heads");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
