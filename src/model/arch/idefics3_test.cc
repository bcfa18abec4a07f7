// Idefics3: a tiny config counted by hand, the real granite-docling-258M config against its
// card, hostile configs.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

nlohmann::json TinyIdefics3() {
  return testing::TinyComposite("idefics3", TinyDecoder("llama"),
                                {{"architectures", {"Idefics3ForConditionalGeneration"}},
                                 {"tie_word_embeddings", true},
                                 {"scale_factor", 2},
                                 {"vision_config", testing::TinyVisionTower()}});
}

// Vision (hidden 4, patch 2, image 4: 4 patches): patch conv 4 x 3 x 2 x 2 + 4 = 52, positions
// 4 x 4 = 16, one layer: q/k/v/out 4 x (16 + 4) = 80, two LayerNorms 16, fc1 4 x 6 + 6 = 30, fc2
// 6 x 4 + 4 = 28 (154), post_layernorm 8: 230. Connector: (4 x 2^2) -> 8 without bias: 128. Text
// (llama, hidden 8): embed 80 + 2 x 496 + norm 8 = 1080, lm_head tied. 1438 parameters, float32:
// 5752 bytes; no position_ids buffer, no pooling head.
TEST(Idefics3Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyIdefics3(), 1438u, 5752u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_model"), 230u);
  testing::ExpectShape(*m, "model.connector.modality_projection.proj.weight", {8, 16});
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->tied_to, "model.text_model.embed_tokens.weight");
  EXPECT_NE(FindTensor(*m, "model.text_model.layers.1.mlp.down_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.vision_model.embeddings.position_ids"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.vision_model.head.probe"), nullptr);
  EXPECT_EQ(m->hp.layers.size(), 2u);
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  // An untied head is its own Linear.
  auto j = TinyIdefics3();
  j["tie_word_embeddings"] = false;
  auto untied = testing::BuildCounted(j, 1438u + 80u);
  ASSERT_TRUE(untied);
}

TEST(Idefics3Builder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyIdefics3(), {{"vision_config", {{"image_size", nullptr}}}},
                               "image_size");
  testing::ExpectPatchRejected(TinyIdefics3(), {{"vision_config", {{"num_attention_heads", 3}}}},
                               "num_attention_heads");
  testing::ExpectPatchRejected(TinyIdefics3(), {{"scale_factor", 0}}, "scale_factor");
  testing::ExpectPatchRejected(TinyIdefics3(), {{"text_config", {{"model_type", "mistral"}}}},
                               "text_config.model_type");
  testing::ExpectPatchRejected(TinyIdefics3(), {{"text_config", {{"hidden_size", nullptr}}}},
                               "hidden_size");
  testing::ExpectPatchRejected(
      TinyIdefics3(), {{"text_config", {{"vocab_size", uint64_t{1} << 50}}}}, "vocab_size");
  testing::ExpectPatchRejected(TinyIdefics3(), {{"vision_config", nullptr}}, "vision_config");
  auto j = TinyIdefics3();
  j["vision_config"]["hidden_size"] = uint64_t{1} << 40;
  ASSERT_FALSE(BuildJson(j));
}

// ibm-granite/granite-docling-258M. Vision (768, 12 layers, patch 16, image 512: 1024 patches):
// conv 768 x 3 x 16 x 16 + 768 = 590,592, positions 786,432, a layer 4 x 590,592 + 3,072 +
// 2,362,368 + 2,360,064 = 7,087,872 (x 12 = 85,054,464), post LN 1,536: 86,433,024. Connector
// (768 x 16) -> 576: 7,077,888. Text (llama, 576, 30 layers, 9 heads / 3 KV heads of 64, MLP 1536,
// vocab 100352, tied): 57,802,752 + 30 x 3,540,096 + 576 = 164,006,208. 257,517,120 parameters
// (the card: 258M), bfloat16: 515,034,240 bytes.
TEST(Idefics3Builder, RealGraniteDocling) {
  auto m = testing::BuildEvalConfig("recent/ibm-granite__granite-docling-258M");
  if (!m) GTEST_SKIP() << "../shared/eval/recent/ibm-granite__granite-docling-258M is absent";
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 257517120u);
  EXPECT_EQ(t.stored_bytes, 515034240u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_model"), 86433024u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
