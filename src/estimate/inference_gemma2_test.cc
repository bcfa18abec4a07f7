// Gemma-2 prefill terms in transformers (validation/FINDINGS.md 1l): the scaled embedding's
// input kept through the layers, and the window mask the sliding layers rebuild.

#include <gtest/gtest.h>

#include "estimate/hand_count_test_util.h"
#include "memfit/estimate_inference.h"
#include "model/arch/arch_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// Two layers (layer 0 sliding, window 16; layer 1 full), hidden 32, 4 heads (2 KV) of 8,
// vocab 100, float32.
nlohmann::json TinyGemma2() {
  return estimate_test::HandCountConfig(
      "gemma2", "Gemma2ForCausalLM",
      {{"head_dim", 8}, {"sliding_window", 16}, {"torch_dtype", "float32"}});
}

uint64_t Activations(const Model& model, AttnImpl attn) {
  return estimate_test::EstimateOk(model, estimate_test::HandCountOptions(1, 64, Dtype::kF32, attn))
      .activation_bytes;
}

// 64 tokens, eager: layer 0's attention is Gemma-2's peak. The residual stream and normed input
// 2 x 64 x 32 x 4 = 16,384, q/k/v 64 x (32 + 16 + 16) x 4 = 16,384, repeat_kv's copies of k
// and v 64 x 4 x 16 x 4 = 16,384, the scores and the float32 softmax 4 x 64^2 x 8 = 131,072,
// the 4-D mask 64^2 x 4 = 16,384, the sliding layer's bool tril and float32 where() copy of
// the mask 4,096 x (4 + 1) = 20,480, and the scaled embedding's input 64 x 32 x 4 = 8,192:
// 225,280, beside the whole cache: Gemma-2's HybridCache is allocated whole when generate()
// starts (layer 0's window of 16 tokens 2,048 and layer 1's 64 tokens 8,192).
// Under another (Llama-style) type, whose DynamicCache grows layer by layer, the peak is layer
// 1's attention: the terms above but the window mask and the scaled copy (196,608),
// + inputs_embeds kept 8,192 + layer 0's cache 2,048 = 206,848, less the whole cache: 196,608.
// Flash takes neither mask, and the peak of both is layer 1's MLP, where every Llama-style
// class keeps inputs_embeds as Gemma-2 does: stream 16,384 + gated MLP 3 x 64 x 64 x 4 =
// 49,152 + inputs_embeds 8,192 = 73,728 beyond the cache.
TEST(InferenceGemma2, EmbeddingKeptAndSlidingLayersRebuildTheMask) {
  auto model = arch::testing::BuildJson(TinyGemma2());
  ASSERT_TRUE(model) << model.error().message;
  ASSERT_EQ(model->hp.layers.size(), 2u);
  ASSERT_EQ(model->hp.layers[0].attention, AttentionKind::kSliding);
  Model other = *model;
  other.model_type = "gemma2_without_terms";
  EXPECT_EQ(Activations(*model, AttnImpl::kEager), 225280u);
  EXPECT_EQ(Activations(other, AttnImpl::kEager), 196608u);
  EXPECT_EQ(Activations(*model, AttnImpl::kFlash), 73728u);
  EXPECT_EQ(Activations(other, AttnImpl::kFlash), 73728u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
