// T5, mT5, UMT5, BART, mBART and Whisper builders on tiny configs; counts derived by hand.
#include "model/arch/arch_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using arch_test::Build;

// vocab 10, d_model 4, d_kv 2 (inner 2*2 = 4), d_ff 8, 2 encoder layers, 1 decoder layer,
// 3 relative-attention buckets.
std::string TinyT5(const std::string& type, const std::string& extra) {
  return R"({"model_type": ")" + type + R"(", "architectures": [")" +
         (type == "t5" ? std::string("T5") : type == "mt5" ? std::string("MT5") : std::string("UMT5")) +
         R"(ForConditionalGeneration"], "vocab_size": 10, "d_model": 4, "d_kv": 2, "d_ff": 8,
            "num_layers": 2, "num_decoder_layers": 1, "num_heads": 2,
            "relative_attention_num_buckets": 3)" + extra + "}";
}

TEST(T5Builder, TiedT5Counts) {
  auto m = Build(TinyT5("t5", R"(, "feed_forward_proj": "relu")"));
  ASSERT_TRUE(m) << m.error().message;
  auto totals = ComputeTotals(*m);
  // shared 40. Encoder layer: q/k/v/o 4*16 = 64, layer_norm 4, wi 32, wo 32, layer_norm 4 = 136;
  // relative_attention_bias in block 0: 3*2 = 6; final_layer_norm 4: 2*136 + 10 = 282.
  // Decoder layer: self 64 + 4, cross 64 + 4, ff 64 + 4 = 204; + 6 + 4 = 214.
  // 40 + 282 + 214 = 536; lm_head tied to shared (T5 default).
  EXPECT_EQ(totals.parameters, 536u);
  EXPECT_EQ(totals.head_parameters, 0u);
  EXPECT_TRUE(m->hp.is_encoder_decoder);
  EXPECT_EQ(m->hp.num_encoder_layers, 2u);
  EXPECT_EQ(m->hp.num_layers, 1u);
  ASSERT_EQ(m->hp.layers.size(), 1u);
  EXPECT_TRUE(m->hp.layers[0].cross_attention);
  EXPECT_EQ(m->hp.layers[0].head_dim_k, 2u);
}

TEST(T5Builder, GatedUntiedV11Counts) {
  auto m = Build(TinyT5("t5", R"(, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": false)"));
  ASSERT_TRUE(m) << m.error().message;
  auto totals = ComputeTotals(*m);
  // Feed-forward wi_0, wi_1, wo: 3*32 = 96. Encoder layer 64+4+96+4 = 168: 2*168 + 6 + 4 = 346.
  // Decoder layer 64+4+64+4+96+4 = 236: + 6 + 4 = 246. shared 40, lm_head 40: 672, head 40.
  EXPECT_EQ(totals.parameters, 672u);
  EXPECT_EQ(totals.head_parameters, 40u);
  EXPECT_TRUE(m->hp.gated_mlp);
  EXPECT_EQ(m->hp.activation, "gelu_new");
}

TEST(T5Builder, Mt5UntiedByDefaultAndUmt5BiasPerLayer) {
  auto mt5 = Build(TinyT5("mt5", ""));
  ASSERT_TRUE(mt5) << mt5.error().message;
  // As the tied T5 (536) plus an untied lm_head 40.
  EXPECT_EQ(ComputeTotals(*mt5).parameters, 576u);
  auto umt5 = Build(TinyT5("umt5", ""));
  ASSERT_TRUE(umt5) << umt5.error().message;
  // As the tied T5 plus encoder block 1's own relative_attention_bias (6): 542.
  EXPECT_EQ(ComputeTotals(*umt5).parameters, 542u);
}

TEST(T5Builder, HostileConfigsNameTheField) {
  auto bad_ff = Build(TinyT5("t5", R"(, "feed_forward_proj": "gated-")"));
  testing::ExpectErrorContains(bad_ff, "feed_forward_proj");
  auto missing = Build(R"({"model_type": "t5", "vocab_size": 10, "d_model": 4, "d_ff": 8,
      "num_layers": 2, "num_heads": 2})");
  testing::ExpectErrorContains(missing, "d_kv");
}

// vocab 10, d_model 4, 1 encoder and 1 decoder layer, 2 heads, ffn 8, 6 positions (+2 offset).
std::string TinyBart(const std::string& type, const std::string& arch) {
  return R"({"model_type": ")" + type + R"(", "architectures": [")" + arch + R"("],
      "vocab_size": 10, "d_model": 4, "encoder_layers": 1, "decoder_layers": 1,
      "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_ffn_dim": 8,
      "decoder_ffn_dim": 8, "max_position_embeddings": 6})";
}

TEST(BartBuilder, ConditionalGenerationCountsAndAccelerateTripleEmbedding) {
  auto m = Build(TinyBart("bart", "BartForConditionalGeneration"));
  ASSERT_TRUE(m) << m.error().message;
  auto totals = ComputeTotals(*m);
  // shared 40. Encoder: embed_positions 8*4 = 32; layer: 4*(16+4) = 80 attention, 8 norm,
  // fc1 40, fc2 36, 8 norm = 172; layernorm_embedding 8: 212. Decoder: 32 + (80+8+80+8+40+36+8 =
  // 260) + 8 = 300. 40 + 212 + 300 = 552; lm_head and both embed_tokens tied to shared.
  EXPECT_EQ(totals.parameters, 552u);
  // final_logits_bias [1, 10] float32, persistent.
  EXPECT_EQ(totals.buffer_bytes, 40u);
  // accelerate builds BartModel, whose embed_tokens ties init_empty_weights breaks: the shared
  // embedding counts three times: (552 + 2*40) * 4 = 2528 bytes; final_logits_bias is not in it.
  auto acc = EstimateAccelerate(*m);
  ASSERT_TRUE(acc);
  EXPECT_EQ(acc->constructor_class, "BartModel");
  EXPECT_EQ(acc->rows[0].total_bytes, 2528.0);
}

TEST(BartBuilder, MbartAddsFinalLayerNorms) {
  auto m = Build(TinyBart("mbart", "MBartForConditionalGeneration"));
  ASSERT_TRUE(m) << m.error().message;
  // BART's 552 plus encoder.layer_norm and decoder.layer_norm (8 each): 568.
  EXPECT_EQ(ComputeTotals(*m).parameters, 568u);
}

TEST(BartBuilder, HostileConfigNamesTheField) {
  auto m = Build(R"({"model_type": "bart", "vocab_size": 10, "d_model": 4, "encoder_layers": 1,
      "decoder_layers": 1, "encoder_attention_heads": 3, "decoder_attention_heads": 2,
      "encoder_ffn_dim": 8, "decoder_ffn_dim": 8})");
  testing::ExpectErrorContains(m, "encoder_attention_heads");
}

TEST(WhisperBuilder, TinyCounts) {
  auto m = Build(R"({"model_type": "whisper", "architectures": ["WhisperForConditionalGeneration"],
      "vocab_size": 10, "num_mel_bins": 3, "d_model": 4, "encoder_layers": 1,
      "decoder_layers": 1, "encoder_attention_heads": 2, "decoder_attention_heads": 2,
      "encoder_ffn_dim": 8, "decoder_ffn_dim": 8, "max_source_positions": 5,
      "max_target_positions": 6})");
  ASSERT_TRUE(m) << m.error().message;
  auto totals = ComputeTotals(*m);
  // Encoder: conv1 4*3*3+4 = 40, conv2 4*4*3+4 = 52, embed_positions 5*4 = 20, layer: k_proj 16
  // (no bias) + v/q/out 3*20 = 76, norm 8, fc1 40, fc2 36, norm 8 = 168; layer_norm 8: 288.
  // Decoder: embed_tokens 40, embed_positions 24, layer 76+8+76+8+40+36+8 = 252, layer_norm 8:
  // 324. Total 612; proj_out tied to embed_tokens.
  EXPECT_EQ(totals.parameters, 612u);
  EXPECT_EQ(totals.head_parameters, 0u);
  EXPECT_EQ(m->hp.encoder_max_positions, 5u);
  EXPECT_EQ(m->hp.max_position_embeddings, 6u);
  ASSERT_EQ(m->hp.layers.size(), 1u);
  EXPECT_TRUE(m->hp.layers[0].cross_attention);
}

TEST(WhisperBuilder, HostileConfigNamesTheField) {
  auto m = Build(R"({"model_type": "whisper", "vocab_size": 10, "d_model": 4,
      "encoder_layers": 1, "encoder_attention_heads": 2, "decoder_attention_heads": 2,
      "encoder_ffn_dim": 8, "decoder_ffn_dim": 8})");
  testing::ExpectErrorContains(m, "decoder_layers");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
