// Mistral 3 (Pixtral vision + mistral text): a tiny config counted by hand, Mistral Small 3.1
// against its published count.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"
#include "model/arch/vlm_test_configs.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

nlohmann::json TinyMistral3() {
  return testing::TinyComposite(
      "mistral3", TinyDecoder("mistral"),
      {{"architectures", {"Mistral3ForConditionalGeneration"}},
       {"spatial_merge_size", 2},
       {"vision_config", testing::TinyVisionTower({{"model_type", "pixtral"}})}});
}

// Vision (Pixtral, hidden 4, 2 heads of 2, intermediate 6, patch 2): patch_conv 4 x 3 x 2 x 2 =
// 48 (no bias), ln_pre 4; one layer: two RMSNorms 8, gate/up/down 3 x 24 = 72, q/k/v/o 4 x 16 = 64
// (144): 196. Projector: norm 4, merging_layer [4, 16] 64, linear_1 [8, 4] 32, linear_2 [8, 8]
// 64: 164. Text (mistral, hidden 8): embed 80, per layer q 64, k 32, v 32, o 64, MLP 288, two
// norms 16 (496), two layers 992, norm 8, untied lm_head 80: 1160. 1520 parameters, 6080 bytes;
// the rotary table inv_freq [(4 / 2)^2, 2] is a non-persistent buffer.
TEST(Mistral3Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyMistral3(), 1520u, 6080u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_tower"), 196u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "multi_modal_projector"), 164u);
  testing::ExpectShape(*m, "multi_modal_projector.patch_merger.merging_layer.weight", {4, 16});
  const Tensor* inv_freq = FindTensor(*m, "vision_tower.patch_positional_embedding.inv_freq");
  ASSERT_NE(inv_freq, nullptr);
  EXPECT_EQ(inv_freq->shape, (std::vector<uint64_t>{4, 2}));
  EXPECT_FALSE(inv_freq->stored);
  EXPECT_NE(FindTensor(*m, "vision_tower.transformer.layers.0.feed_forward.gate_proj.weight"),
            nullptr);
  EXPECT_NE(FindTensor(*m, "language_model.lm_head.weight"), nullptr);
  EXPECT_TRUE(FindTensor(*m, "language_model.lm_head.weight")->tied_to.empty());
  EXPECT_EQ(m->hp.layers.size(), 2u);
  // Two feature layers double linear_1's input; projector biases.
  auto j = TinyMistral3();
  j["vision_feature_layer"] = {-1, -2};
  j["multimodal_projector_bias"] = true;
  auto wide = testing::BuildCounted(j, 1520u + 32u + 16u);
  ASSERT_TRUE(wide);
}

TEST(Mistral3Builder, MistralSmall31MatchesPublishedCount) {
  auto m = testing::BuildCounted(vlm_configs::MistralSmall31(), 24011361280u, 2 * 24011361280u);
  ASSERT_TRUE(m);
  for (const auto& L : m->hp.layers) EXPECT_EQ(L.attention, AttentionKind::kFull);
}

// A llava with a Pixtral tower (the same tiny vision, 196) and llava's projector: linear_1 [8, 4]
// + 8 = 40, linear_2 [8, 8] + 8 = 72; the mistral text model 1160: 1468.
TEST(Mistral3Builder, LlavaWithPixtralTower) {
  auto j = TinyMistral3();
  j["model_type"] = "llava";
  j["architectures"] = {"LlavaForConditionalGeneration"};
  j.erase("spatial_merge_size");
  auto m = testing::BuildCounted(j, 1468u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_tower"), 196u);
  EXPECT_NE(FindTensor(*m, "vision_tower.transformer.layers.0.attention.q_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "multi_modal_projector.linear_1.bias"), nullptr);
  // mistral-community/pixtral-12b: 12,682,739,712 parameters on its Hugging Face page.
  nlohmann::json pixtral = {
      {"architectures", {"LlavaForConditionalGeneration"}},
      {"model_type", "llava"},
      {"image_token_index", 10},
      {"projector_hidden_act", "gelu"},
      {"torch_dtype", "bfloat16"},
      {"vision_feature_layer", -1},
      {"text_config",
       {{"head_dim", 128}, {"hidden_size", 5120}, {"intermediate_size", 14336},
        {"max_position_embeddings", 1024000}, {"model_type", "mistral"},
        {"num_hidden_layers", 40}, {"num_key_value_heads", 8}, {"rope_theta", 1000000000.0},
        {"sliding_window", nullptr}, {"vocab_size", 131072}}},
      {"vision_config",
       {{"head_dim", 64}, {"hidden_act", "silu"}, {"image_size", 1024}, {"model_type", "pixtral"},
        {"patch_size", 16}, {"rope_theta", 10000.0}}}};
  auto big = testing::BuildCounted(pixtral, 12682739712u);
  ASSERT_TRUE(big);
}

// Ministral 3 3B (mistral3 with a "ministral3" text model; its dimensions as pinned by
// vLLM-side model signatures and the Pixtral tower of Mistral Small 3.1; the card: "3.4B Language
// Model, 0.4B Vision Encoder"). Text: embed 131072 x 3072 = 402,653,184 (tied); per layer q 4096
// x 3072 = 12,582,912, k and v 1024 x 3072 = 3,145,728 each, o 12,582,912, MLP 3 x 3072 x 9216 =
// 84,934,656, two norms 6,144: 116,398,080; x 26 + embed + norm 3,072 = 3,429,006,336. Vision:
// patch_conv 1024 x 3 x 14 x 14 = 602,112, ln_pre 1,024, 24 layers of 4 x 1024^2 + 3 x 1024 x
// 4096 + 2,048 = 16,779,264: 403,305,472. Projector: norm 1,024, merging_layer 1024 x 4096 =
// 4,194,304, linear_1 3072 x 1024 = 3,145,728, linear_2 3072^2 = 9,437,184: 16,778,240. In all
// 3,849,090,048, under transformers 5's names (model.language_model.*, model.vision_tower.*,
// model.multi_modal_projector.*, as NeMo's Mistral3 FP8 state-dict adapter reads the release).
// Before, "ministral3" had no builder: the composite was refused, the text model approximate.
TEST(Mistral3Builder, Ministral3TextModelCountsByHand) {
  nlohmann::json text = {{"model_type", "ministral3"},
                         {"head_dim", 128},
                         {"hidden_size", 3072},
                         {"intermediate_size", 9216},
                         {"max_position_embeddings", 262144},
                         {"num_attention_heads", 32},
                         {"num_hidden_layers", 26},
                         {"num_key_value_heads", 8},
                         {"tie_word_embeddings", true},
                         {"vocab_size", 131072}};
  nlohmann::json ministral = {{"architectures", {"Mistral3ForConditionalGeneration"}},
                              {"model_type", "mistral3"},
                              {"multimodal_projector_bias", false},
                              {"spatial_merge_size", 2},
                              {"torch_dtype", "bfloat16"},
                              {"text_config", text},
                              {"vision_config",
                               {{"model_type", "pixtral"},
                                {"hidden_size", 1024},
                                {"image_size", 1540},
                                {"intermediate_size", 4096},
                                {"num_attention_heads", 16},
                                {"num_hidden_layers", 24},
                                {"patch_size", 14},
                                {"head_dim", 64}}}};
  auto m = testing::BuildCounted(ministral, 3849090048u, uint64_t{2} * 3849090048u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_tower"), 403305472u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "multi_modal_projector"), 16778240u);
  EXPECT_NE(FindTensor(*m, "model.language_model.layers.25.mlp.down_proj.weight"), nullptr);
  ASSERT_NE(FindTensor(*m, "lm_head.weight"), nullptr);
  EXPECT_FALSE(FindTensor(*m, "lm_head.weight")->stored);
  // Devstral 2 is the text model alone (Ministral3ForCausalLM): model.layers.*, exact.
  text["architectures"] = {"Ministral3ForCausalLM"};
  text["torch_dtype"] = "bfloat16";
  auto alone = testing::BuildCounted(text, 3429006336u);
  ASSERT_TRUE(alone);
  for (const auto& said : alone->assumptions)
    EXPECT_EQ(said.find("approximate"), said.npos) << said;
}

TEST(Mistral3Builder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyMistral3(), {{"spatial_merge_size", 0}}, "spatial_merge_size");
  testing::ExpectPatchRejected(TinyMistral3(), {{"vision_config", {{"num_attention_heads", 3}}}},
                               "num_attention_heads");
  testing::ExpectPatchRejected(TinyMistral3(), {{"vision_config", {{"patch_size", 0}}}},
                               "patch_size");
  // others dispatch (issue 30)
  testing::ExpectPatchRejected(TinyMistral3(),
                               {{"text_config", {{"model_type", "no_such_text_model"}}}},
                               "text_config.model_type");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
