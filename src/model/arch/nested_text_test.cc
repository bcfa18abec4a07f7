// The generic reader's issue 30 additions: an unknown wrapper dispatched on text_config's
// model_type, and per-layer head-count lists. Counted by hand.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

bool HasAssumption(const Model& m, const std::string& needle) {
  for (const auto& a : m.assumptions) {
    if (a.find(needle) != std::string::npos) return true;
  }
  return false;
}

// lfm2_test.cc's tiny LFM2 (1176 parameters, head tied) inside a wrapper memfit has no builder
// for: only the text model is counted, under model.language_model.*.
nlohmann::json UnknownWrapper() {
  return {{"model_type", "some_future_vlm"},
          {"architectures", {"SomeFutureVlmForConditionalGeneration"}},
          {"torch_dtype", "float32"},
          {"text_config",
           {{"model_type", "lfm2"}, {"vocab_size", 10}, {"hidden_size", 8},
            {"num_hidden_layers", 2}, {"num_attention_heads", 2}, {"num_key_value_heads", 1},
            {"block_ff_dim", 15}, {"block_multiple_of", 4}, {"block_ffn_dim_multiplier", 1.0},
            {"block_auto_adjust_ff_dim", true}, {"conv_L_cache", 3},
            {"full_attn_idxs", {1}}}},
          {"vision_config", {{"hidden_size", 4}, {"num_hidden_layers", 1}}}};
}

TEST(NestedTextDispatch, UnknownWrapperBuildsItsKnownTextModel) {
  auto m = testing::BuildCounted(UnknownWrapper(), 1176u);
  ASSERT_TRUE(m);
  EXPECT_NE(FindTensor(*m, "model.language_model.layers.0.conv.in_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->tied_to, "model.language_model.embed_tokens.weight");
  ASSERT_FALSE(m->assumptions.empty());
  EXPECT_NE(m->assumptions.front().find("approximate"), std::string::npos);
  EXPECT_TRUE(HasAssumption(*m, "not counted"));
  EXPECT_EQ(m->hp.layers[0].mixer, LayerMixer::kShortConv);
}

TEST(NestedTextDispatch, UnknownTextTypeFallsBackToTheGenericDecoder) {
  auto j = UnknownWrapper();
  j["text_config"]["model_type"] = "some_future_text";
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_FALSE(HasAssumption(*m, "built exactly"));
  EXPECT_NE(m->source.find("generic"), std::string::npos);
  // A broken known text model is an error naming its field, not a silent fallback.
  testing::ExpectPatchRejected(UnknownWrapper(), {{"text_config", {{"full_attn_idxs", {7}}}}}, "");
}

// A text_config that names its model_type but no width or depth (xgen-mm's: model_type "phi3"
// and a window) is not built from the Phi-3 class defaults: that would be a guess about the
// wrapper's own model. The generic reader takes it, labelled generic.
TEST(NestedTextDispatch, TextConfigWithoutDimensionsIsNotBuiltFromClassDefaults) {
  auto j = UnknownWrapper();
  j["text_config"] = {{"model_type", "lfm2"}, {"sliding_window", 4}};
  j["hidden_size"] = 8;
  j["num_hidden_layers"] = 1;
  j["num_attention_heads"] = 2;
  j["vocab_size"] = 10;
  j["intermediate_size"] = 12;
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_FALSE(HasAssumption(*m, "built exactly"));
  EXPECT_NE(m->source.find("generic"), std::string::npos);
}

// The generic decoder with per-layer head lists: hidden 8, head_dim 4, gated MLP 12.
// Layer 0 (2 heads, 1 KV head): norms 16, q 8 x 8 = 64, k 32, v 32, o 64, MLP 3 x 8 x 12 = 288:
// 496. Layer 1 (4 heads, 2 KV heads): norms 16, q 128, k 64, v 64, o 128, MLP 288: 688.
// Embeddings 80, norm 8, untied lm_head 80: 1352.
TEST(NestedTextDispatch, GenericReaderTakesPerLayerHeadLists) {
  auto m = BuildJson({{"model_type", "some_future_decoder"},
                      {"architectures", {"SomeFutureDecoderForCausalLM"}},
                      {"torch_dtype", "float32"}, {"vocab_size", 10}, {"hidden_size", 8},
                      {"num_hidden_layers", 2}, {"num_attention_heads", {2, 4}},
                      {"num_key_value_heads", {1, 2}}, {"head_dim", 4},
                      {"intermediate_size", 12}, {"tie_word_embeddings", false}});
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0, {.num_heads = 2u, .num_kv_heads = 1u});
  testing::ExpectLayer(m->hp, 1, {.num_heads = 4u, .num_kv_heads = 2u});
  EXPECT_EQ(ComputeTotals(*m).parameters, 1352u);
  EXPECT_NE(m->assumptions.front().find("approximate"), std::string::npos);
}

TEST(NestedTextDispatch, PerLayerHeadListOfTheWrongLengthNamesTheField) {
  auto m = BuildJson({{"model_type", "some_future_decoder"}, {"vocab_size", 10},
                      {"hidden_size", 8}, {"num_hidden_layers", 2},
                      {"num_attention_heads", 2}, {"num_key_value_heads", {1, 1, 1}},
                      {"head_dim", 4}, {"intermediate_size", 12}});
  testing::ExpectErrorContains(m, "num_key_value_heads");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
