// Gemma 3 vision-language: a tiny config counted by hand, the real gemma-3-{4b,12b,27b}-it
// configs (which leave most text fields to Gemma3TextConfig) against their published counts.

#include <gtest/gtest.h>

#include "formats/hf_config_json.h"
#include "memfit/text_hparams.h"
#include "model/arch/arch_test_util.h"
#include "model/arch/vlm_test_configs.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyGemma3() {
  return testing::TinyComposite(
      "gemma3", testing::TinyDecoderWith("gemma3_text", {{"head_dim", 4}}),
      {{"architectures", {"Gemma3ForConditionalGeneration"}},
       {"vision_config", testing::TinyVisionTower({{"vision_use_head", false}})}});
}

// Vision (hidden 4, patch 2, image 4: 4 patches): patch conv 4 x 3 x 2 x 2 + 4 = 52, positions
// 4 x 4 = 16, one layer: q/k/v/out 4 x (16 + 4) = 80, two LayerNorms 16, fc1 4 x 6 + 6 = 30, fc2
// 6 x 4 + 4 = 28 (154), post_layernorm 8: 230. Projector: [4, 8] = 32 + RMSNorm(4) = 36. Text
// (hidden 8, 2 heads and 1 KV head of 4, intermediate 12): embed 80; per layer q 64, k 32, v 32,
// o 64, q_norm 4, k_norm 4, MLP 3 x 96 = 288, four norms 32 (520); two layers 1040; norm 8:
// 1128; lm_head tied. 1394 parameters, float32: 5576 bytes.
TEST(Gemma3Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyGemma3(), 1394u, 5576u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_tower"), 230u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "multi_modal_projector"), 36u);
  testing::ExpectShape(*m, "multi_modal_projector.mm_input_projection_weight", {4, 8});
  EXPECT_NE(FindTensor(*m, "multi_modal_projector.mm_soft_emb_norm.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "language_model.lm_head.weight")->tied_to,
            "language_model.model.embed_tokens.weight");
  EXPECT_NE(FindTensor(*m, "language_model.model.layers.1.self_attn.k_norm.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "vision_tower.vision_model.post_layernorm.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "vision_tower.vision_model.head.probe"), nullptr);
  EXPECT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->hp.text_config_key, "text_config");
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  // An untied head (top-level tie_word_embeddings false) is its own Linear.
  auto j = TinyGemma3();
  j["tie_word_embeddings"] = false;
  auto untied = testing::BuildCounted(j, 1394u + 80u);
  ASSERT_TRUE(untied);
}

// The Hugging Face pages' safetensors totals.
TEST(Gemma3Builder, RealConfigsMatchPublishedCounts) {
  const std::pair<nlohmann::json, uint64_t> kModels[] = {
      {vlm_configs::Gemma3_4b(), 4300079472u},
      {vlm_configs::Gemma3_12b(), 12187325040u},
      {vlm_configs::Gemma3_27b(), 27432406640u}};
  for (const auto& [config, parameters] : kModels) {
    auto m = BuildJson(config);
    ASSERT_TRUE(m) << m.error().message;
    auto t = ComputeTotals(*m);
    EXPECT_EQ(t.parameters, parameters);
    EXPECT_EQ(t.stored_bytes, 2 * parameters);  // bfloat16, lm_head tied
  }
  auto m = BuildJson(vlm_configs::Gemma3_4b());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.vocab_size, 262208u);
  EXPECT_EQ(m->hp.num_attention_heads, 8u);
  EXPECT_EQ(m->hp.num_kv_heads, 4u);
  EXPECT_EQ(m->hp.head_dim, 256u);
  bool said = false;
  for (const auto& a : m->assumptions) said |= a.find("vocab_size = 262208") != std::string::npos;
  EXPECT_TRUE(said);
  // 5 sliding (window 1024) : 1 global.
  ASSERT_EQ(m->hp.layers.size(), 34u);
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kSliding);
  EXPECT_EQ(m->hp.layers[5].attention, AttentionKind::kFull);
}

// The text-side reader (inference, training) gets the same Gemma3TextConfig defaults.
TEST(Gemma3Builder, TextHyperparametersTakeTheClassDefaults) {
  auto config = HfConfig::FromJson(vlm_configs::Gemma3_4b(), "config.json");
  ASSERT_TRUE(config);
  auto t = ReadTextHyperparameters(*config);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->hp.vocab_size, 262208u);
  EXPECT_EQ(t->hp.num_attention_heads, 8u);
  EXPECT_EQ(t->hp.num_kv_heads, 4u);
  EXPECT_EQ(t->hp.head_dim, 256u);
  EXPECT_TRUE(t->hp.tie_word_embeddings);
  auto config12 = HfConfig::FromJson(vlm_configs::Gemma3_12b(), "config.json");
  ASSERT_TRUE(config12);
  auto t12 = ReadTextHyperparameters(*config12);
  ASSERT_TRUE(t12) << t12.error().message;
  EXPECT_EQ(t12->hp.head_dim, 256u);  // not 3840 / 16
  EXPECT_EQ(t12->hp.vocab_size, 262208u);
}

TEST(Gemma3Builder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyGemma3(), {{"vision_config", {{"num_attention_heads", 3}}}},
                               "num_attention_heads");
  testing::ExpectPatchRejected(TinyGemma3(), {{"text_config", {{"model_type", "llama"}}}},
                               "text_config.model_type");
  testing::ExpectPatchRejected(TinyGemma3(), {{"text_config", {{"vocab_size", uint64_t{1} << 50}}}},
                               "vocab_size");
  testing::ExpectPatchRejected(TinyGemma3(), {{"text_config", "nope"}}, "text_config");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
