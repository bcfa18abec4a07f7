// Idefics2: a tiny config counted by hand, idefics2-8b's config, hostile configs.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

nlohmann::json TinyIdefics2() {
  return testing::TinyComposite("idefics2", TinyDecoder("mistral"),
                                {{"architectures", {"Idefics2ForConditionalGeneration"}},
                                 {"perceiver_config",
                                  {{"resampler_n_latents", 2},
                                   {"resampler_depth", 1},
                                   {"resampler_n_heads", 2},
                                   {"resampler_head_dim", 2},
                                   {"num_key_value_heads", 1}}},
                                 {"vision_config", testing::TinyVisionTower()}});
}

// Vision 230 (as in idefics3_test.cc). Connector: modality_projection gate/up [12, 4] 2 x 48,
// down [8, 12] 96 (192); perceiver: latents [2, 8] 16, one layer: two norms 16, q [4, 8] 32,
// k and v [2, 8] 2 x 16, o [8, 4] 32, post norm 8, MLP 3 x 256 (888), norm 8 (912). Text
// (mistral, hidden 8): 1080 + untied lm_head 80 = 1160. 2494 parameters, 9976 bytes.
TEST(Idefics2Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyIdefics2(), 2494u, 9976u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_model"), 230u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "connector"), 192u + 912u);
  testing::ExpectShape(*m, "model.connector.perceiver_resampler.latents", {2, 8});
  EXPECT_EQ(FindTensor(*m, "model.connector.perceiver_resampler.layers.0.self_attn.k_proj.weight")
                ->shape,
            (std::vector<uint64_t>{2, 8}));
  EXPECT_NE(FindTensor(*m, "model.text_model.layers.1.mlp.down_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "lm_head.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.vision_model.embeddings.position_ids"), nullptr);
  EXPECT_EQ(m->hp.layers.size(), 2u);
  auto j = TinyIdefics2();
  j["tie_word_embeddings"] = true;
  auto tied = testing::BuildCounted(j, 2494u - 80u);
  ASSERT_TRUE(tied);
  EXPECT_EQ(FindTensor(*tied, "lm_head.weight")->tied_to, "model.text_model.embed_tokens.weight");
}

// HuggingFaceM4/idefics2-8b's config (SigLIP so400m at 980 px, mistral-7B text with 32,003
// tokens, a 3-layer perceiver of 64 latents): 8,402,768,112 parameters derived by hand from the
// tensors above (no published count was available to compare).
TEST(Idefics2Builder, Idefics2_8bConfig) {
  nlohmann::json j = {
      {"architectures", {"Idefics2ForConditionalGeneration"}},
      {"model_type", "idefics2"},
      {"torch_dtype", "float32"},
      {"perceiver_config",
       {{"model_type", "idefics2"}, {"resampler_depth", 3}, {"resampler_head_dim", 96},
        {"resampler_n_heads", 16}, {"resampler_n_latents", 64}, {"num_key_value_heads", 4}}},
      {"text_config",
       {{"model_type", "mistral"}, {"vocab_size", 32003}, {"max_position_embeddings", 32768},
        {"rms_norm_eps", 1e-05}, {"sliding_window", 4096}}},
      {"vision_config",
       {{"hidden_size", 1152}, {"image_size", 980}, {"intermediate_size", 4304},
        {"model_type", "idefics2"}, {"num_attention_heads", 16}, {"num_hidden_layers", 27},
        {"patch_size", 14}}}};
  auto m = testing::BuildCounted(j, 8402768112u);
  ASSERT_TRUE(m);
}

TEST(Idefics2Builder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyIdefics2(), {{"vision_config", {{"num_attention_heads", 3}}}},
                               "num_attention_heads");
  testing::ExpectPatchRejected(TinyIdefics2(), {{"text_config", {{"model_type", "llama"}}}},
                               "text_config.model_type");
  testing::ExpectPatchRejected(TinyIdefics2(), {{"perceiver_config", {{"resampler_depth", -1}}}},
                               "resampler_depth");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
