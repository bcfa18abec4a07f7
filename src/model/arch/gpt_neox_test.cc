#include <gtest/gtest.h>

#include "model/arch/decoder_test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildText;
using testing::FindTensor;

constexpr std::string_view kTinyNeox = R"({"model_type": "gpt_neox",
  "architectures": ["GPTNeoXForCausalLM"], "torch_dtype": "float16", "vocab_size": 10,
  "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 16,
  "max_position_embeddings": 4, "rotary_pct": 0.5})";

TEST(GptNeoxBuilder, TinyModelCountsByHand) {
  auto model = BuildText(kTinyNeox);
  ASSERT_TRUE(model) << model.error().message;
  // embed_in 80; per layer: 2 LayerNorms 32, query_key_value 8*24+24 = 216, dense 72,
  // dense_h_to_4h 8*16+16 = 144, dense_4h_to_h 16*8+8 = 136 -> 600; two layers 1200;
  // final_layer_norm 16; embed_out 10*8 = 80 (untied). 80 + 1200 + 16 + 80 = 1376.
  auto totals = ComputeTotals(*model);
  EXPECT_EQ(totals.parameters, 1376u);
  EXPECT_EQ(totals.head_parameters, 80u);
  EXPECT_EQ(totals.stored_bytes, 1376u * 2);
  // Current transformers: one rotary inv_freq of rotary_ndims/2 = (4*0.5)/2 = 1 float32.
  EXPECT_EQ(totals.buffer_bytes, 4u);
  EXPECT_NE(FindTensor(*model, "gpt_neox.rotary_emb.inv_freq"), nullptr);
  EXPECT_EQ(model->base_model_prefix, "gpt_neox.");
  EXPECT_EQ(model->hp.layers.size(), 2u);
}

TEST(GptNeoxBuilder, Transformers442BuffersAndClassifier) {
  auto model = BuildText(kTinyNeox, {.buffers = BufferConvention::kTransformers442});
  ASSERT_TRUE(model) << model.error().message;
  // Per layer: mask bool 4*4 = 16, masked_bias 4, inv_freq 1*4 = 4, cos and sin 4*2*4 = 32 each.
  EXPECT_EQ(ComputeTotals(*model).buffer_bytes, 2u * (16 + 4 + 4 + 32 + 32));
  // A sequence-classification head on the same config: score 8*3 = 24, no bias.
  auto seq = BuildText(R"({"model_type": "gpt_neox",
    "architectures": ["GPTNeoXForSequenceClassification"], "vocab_size": 10, "hidden_size": 8,
    "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 16,
    "id2label": {"0": "a", "1": "b", "2": "c"}})");
  ASSERT_TRUE(seq) << seq.error().message;
  EXPECT_EQ(ComputeTotals(*seq).parameters, 1296u + 24);
}

TEST(GptNeoxBuilder, HostileConfigNamesTheField) {
  auto bad = BuildText(R"({"model_type": "gpt_neox", "vocab_size": 10, "hidden_size": 8,
    "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 16, "rotary_pct": 1.5})");
  testing::ExpectErrorContains(bad, "rotary_pct");
  auto missing = BuildText(R"({"model_type": "gpt_neox", "vocab_size": 10, "hidden_size": 8,
    "num_hidden_layers": 2, "num_attention_heads": 2})");
  testing::ExpectErrorContains(missing, "intermediate_size");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
