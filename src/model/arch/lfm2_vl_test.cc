// LFM2-VL (issue 30): SigLIP2 NaFlex tower + pixel-unshuffle projector + lfm2, counted by hand.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

// lfm2_test.cc's tiny LFM2 (1176 parameters) as text_config.
nlohmann::json TinyLfm2Text() {
  return testing::TinyDecoderWith("lfm2",
                                  {{"block_ff_dim", 15},
                                   {"block_multiple_of", 4},
                                   {"block_ffn_dim_multiplier", 1.0},
                                   {"block_auto_adjust_ff_dim", true},
                                   {"conv_L_cache", 3},
                                   {"layer_types", {"conv", "full_attention"}},
                                   {"intermediate_size", nullptr},
                                   {"max_position_embeddings", nullptr},
                                   {"torch_dtype", nullptr}});
}

nlohmann::json TinyLfm2Vl() {
  return {{"model_type", "lfm2-vl"},
          {"architectures", {"Lfm2VlForConditionalGeneration"}},
          {"torch_dtype", "float32"},
          {"downsample_factor", 2},
          {"projector_hidden_size", 6},
          {"text_config", TinyLfm2Text()},
          {"vision_config",
           {{"model_type", "siglip2_vision_model"},
            {"hidden_size", 4},
            {"intermediate_size", 6},
            {"num_hidden_layers", 1},
            {"num_attention_heads", 2},
            {"num_channels", 3},
            {"patch_size", 2},
            {"num_patches", 4},
            {"vision_use_head", false}}}};
}

// Vision: patch_embedding Linear(3 x 2 x 2 = 12 -> 4) 48 + 4 = 52, position_embedding 4 x 4 = 16;
// one layer: q/k/v/out 4 x (16 + 4) = 80, layer_norm1/2 16, fc1 24 + 6 = 30, fc2 24 + 4 = 28
// (154); post_layernorm 8: 230. Projector (4 x 2^2 = 16 in): layer_norm 32, linear_1 16 x 6 + 6
// = 102, linear_2 6 x 8 + 8 = 56: 190. Text: 1176 (lfm2_test.cc), head tied. 1596 parameters,
// 6384 bytes in float32.
TEST(Lfm2VlBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyLfm2Vl(), 1596u, 6384u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_tower"), 230u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "multi_modal_projector"), 190u);
  EXPECT_EQ(FindTensor(*m, "model.vision_tower.vision_model.embeddings.patch_embedding.weight")
                ->shape,
            (std::vector<uint64_t>{4, 12}));
  testing::ExpectShape(*m, "model.multi_modal_projector.linear_1.weight", {6, 16});
  EXPECT_NE(FindTensor(*m, "model.language_model.layers.0.conv.in_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->tied_to, "model.language_model.embed_tokens.weight");
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->hp.layers[0].mixer, LayerMixer::kShortConv);
}

TEST(Lfm2VlBuilder, ProjectorOptionsHeadAndSpellings) {
  auto j = TinyLfm2Vl();
  j["projector_use_layernorm"] = false;  // - 32
  j["projector_bias"] = false;           // - 6 - 8
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1596u - 46u);
  j = TinyLfm2Vl();
  j["model_type"] = "lfm2_vl";
  j["vision_config"].erase("vision_use_head");  // the pooling head: probe 4, in_proj 48 + 12,
  // out_proj 20, layernorm 8, fc1 30, fc2 28 = 150
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1596u + 150u);
}

TEST(Lfm2VlBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyLfm2Vl(), {{"downsample_factor", 0}}, "downsample_factor");
  testing::ExpectPatchRejected(TinyLfm2Vl(), {{"vision_config", {{"num_attention_heads", 3}}}},
                               "num_attention_heads");
  testing::ExpectPatchRejected(TinyLfm2Vl(), {{"text_config", {{"model_type", "llama"}}}},
                               "text_config.model_type");
  testing::ExpectPatchRejected(TinyLfm2Vl(), {{"text_config", {{"layer_types", nullptr}}}},
                               "full_attn_idxs");
}

// LFM2-VL-1.6B's geometry as a port of mlx-community/LFM2-VL-1.6B-4bit quotes it (SigLIP2
// so400m: hidden 1152, intermediate 4304, 27 layers, patch 16, 256 positions; projector 2560),
// the text model LFM2-1.2B's (../shared/eval/recent, lfm2_test.cc: 1,170,340,608). Vision:
// patch_embedding 768 x 1152 + 1152 = 885,888, position_embedding 294,912, 27 layers of
// 4 x (1152^2 + 1152) + 4 x 1152 + (1152 x 4304 + 4304) + (4304 x 1152 + 1152) = 15,239,504,
// post_layernorm 2304: 412,649,712. Projector: layer_norm 2 x 4608, linear_1 4608 x 2560 + 2560,
// linear_2 2560 x 2048 + 2048: 17,053,184. Total 1,600,043,504, the model card's "1.6B".
TEST(Lfm2VlBuilder, Lfm2Vl16bGeometry) {
  nlohmann::json text = {{"model_type", "lfm2"}, {"vocab_size", 65536}, {"hidden_size", 2048},
                         {"block_ff_dim", 12288}, {"block_multiple_of", 256},
                         {"block_ffn_dim_multiplier", 1.0}, {"block_auto_adjust_ff_dim", true},
                         {"conv_L_cache", 3}, {"full_attn_idxs", {2, 5, 8, 10, 12, 14}},
                         {"num_hidden_layers", 16}, {"num_attention_heads", 32},
                         {"num_key_value_heads", 8}};
  auto m = BuildJson({{"model_type", "lfm2-vl"},
                      {"architectures", {"Lfm2VlForConditionalGeneration"}},
                      {"torch_dtype", "bfloat16"},
                      {"downsample_factor", 2},
                      {"projector_hidden_size", 2560},
                      {"projector_bias", true},
                      {"text_config", text},
                      {"vision_config",
                       {{"model_type", "siglip2_vision_model"}, {"hidden_size", 1152},
                        {"intermediate_size", 4304}, {"num_hidden_layers", 27},
                        {"num_attention_heads", 16}, {"num_channels", 3}, {"patch_size", 16},
                        {"num_patches", 256}, {"vision_use_head", false}}}});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1600043504u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_tower"), 412649712u);
}

// Two official LFM2-VL checkpoints as a public candle port pins them (config.json values and a
// digest of every stored tensor's name and shape, read from the safetensors headers): projector
// 2048 with biases and no layer norm, tied, SigLIP2 NaFlex patch 16 / 256 patches without head,
// text 16 layers with attention at 2, 5, 8, 10, 12, 14. Small: text 1024 (16 heads, block_ff_dim
// 6656 -> 4608), vision 768 x 12 layers (12 heads, MLP 3072): 349 stored tensors. Large: text
// 2048 (32 heads, 12288 -> 8192), vision 1152 x 27 (16 heads, 4304): 589. memfit's names and
// shapes reproduce both digests; here the counts and the projector's input, vision H x 2^2.
TEST(Lfm2VlBuilder, OfficialHeaderInventories) {
  struct Case {
    int text_h, text_heads, text_ff, vision_h, vision_ff, vision_layers, vision_heads;
    size_t stored;
  };
  for (const Case& c : {Case{1024, 16, 6656, 768, 3072, 12, 12, 349},
                        Case{2048, 32, 12288, 1152, 4304, 27, 16, 589}}) {
    nlohmann::json text = {{"model_type", "lfm2"},
                           {"vocab_size", 65536},
                           {"hidden_size", c.text_h},
                           {"num_hidden_layers", 16},
                           {"num_attention_heads", c.text_heads},
                           {"num_key_value_heads", 8},
                           {"intermediate_size", c.text_ff},
                           {"block_ff_dim", c.text_ff},
                           {"block_auto_adjust_ff_dim", true},
                           {"block_ffn_dim_multiplier", 1.0},
                           {"block_multiple_of", 256},
                           {"conv_L_cache", 3},
                           {"full_attn_idxs", {2, 5, 8, 10, 12, 14}}};
    auto m = BuildJson({{"model_type", "lfm2_vl"},
                        {"architectures", {"Lfm2VlForConditionalGeneration"}},
                        {"torch_dtype", "bfloat16"},
                        {"downsample_factor", 2},
                        {"projector_hidden_size", 2048},
                        {"projector_bias", true},
                        {"projector_use_layernorm", false},
                        {"tie_word_embeddings", true},
                        {"text_config", text},
                        {"vision_config",
                         {{"model_type", "siglip2_vision_model"},
                          {"hidden_size", c.vision_h},
                          {"intermediate_size", c.vision_ff},
                          {"num_hidden_layers", c.vision_layers},
                          {"num_attention_heads", c.vision_heads},
                          {"num_channels", 3},
                          {"patch_size", 16},
                          {"num_patches", 256},
                          {"vision_use_head", false}}}});
    ASSERT_TRUE(m) << m.error().message;
    size_t stored = 0;
    for (const auto& t : m->tensors) stored += t.stored && t.tied_to.empty() ? 1 : 0;
    EXPECT_EQ(stored, c.stored);
    testing::ExpectShape(*m, "model.multi_modal_projector.linear_1.weight",
                         {2048, static_cast<uint64_t>(c.vision_h) * 4});
    EXPECT_EQ(FindTensor(*m, "model.multi_modal_projector.layer_norm.weight"), nullptr);
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
