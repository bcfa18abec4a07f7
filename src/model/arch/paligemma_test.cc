// PaliGemma 1 and 2: tiny configs counted by hand, paligemma-3b-pt-224 against its published count.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"
#include "model/arch/vlm_test_configs.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyPaliGemma(const std::string& text_type) {
  return testing::TinyComposite(
      "paligemma", testing::TinyDecoderWith(text_type, {{"head_dim", 4}}),
      {{"architectures", {"PaliGemmaForConditionalGeneration"}},
       {"projection_dim", 8},
       {"vision_config", testing::TinyVisionTower({{"vision_use_head", false}})}});
}

// Vision 230 (as in gemma3_test.cc). Projector: Linear(4, 8) with bias = 40. Text gemma (hidden 8,
// 2 heads and 1 KV head of 4, intermediate 12): embed 80; per layer q 64, k 32, v 32, o 64, MLP
// 288, two norms 16 (496); two layers 992; norm 8: 1080; lm_head tied. 1350 parameters, 5400
// bytes. gemma2 adds pre/post feed-forward norms: 2 x 2 x 8 = 32 more.
TEST(PaliGemmaBuilder, TinyConfigsCountByHand) {
  auto m = testing::BuildCounted(TinyPaliGemma("gemma"), 1350u, 5400u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_tower"), 230u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "multi_modal_projector"), 40u);
  testing::ExpectShape(*m, "multi_modal_projector.linear.weight", {8, 4});
  EXPECT_EQ(FindTensor(*m, "language_model.lm_head.weight")->tied_to,
            "language_model.model.embed_tokens.weight");
  EXPECT_EQ(FindTensor(*m, "vision_tower.vision_model.head.probe"), nullptr);
  EXPECT_EQ(m->hp.layers.size(), 2u);
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  auto v2 = testing::BuildCounted(TinyPaliGemma("gemma2"), 1350u + 32u);
  ASSERT_TRUE(v2);
  EXPECT_NE(FindTensor(*v2, "language_model.model.layers.1.pre_feedforward_layernorm.weight"),
            nullptr);
}

TEST(PaliGemmaBuilder, RealConfigMatchesPublishedCount) {
  auto m =
      testing::BuildCounted(vlm_configs::PaliGemma3bPt224(), 2923466480u, 4 * uint64_t{2923466480});
  ASSERT_TRUE(m);
  // Without sub-configs, PaliGemmaConfig's own defaults (paligemma-3b-224 with vocab 257152 and
  // SigLIP's intermediate 4096) build.
  auto bare = BuildJson({{"model_type", "paligemma"}, {"torch_dtype", "float32"}});
  ASSERT_TRUE(bare) << bare.error().message;
  testing::ExpectShape(*bare, "language_model.model.embed_tokens.weight", {257152, 2048});
  testing::ExpectShape(*bare, "vision_tower.vision_model.encoder.layers.26.mlp.fc1.weight",
                       {4096, 1152});
}

TEST(PaliGemmaBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyPaliGemma("gemma"), {{"text_config", {{"model_type", "llama"}}}},
                               "text_config.model_type");
  testing::ExpectPatchRejected(TinyPaliGemma("gemma"),
                               {{"vision_config", {{"num_attention_heads", 3}}}},
                               "num_attention_heads");
  testing::ExpectPatchRejected(TinyPaliGemma("gemma"), {{"projection_dim", -1}}, "projection_dim");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
