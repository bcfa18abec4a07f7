// Mistral 4 (issue 30): the standalone text model and inside a mistral3 outer config, which
// dispatches on text_config.model_type. Counted by hand.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::FindTensor;

// Mistral4Config's keys (configuration_mistral4.py), tiny.
nlohmann::json TinyMistral4() {
  return testing::TinyMlaMoe(
      "mistral4", {{"architectures", {"Mistral4ForCausalLM"}}, {"num_key_value_heads", 2}});
}

// Attention per layer: input norm 8, q_a 8 x 4 = 32, q_a norm 4, q_b 4 x (2 x 4) = 32, kv_a
// 8 x (4 + 2) = 48, kv_a norm 4, kv_b 4 x (2 x (2 + 2)) = 32, o 4 x 8 = 32, post norm 8: 200.
// Layer 0 dense: + 3 x 8 x 12 = 288 -> 488. Layer 1 MoE: gate 2 x 8 = 16, fused experts
// gate_up_proj [2, 6, 8] 96 + down_proj [2, 8, 3] 48, shared experts 3 x 8 x 3 = 72 -> 432.
// Embeddings 80, norm 8, untied lm_head 80: 1088 parameters, 4352 bytes (no router bias buffer).
TEST(Mistral4Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyMistral4(), 1088u, 4352u);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kMla);
  EXPECT_TRUE(m->hp.layers[1].moe);
  testing::ExpectShape(*m, "model.layers.1.mlp.experts.gate_up_proj", {2, 6, 8});
  testing::ExpectShape(*m, "model.layers.1.mlp.experts.down_proj", {2, 8, 3});
  EXPECT_EQ(FindTensor(*m, "model.layers.1.mlp.gate.e_score_correction_bias"), nullptr);
}

nlohmann::json TinyMistral3WithMistral4() {
  auto text = TinyMistral4();
  text.erase("architectures");
  return testing::TinyComposite(
      "mistral3", text,
      {{"architectures", {"Mistral3ForConditionalGeneration"}},
       {"spatial_merge_size", 2},
       {"vision_config", testing::TinyVisionTower({{"model_type", "pixtral"}})}});
}

// Vision 196 and projector 164 as in mistral3_test.cc (the same tiny Pixtral tower: patch_conv
// 48, ln_pre 4, one layer 144; norm 4, merging_layer 64, linear_1 [8, 4] 32, linear_2 [8, 8] 64),
// the mistral4 text model above 1088: 1448 parameters, 5792 bytes, under transformers 5's names.
TEST(Mistral4Builder, InsideMistral3DispatchesOnTextModelType) {
  auto m = testing::BuildCounted(TinyMistral3WithMistral4(), 1448u, 5792u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_tower"), 196u);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "multi_modal_projector"), 164u);
  EXPECT_NE(FindTensor(*m, "model.language_model.layers.1.mlp.experts.gate_up_proj"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.multi_modal_projector.patch_merger.merging_layer.weight"),
            nullptr);
  EXPECT_NE(FindTensor(*m, "model.vision_tower.ln_pre.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "lm_head.weight"), nullptr);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kMla);
}

TEST(Mistral4Builder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyMistral4(), {{"kv_lora_rank", nullptr}}, "kv_lora_rank");
  testing::ExpectPatchRejected(TinyMistral4(), {{"moe_intermediate_size", 0}},
                               "moe_intermediate_size");
  testing::ExpectPatchRejected(TinyMistral3WithMistral4(),
                               {{"text_config", {{"qk_nope_head_dim", nullptr}}}},
                               "qk_nope_head_dim");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
