// ViT, CLIP, SigLIP, ResNet, LLaVA and timm builders on tiny configs; counts derived by hand.
#include "model/arch/arch_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using arch_test::Build;
using arch_test::ComponentParameters;

TEST(VitBuilder, ImageClassificationCounts) {
  auto m = Build(R"({"model_type": "vit", "architectures": ["ViTForImageClassification"],
      "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 8,
      "image_size": 4, "patch_size": 2, "num_channels": 3,
      "id2label": {"0": "a", "1": "b", "2": "c"}})");
  ASSERT_TRUE(m) << m.error().message;
  auto totals = ComputeTotals(*m);
  // (4/2)^2 = 4 patches. cls_token 4, position_embeddings 5*4 = 20, projection 4*3*2*2+4 = 52;
  // layer: q/k/v 60, output 20, intermediate 40, output 36, two norms 16 = 172; layernorm 8:
  // 256; classifier 4*3+3 = 15: 271. ViTModel adds the pooler (20): 276.
  EXPECT_EQ(totals.parameters, 271u);
  EXPECT_EQ(totals.parameters - totals.head_parameters + totals.base_only_parameters, 276u);
}

TEST(VitBuilder, HostileConfigNamesTheField) {
  auto m = Build(R"({"model_type": "vit", "hidden_size": 4, "num_hidden_layers": 1,
      "num_attention_heads": 2, "intermediate_size": 8, "image_size": 5, "patch_size": 2})");
  testing::ExpectErrorContains(m, "image_size");
}

// text: vocab 10, hidden 4, 1 layer, 2 heads, intermediate 8, 6 positions;
// vision: hidden 6, 1 layer, 2 heads, intermediate 8, image 4, patch 2 (4 patches).
const char* kTowers = R"("text_config": {"vocab_size": 10, "hidden_size": 4,
      "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 8,
      "max_position_embeddings": 6},
    "vision_config": {"hidden_size": 6, "num_hidden_layers": 1, "num_attention_heads": 2,
      "intermediate_size": 8, "image_size": 4, "patch_size": 2})";

TEST(ClipBuilder, TwoTowersAndProjections) {
  auto m = Build(std::string(R"({"model_type": "clip", "architectures": ["CLIPModel"],
      "projection_dim": 3, )") + kTowers + "}");
  ASSERT_TRUE(m) << m.error().message;
  // Text: token 40, position 24, layer 4*(16+4) + 8 + 40 + 36 + 8 = 172, final norm 8: 244,
  // text_projection 4*3 = 12: component 256.
  EXPECT_EQ(ComponentParameters(*m, "text_model"), 256u);
  // Vision: class 6, patch conv 6*3*2*2 = 72 (no bias), position 5*6 = 30, pre_layrnorm 12,
  // layer 4*(36+6) + 12 + 56 + 54 + 12 = 302, post_layernorm 12: 434; visual_projection 18: 452.
  EXPECT_EQ(ComponentParameters(*m, "vision_model"), 452u);
  auto totals = ComputeTotals(*m);
  EXPECT_EQ(totals.parameters, 256u + 452 + 1);  // + logit_scale
  // position_ids: text [1, 6] and vision [1, 5], int64.
  EXPECT_EQ(totals.buffer_bytes, (6u + 5) * 8);
}

TEST(ClipBuilder, SiglipCounts) {
  auto m = Build(std::string(R"({"model_type": "siglip", "architectures": ["SiglipModel"], )") +
                 kTowers + "}");
  ASSERT_TRUE(m) << m.error().message;
  // Text as CLIP (244) + head 4*4+4 = 20: 264. Vision: patch conv 72+6 = 78, position 4*6 = 24
  // (no class token), layer 302, post_layernorm 12, head: probe 6, in_proj 18*6+18 = 126,
  // out_proj 42, layernorm 12, fc1 56, fc2 54 = 296: 712. logit_scale + logit_bias 2: 978.
  EXPECT_EQ(ComponentParameters(*m, "text_model"), 264u);
  EXPECT_EQ(ComponentParameters(*m, "vision_model"), 712u);
  EXPECT_EQ(ComputeTotals(*m).parameters, 978u);
}

TEST(ClipBuilder, HostileConfigNamesTheField) {
  auto m = Build(R"({"model_type": "clip", "text_config": {"hidden_size": 5,
      "num_attention_heads": 2}, "vision_config": {}})");
  testing::ExpectErrorContains(m, "hidden_size");
  auto no_vision = Build(R"({"model_type": "clip", "text_config": {}})");
  testing::ExpectErrorContains(no_vision, "vision_config");
}

TEST(ResnetBuilder, BasicBlocksWithBatchNormBuffers) {
  auto m = Build(R"({"model_type": "resnet", "architectures": ["ResNetForImageClassification"],
      "embedding_size": 2, "hidden_sizes": [4, 8], "depths": [1, 1], "layer_type": "basic",
      "num_channels": 3, "id2label": {"0": "a", "1": "b", "2": "c"}})");
  ASSERT_TRUE(m) << m.error().message;
  auto totals = ComputeTotals(*m);
  // Embedder conv 2*3*7*7 = 294, BN 4. Stage 0 (2 -> 4, stride 1): shortcut conv 4*2 = 8 + BN 8,
  // layer.0 conv 4*2*9 = 72 + BN 8, layer.1 4*4*9 = 144 + BN 8: 248. Stage 1 (4 -> 8, stride 2):
  // shortcut 32 + 16, layer.0 8*4*9 = 288 + 16, layer.1 8*8*9 = 576 + 16: 944.
  // classifier.1 8*3+3 = 27. 294 + 4 + 248 + 944 + 27 = 1517.
  EXPECT_EQ(totals.parameters, 1517u);
  EXPECT_EQ(totals.head_parameters, 27u);
  // 7 BatchNorms over 2 + 3*4 + 3*8 = 38 channels: running mean/var 2*38*4 = 304 bytes, plus
  // 7 int64 num_batches_tracked = 56 bytes.
  EXPECT_EQ(totals.buffer_bytes, 360u);
}

TEST(ResnetBuilder, HostileConfigNamesTheField) {
  auto m = Build(R"({"model_type": "resnet", "hidden_sizes": [4, 8], "depths": [1]})");
  testing::ExpectErrorContains(m, "depths");
  auto bad = Build(R"({"model_type": "resnet", "hidden_sizes": [4, -8], "depths": [1, 1]})");
  testing::ExpectErrorContains(bad, "hidden_sizes");
}

TEST(LlavaBuilder, ComponentsOfTheHfLayout) {
  auto m = Build(R"({"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
      "text_config": {"model_type": "llama", "vocab_size": 10, "hidden_size": 4,
        "intermediate_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
        "num_key_value_heads": 2},
      "vision_config": {"hidden_size": 6, "num_hidden_layers": 1, "num_attention_heads": 2,
        "intermediate_size": 8, "image_size": 4, "patch_size": 2}})");
  ASSERT_TRUE(m) << m.error().message;
  // Vision tower as CLIP's vision model: 434. Projector: linear_1 6*4+4 = 28, linear_2 20: 48.
  // Language model: embed 40, layer: 2 norms 8, q/k/v/o 4*16 = 64, gate/up/down 3*32 = 96: 168,
  // norm 4, untied lm_head 40: 252.
  arch_test::ExpectComponentParameters(*m, {{"vision_tower", 434u},
                                            {"multi_modal_projector", 48u},
                                            {"language_model", 252u}});
  EXPECT_EQ(ComputeTotals(*m).parameters, 734u);
  // ComponentTotals reports the same split, in emission order.
  auto parts = ComponentTotals(*m);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].first, "vision_tower");
  EXPECT_EQ(parts[0].second.parameters, 434u);
  EXPECT_EQ(parts[2].first, "language_model");
  EXPECT_EQ(parts[2].second.parameters, 252u);
  EXPECT_NE(arch_test::FindTensor(*m, "language_model.model.layers.0.mlp.up_proj.weight"), nullptr);
}

TEST(LlavaBuilder, HostileConfigNamesTheField) {
  auto m = Build(R"({"model_type": "llava", "text_config": {"model_type": "mistral"},
      "vision_config": {}})");
  testing::ExpectErrorContains(m, "text_config");
  auto orig = Build(R"({"model_type": "llava", "architectures": ["LlavaLlamaForCausalLM"],
      "vocab_size": 10, "hidden_size": 4, "intermediate_size": 8, "num_hidden_layers": 1,
      "num_attention_heads": 2, "mm_projector_type": "mlp2x_gelu"})");
  testing::ExpectErrorContains(orig, "mm_hidden_size");
}

TEST(TimmBuilder, Resnet50MatchesAccelerate) {
  auto m = Build(R"({"architecture": "resnet50.a1_in1k", "num_classes": 1000})");
  ASSERT_TRUE(m) << m.error().message;
  auto totals = ComputeTotals(*m);
  // The same network as microsoft/resnet-50 (params.tsv: 25,557,032 parameters for
  // ResNetForImageClassification) with the same 53 BatchNorms.
  EXPECT_EQ(totals.parameters, 25557032u);
  // accelerate (create_empty_model on timm): 25,557,032 * 4 + 212,904 bytes of BatchNorm buffers =
  // 102,441,032 B; the largest leaf is a 3x3 512->512 convolution: 512*512*9*4 = 9,437,184 B.
  auto acc = EstimateAccelerate(*m);
  ASSERT_TRUE(acc);
  EXPECT_EQ(acc->rows[0].total_bytes, 102441032.0);
  EXPECT_EQ(acc->rows[0].largest_layer_bytes, 9437184.0);
}

TEST(TimmBuilder, VitAndConvnextCounts) {
  auto vit = Build(R"({"architecture": "vit_base_patch16_224.augreg2_in21k_ft_in1k",
      "num_classes": 1000})");
  ASSERT_TRUE(vit) << vit.error().message;
  // patch_embed 768*3*16*16+768 = 590,592; pos_embed 197*768 = 151,296; cls 768; 12 blocks of
  // 7,087,872; norm 1,536; head 768*1000+1000 = 769,000: 86,567,656.
  EXPECT_EQ(ComputeTotals(*vit).parameters, 86567656u);
  auto convnext = Build(R"({"architecture": "convnext_tiny.fb_in1k", "num_classes": 1000})");
  ASSERT_TRUE(convnext) << convnext.error().message;
  // stem 4,704 + 192; block(d) = 8d^2 + 58d: stage 0 3*block(96) = 237,888; stage 1 downsample
  // 74,112 + 3*block(192) = 918,144; stage 2 295,680 + 9*block(384) = 10,817,280; stage 3
  // 1,181,184 + 3*block(768) = 14,289,408; head norm 1,536 + fc 769,000: 28,589,128.
  EXPECT_EQ(ComputeTotals(*convnext).parameters, 28589128u);
}

TEST(TimmBuilder, UnknownNameIsAClearError) {
  auto m = Build(R"({"architecture": "efficientnet_b0.ra_in1k", "num_classes": 1000})");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("efficientnet_b0.ra_in1k"), std::string::npos);
  EXPECT_NE(m.error().message.find("header"), std::string::npos);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
