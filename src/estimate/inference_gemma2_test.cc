// Gemma-2 prefill terms in transformers (validation/FINDINGS.md 1l): the scaled embedding's
// input kept through the layers, and the window mask the sliding layers rebuild.

#include <gtest/gtest.h>

#include "memfit/estimate_inference.h"
#include "model/arch/arch_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// Two layers (layer 0 sliding, window 16; layer 1 full), hidden 32, 4 heads (2 KV) of 8,
// vocab 100, float32.
nlohmann::json TinyGemma2() {
  return {{"model_type", "gemma2"}, {"architectures", {"Gemma2ForCausalLM"}},
          {"vocab_size", 100}, {"hidden_size", 32}, {"intermediate_size", 64},
          {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
          {"head_dim", 8}, {"sliding_window", 16}, {"max_position_embeddings", 4096},
          {"torch_dtype", "float32"}};
}

uint64_t Activations(Model model, AttnImpl attn) {
  InferenceOptions o;
  o.context_tokens = 64;
  o.dtype = Dtype::kF32;
  o.attn = attn;
  o.overhead.cuda_context_bytes = 0;
  o.versions.transformers = {4, 48};
  auto e = EstimateInference(model, o);
  EXPECT_TRUE(e) << e.error().message;
  return e ? e->activation_bytes : 0;
}

// Against the same layers under another model type: + the kept embedding output, 64 tokens x
// 32 x 4 = 8,192, + in the sliding layer the bool tril and the float32 where() copy of the
// 1 x 64 x 64 mask, 4,096 x (4 + 1) = 20,480. Flash attention takes neither mask.
TEST(InferenceGemma2, EmbeddingKeptAndSlidingLayersRebuildTheMask) {
  auto model = arch::testing::BuildJson(TinyGemma2());
  ASSERT_TRUE(model) << model.error().message;
  ASSERT_EQ(model->hp.layers.size(), 2u);
  ASSERT_EQ(model->hp.layers[0].attention, AttentionKind::kSliding);
  Model other = *model;
  other.model_type = "gemma2_without_terms";
  EXPECT_EQ(Activations(*model, AttnImpl::kEager),
            Activations(other, AttnImpl::kEager) + 8192 + 20480);
  EXPECT_EQ(Activations(*model, AttnImpl::kFlash), Activations(other, AttnImpl::kFlash) + 8192);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
