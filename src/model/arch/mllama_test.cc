// Llama 3.2 Vision (mllama): a tiny config counted by hand, Llama-3.2-11B-Vision against its
// published count, hostile configs.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyMllama() {
  return {{"model_type", "mllama"},
          {"architectures", {"MllamaForConditionalGeneration"}},
          {"torch_dtype", "float32"},
          {"text_config",
           {{"vocab_size", 10}, {"hidden_size", 8}, {"num_hidden_layers", 2},
            {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"intermediate_size", 12},
            {"cross_attention_layers", {1}}}},
          {"vision_config",
           {{"hidden_size", 4}, {"num_hidden_layers", 1}, {"num_global_layers", 1},
            {"attention_heads", 2}, {"intermediate_size", 6}, {"image_size", 4},
            {"patch_size", 2}, {"max_num_tiles", 1}, {"vision_output_dim", 8}}}};
}

// Text (hidden 8, 2 heads and 1 KV head of 4, intermediate 12): embed (10 + 8) x 8 = 144; layer 0
// (self): q 64, k 32, v 32, o 64, MLP 288, two norms 16 = 496; layer 1 (cross): the same plus
// q_norm/k_norm 8 and two gates 2 = 506; norm 8; lm_head 80: 1234. Vision (hidden 4, 4 patches + 1
// class position, 1 tile: one aspect ratio): patch conv 48, class 4, gated positions 1 + 20 +
// 2 x 20 = 61, pre/post tile 2 x (1 + 2 x 4) = 18, two LayerNorms 16, one layer 4 x 16 + 30 + 28 +
// 16 = 138, one global layer 140: 425. Projector [8, 8] + 8 = 72. 1731 parameters, 6924 bytes.
TEST(MllamaBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyMllama(), 1731u, 6924u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_model"), 425u);
  testing::ExpectShape(*m, "language_model.model.embed_tokens.weight", {18, 8});
  EXPECT_NE(FindTensor(*m, "language_model.model.layers.1.cross_attn.k_norm.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "language_model.model.layers.1.cross_attn_mlp_gate"), nullptr);
  EXPECT_NE(FindTensor(*m, "language_model.model.layers.0.self_attn.q_proj.weight"), nullptr);
  testing::ExpectShape(*m, "vision_model.gated_positional_embedding.tile_embedding.weight",
                       {2, 20});
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kFull);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kNone);
}

// meta-llama/Llama-3.2-11B-Vision: 10,670,220,835 parameters on its Hugging Face page.
TEST(MllamaBuilder, Llama32_11bVisionMatchesPublishedCount) {
  nlohmann::json ratios = {{1, 1}, {1, 2}, {1, 3}, {1, 4}, {2, 1}, {2, 2}, {3, 1}, {4, 1}};
  nlohmann::json j = {
      {"architectures", {"MllamaForConditionalGeneration"}},
      {"model_type", "mllama"},
      {"torch_dtype", "bfloat16"},
      {"text_config",
       {{"model_type", "mllama_text_model"}, {"vocab_size", 128256}, {"hidden_size", 4096},
        {"intermediate_size", 14336}, {"num_hidden_layers", 40}, {"num_attention_heads", 32},
        {"num_key_value_heads", 8}, {"cross_attention_layers", {3, 8, 13, 18, 23, 28, 33, 38}},
        {"max_position_embeddings", 131072}, {"rope_theta", 500000.0},
        {"tie_word_embeddings", false}}},
      {"vision_config",
       {{"model_type", "mllama_vision_model"}, {"hidden_size", 1280}, {"image_size", 560},
        {"patch_size", 14}, {"num_hidden_layers", 32}, {"num_global_layers", 8},
        {"attention_heads", 16}, {"intermediate_size", 5120}, {"max_num_tiles", 4},
        {"vision_output_dim", 7680}, {"intermediate_layers_indices", {3, 7, 15, 23, 30}},
        {"supported_aspect_ratios", ratios}}}};
  auto m = testing::BuildCounted(j, 10670220835u, 2 * 10670220835u);
  ASSERT_TRUE(m);
  // Without supported_aspect_ratios, the 8 ratios of 4 tiles are derived.
  j["vision_config"].erase("supported_aspect_ratios");
  auto derived = testing::BuildCounted(j, 10670220835u);
  ASSERT_TRUE(derived);
}

TEST(MllamaBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyMllama(), {{"text_config", {{"cross_attention_layers", {5}}}}},
                               "cross_attention_layers");
  testing::ExpectPatchRejected(TinyMllama(), {{"vision_config", {{"attention_heads", 3}}}},
                               "attention_heads");
  testing::ExpectPatchRejected(TinyMllama(), {{"vision_config", {{"max_num_tiles", 0}}}},
                               "max_num_tiles");
  testing::ExpectPatchRejected(TinyMllama(), {{"text_config", {{"num_attention_heads", 3}}}},
                               "num_attention_heads");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
