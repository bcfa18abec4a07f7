// LLaVA-NeXT, LLaVA-NeXT-Video and LLaVA-OneVision: tiny configs counted by hand,
// llava-v1.6-mistral-7b-hf against its published count.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"
#include "model/arch/vlm_test_configs.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::ExpectError;
using testing::FindTensor;
using testing::TinyDecoder;

nlohmann::json TinyLlavaNext(const std::string& type, const std::string& text_type,
                             const std::string& vision_type) {
  return testing::TinyComposite(
      type, TinyDecoder(text_type),
      {{"vision_config",
        testing::TinyVisionTower({{"model_type", vision_type}, {"vision_use_head", false}})}});
}

// CLIP vision (hidden 4, patch 2, image 4: 4 patches + class): class_embedding 4, patch conv
// 4 x 3 x 2 x 2 = 48 (no bias), positions 5 x 4 = 20, pre_layrnorm 8, one layer 154,
// post_layernorm 8: 242. Projector: linear_1 4 x 8 + 8 = 40, linear_2 8 x 8 + 8 = 72: 112.
// image_newline 8. Text (llama, hidden 8): embed 80, two layers 2 x 496, norm 8, untied lm_head
// 80: 1160. 1522 parameters, 6088 bytes.
TEST(LlavaNextBuilder, TinyConfigsCountByHand) {
  auto m = testing::BuildCounted(TinyLlavaNext("llava_next", "llama", "clip_vision_model"), 1522u,
                                 6088u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_tower"), 242u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "multi_modal_projector"), 112u);
  testing::ExpectShape(*m, "image_newline", {8});
  EXPECT_NE(FindTensor(*m, "language_model.lm_head.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "vision_tower.vision_model.pre_layrnorm.weight"), nullptr);
  EXPECT_EQ(m->hp.layers.size(), 2u);
  // A mistral text model builds the same tensors here (no sliding window in the count).
  auto mistral =
      testing::BuildCounted(TinyLlavaNext("llava_next", "mistral", "clip_vision_model"), 1522u);
  ASSERT_TRUE(mistral);
  // Video: average pooling has no parameters; conv pooling is a Conv2d(4, 4, 2) with bias:
  // 4 x 4 x 2 x 2 + 4 = 68.
  auto video = TinyLlavaNext("llava_next_video", "llama", "clip_vision_model");
  auto avg = testing::BuildCounted(video, 1522u);
  ASSERT_TRUE(avg);
  video["spatial_pool_mode"] = "conv";
  auto conv = testing::BuildCounted(video, 1522u + 68u);
  ASSERT_TRUE(conv);
  testing::ExpectShape(*conv, "vision_resampler.pool.weight", {4, 4, 2, 2});
  // OneVision: SigLIP tower (230, as in gemma3_test.cc) and a qwen2 text model (q/k/v biases:
  // 2 x (8 + 4 + 4) = 32 more than llama's 1160; qwen2's untied head as configured).
  auto ov = BuildJson(TinyLlavaNext("llava_onevision", "qwen2", "siglip_vision_model"));
  ASSERT_TRUE(ov) << ov.error().message;
  EXPECT_EQ(arch_test::ComponentParameters(*ov, "vision_tower"), 230u);
  EXPECT_EQ(ComputeTotals(*ov).parameters, 230u + 112u + 8u + 1160u + 32u);
}

TEST(LlavaNextBuilder, LlavaV16Mistral7bMatchesPublishedCount) {
  auto m = testing::BuildCounted(vlm_configs::LlavaV16Mistral7b(), 7566747648u, 2 * 7566747648u);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hp.hidden_size, 4096u);
  EXPECT_EQ(m->hp.num_kv_heads, 8u);
}

TEST(LlavaNextBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyLlavaNext("llava_next", "llama", "clip_vision_model"),
                               {{"text_config", {{"model_type", "gpt2"}}}},
                               "text_config.model_type");
  auto j = TinyLlavaNext("llava_next", "llama", "pixtral");
  ExpectError(j, "vision_config.model_type");
  testing::ExpectPatchRejected(TinyLlavaNext("llava_next_video", "llama", "clip_vision_model"),
                               {{"spatial_pool_mode", "median"}}, "spatial_pool_mode");
  testing::ExpectPatchRejected(TinyLlavaNext("llava_onevision", "qwen2", "siglip_vision_model"),
                               {{"vision_config", nullptr}}, "vision_config");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
