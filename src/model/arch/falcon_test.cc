#include <gtest/gtest.h>

#include "model/arch/decoder_test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildText;
using testing::FindTensor;

// falcon-7b's layout: multi-query, parallel attention, one input_layernorm, no biases.
constexpr std::string_view kTinyFalcon = R"({"model_type": "falcon",
  "architectures": ["FalconForCausalLM"], "torch_dtype": "bfloat16", "vocab_size": 10,
  "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "multi_query": true,
  "new_decoder_architecture": false, "parallel_attn": true, "bias": false, "alibi": false,
  "max_position_embeddings": 4})";

TEST(FalconBuilder, TinyMultiQueryModelCountsByHand) {
  auto model = BuildText(kTinyFalcon);
  ASSERT_TRUE(model) << model.error().message;
  // word_embeddings 80; per layer: input_layernorm 16, query_key_value 8*(8 + 2*4) = 128,
  // dense 64, dense_h_to_4h 8*32 = 256, dense_4h_to_h 256 -> 720; two layers 1440; ln_f 16.
  // 80 + 1440 + 16 = 1536; lm_head tied, not stored again (no old transformers_version).
  auto totals = ComputeTotals(*model);
  EXPECT_EQ(totals.parameters, 1536u);
  EXPECT_EQ(totals.stored_bytes, 1536u * 2);
  EXPECT_EQ(model->hp.layers[0].num_kv_heads, 1u);
  // Current transformers: one rotary inv_freq [head_dim/2 = 2] float32 = 8 bytes.
  EXPECT_EQ(totals.buffer_bytes, 8u);
  // 4.42: per attention inv_freq 8 B + cos and sin [4, 4] float32 64 B each.
  auto old = BuildText(kTinyFalcon, {.buffers = BufferConvention::kTransformers442});
  ASSERT_TRUE(old);
  EXPECT_EQ(ComputeTotals(*old).buffer_bytes, 2u * (8 + 64 + 64));
  // accelerate's auto_map head: FalconForSequenceClassification, score Linear(8, 2) = 16.
  auto seq = BuildText(kTinyFalcon, {.head_class = "AutoModelForSequenceClassification"});
  ASSERT_TRUE(seq) << seq.error().message;
  EXPECT_EQ(ComputeTotals(*seq).parameters, 1536u + 16);
  EXPECT_NE(FindTensor(*seq, "score.weight"), nullptr);
  EXPECT_EQ(FindTensor(*seq, "lm_head.weight"), nullptr);
}

TEST(FalconBuilder, NewDecoderArchitectureAndOldConfigs) {
  // falcon-40b's layout: 4 heads of 2, 2 kv heads: qkv (2*2 + 4)*2 = 16 outputs -> 8*16 = 128;
  // dense 64; mlp 512; ln_attn + ln_mlp 32 -> 736 per layer; 80 + 1472 + 16 = 1568.
  auto model = BuildText(R"({"model_type": "falcon", "architectures": ["FalconForCausalLM"],
    "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_kv_heads": 2, "new_decoder_architecture": true, "parallel_attn": true})");
  ASSERT_TRUE(model) << model.error().message;
  EXPECT_EQ(ComputeTotals(*model).parameters, 1568u);
  EXPECT_NE(FindTensor(*model, "transformer.h.1.ln_mlp.weight"), nullptr);
  EXPECT_EQ(model->hp.layers[1].num_kv_heads, 2u);
  // The same as a RefinedWeb config of the custom-code era (n_head, n_head_kv, n_layer), saved by
  // transformers 4.27: the tied lm_head is stored a second time (80 elements), resident once.
  auto rw = BuildText(R"({"model_type": "RefinedWeb", "architectures": ["RWForCausalLM"],
    "torch_dtype": "bfloat16", "vocab_size": 10, "hidden_size": 8, "n_layer": 2, "n_head": 4,
    "n_head_kv": 2, "parallel_attn": true, "transformers_version": "4.27.4"})");
  ASSERT_TRUE(rw) << rw.error().message;
  auto totals = ComputeTotals(*rw);
  EXPECT_EQ(totals.parameters, 1568u);
  EXPECT_EQ(totals.stored_bytes, (1568u + 80) * 2);
  EXPECT_EQ(totals.resident_bytes - totals.buffer_bytes, 1568u * 2);
  // Classic multi-head, sequential, with biases: qkv 8*24+24 = 216, dense 72, mlp 288 + 264,
  // input_layernorm + post_attention_layernorm 32 -> 872 per layer; 80 + 1744 + 16 = 1840.
  auto classic = BuildText(R"({"model_type": "falcon", "vocab_size": 10, "hidden_size": 8,
    "num_hidden_layers": 2, "num_attention_heads": 2, "multi_query": false,
    "parallel_attn": false, "bias": true, "alibi": true})");
  ASSERT_TRUE(classic) << classic.error().message;
  EXPECT_EQ(ComputeTotals(*classic).parameters, 1840u);
  EXPECT_EQ(ComputeTotals(*classic).buffer_bytes, 0u);  // ALiBi: no rotary buffers
}

TEST(FalconBuilder, HostileConfigNamesTheField) {
  auto bad = BuildText(R"({"model_type": "falcon", "vocab_size": 10, "hidden_size": 8,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_kv_heads": 3,
    "new_decoder_architecture": true})");
  testing::ExpectErrorContains(bad, "num_kv_heads");
  auto head = BuildText(kTinyFalcon, {.head_class = "AutoModelForMaskedLM"});
  testing::ExpectErrorContains(head, "AutoModelForMaskedLM");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
