// BERT-family builders on tiny configs; every count is derived by hand in the comments.
#include "model/arch/arch_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using arch_test::Build;

// vocab 10, hidden 4, 2 layers, 2 heads, intermediate 8, 6 positions, 2 token types.
// Embeddings: word 10*4 + position 6*4 + token type 2*4 + LayerNorm 2*4 = 80.
// Layer: query/key/value 3*(4*4+4) = 60, attention.output.dense 20, LayerNorm 8,
//        intermediate 4*8+8 = 40, output.dense 8*4+4 = 36, LayerNorm 8 = 172; two layers 344.
// Pooler 4*4+4 = 20.
std::string TinyBert(const std::string& type, const std::string& arch, const std::string& extra = "") {
  return R"({"model_type": ")" + type + R"(", "architectures": [")" + arch +
         R"("], "vocab_size": 10, "hidden_size": 4, "num_hidden_layers": 2,
            "num_attention_heads": 2, "intermediate_size": 8, "max_position_embeddings": 6)" +
         extra + "}";
}

TEST(BertBuilder, MaskedLmTiesDecoderAndKeepsPoolerForBaseView) {
  auto m = Build(TinyBert("bert", "BertForMaskedLM"));
  ASSERT_TRUE(m) << m.error().message;
  auto totals = ComputeTotals(*m);
  // cls.predictions: transform.dense 20 + LayerNorm 8 + bias 10 = 38 (decoder tied to the word
  // embeddings, decoder.bias tied to bias). 80 + 344 + 38 = 462.
  EXPECT_EQ(totals.parameters, 462u);
  EXPECT_EQ(totals.head_parameters, 38u);
  // BertModel (AutoModel) has the pooler: 80 + 344 + 20 = 444.
  EXPECT_EQ(totals.base_only_parameters, 20u);
  // Buffers: position_ids and token_type_ids, int64 [1, 6]: 2 * 48 bytes.
  EXPECT_EQ(totals.buffer_bytes, 96u);
  EXPECT_EQ(totals.resident_bytes, 462u * 4 + 96);
  // No torch_dtype: float32, recorded as an assumption.
  EXPECT_FALSE(m->assumptions.empty());
  EXPECT_EQ(m->base_model_prefix, "bert.");
  // accelerate builds BertModel: (444 params * 4) + 96 bytes of buffers = 1872; largest block is
  // an encoder layer (172 * 4 = 688 > embeddings 80 * 4 + 96 = 416).
  auto acc = EstimateAccelerate(*m);
  ASSERT_TRUE(acc);
  EXPECT_EQ(acc->constructor_class, "BertModel");
  EXPECT_EQ(acc->rows[0].total_bytes, 1872.0);
  EXPECT_EQ(acc->rows[0].largest_layer_bytes, 688.0);
}

TEST(BertBuilder, SequenceClassificationUsesId2labelAndPooler) {
  auto m = Build(TinyBert("bert", "BertForSequenceClassification",
                          R"(, "id2label": {"0": "a", "1": "b", "2": "c"})"));
  ASSERT_TRUE(m) << m.error().message;
  auto totals = ComputeTotals(*m);
  // Pooler kept (20); classifier 4*3+3 = 15: 80 + 344 + 20 + 15 = 459.
  EXPECT_EQ(totals.parameters, 459u);
  EXPECT_EQ(totals.head_parameters, 15u);
  EXPECT_EQ(totals.base_only_parameters, 0u);
}

TEST(BertBuilder, RobertaQuestionAnsweringHasNoPooler) {
  auto m = Build(TinyBert("roberta", "RobertaForQuestionAnswering"));
  ASSERT_TRUE(m) << m.error().message;
  auto totals = ComputeTotals(*m);
  // qa_outputs 4*2+2 = 10: 80 + 344 + 10 = 434; RobertaModel adds the pooler: 444.
  EXPECT_EQ(totals.parameters, 434u);
  EXPECT_EQ(totals.parameters - totals.head_parameters + totals.base_only_parameters, 444u);
  EXPECT_NE(arch_test::FindTensor(*m, "roberta.encoder.layer.1.output.LayerNorm.bias"), nullptr);
}

TEST(BertBuilder, XlmRobertaSequenceClassificationHead) {
  auto m = Build(TinyBert("xlm-roberta", "XLMRobertaForSequenceClassification"));
  ASSERT_TRUE(m) << m.error().message;
  // classifier.dense 20 + classifier.out_proj 4*2+2 = 10: 80 + 344 + 30 = 454.
  EXPECT_EQ(ComputeTotals(*m).parameters, 454u);
}

TEST(BertBuilder, ElectraProjectsSmallEmbeddings) {
  auto m = Build(TinyBert("electra", "ElectraForPreTraining", R"(, "embedding_size": 2)"));
  ASSERT_TRUE(m) << m.error().message;
  auto totals = ComputeTotals(*m);
  // Embeddings at width 2: 10*2 + 6*2 + 2*2 + 4 = 40; embeddings_project 2*4+4 = 12; layers 344;
  // discriminator_predictions.dense 20 + dense_prediction 4+1 = 25: 421, head 25.
  EXPECT_EQ(totals.parameters, 421u);
  EXPECT_EQ(totals.head_parameters, 25u);
}

TEST(BertBuilder, RelativeKeyPositionsAddDistanceEmbeddings) {
  auto m = Build(TinyBert("bert", "BertModel", R"(, "position_embedding_type": "relative_key")"));
  ASSERT_TRUE(m) << m.error().message;
  // BertModel 444 + per layer distance_embedding [2*6-1, head_dim 2] = 22: 444 + 2*22 = 488.
  EXPECT_EQ(ComputeTotals(*m).parameters, 488u);
  auto bad = Build(TinyBert("bert", "BertModel", R"(, "position_embedding_type": "rotary")"));
  testing::ExpectErrorContains(bad, "position_embedding_type");
}

TEST(BertBuilder, BaseModelHasNoPrefix) {
  auto m = Build(TinyBert("bert", "BertModel"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 444u);
  EXPECT_NE(arch_test::FindTensor(*m, "pooler.dense.weight"), nullptr);
  EXPECT_EQ(m->base_model_prefix, "");
}

TEST(BertBuilder, HostileConfigsNameTheField) {
  auto bad_heads = Build(R"({"model_type": "bert", "vocab_size": 10, "hidden_size": 5,
      "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8})");
  testing::ExpectErrorContains(bad_heads, "hidden_size");
  auto missing = Build(R"({"model_type": "roberta", "hidden_size": 4, "num_hidden_layers": 2,
      "num_attention_heads": 2, "intermediate_size": 8})");
  testing::ExpectErrorContains(missing, "vocab_size");
  auto unknown = Build(TinyBert("bert", "BertForSomethingElse"));
  testing::ExpectErrorContains(unknown, "BertForSomethingElse");
  auto negative = Build(R"({"model_type": "electra", "vocab_size": -3, "hidden_size": 4,
      "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8})");
  testing::ExpectErrorContains(negative, "vocab_size");
}

TEST(DistilBertBuilder, MaskedLmCounts) {
  auto m = Build(R"({"model_type": "distilbert", "architectures": ["DistilBertForMaskedLM"],
      "vocab_size": 10, "dim": 4, "n_layers": 2, "n_heads": 2, "hidden_dim": 8,
      "max_position_embeddings": 6, "torch_dtype": "float16"})");
  ASSERT_TRUE(m) << m.error().message;
  auto totals = ComputeTotals(*m);
  // Embeddings 10*4 + 6*4 + LayerNorm 8 = 72; layer: q/k/v/out_lin 4*(16+4) = 80, sa_layer_norm 8,
  // lin1 40, lin2 36, output_layer_norm 8 = 172, two = 344; head: vocab_transform 20,
  // vocab_layer_norm 8, vocab_projector.bias 10 = 38 (weight tied). 72 + 344 + 38 = 454.
  EXPECT_EQ(totals.parameters, 454u);
  EXPECT_EQ(totals.head_parameters, 38u);
  // float16 parameters (454 * 2) + position_ids int64 [1, 6] (48 bytes).
  EXPECT_EQ(totals.resident_bytes, 454u * 2 + 48);
  EXPECT_EQ(totals.stored_bytes, (454u) * 2);
}

TEST(DistilBertBuilder, HostileConfigNamesTheField) {
  auto m = Build(R"({"model_type": "distilbert", "vocab_size": 10, "dim": 5, "n_layers": 2,
      "n_heads": 2, "hidden_dim": 8})");
  testing::ExpectErrorContains(m, "\"dim\"");
  auto missing = Build(R"({"model_type": "distilbert", "vocab_size": 10, "dim": 4, "n_heads": 2,
      "hidden_dim": 8})");
  testing::ExpectErrorContains(missing, "n_layers");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(DebertaV2Builder, V3StyleRelativeAttention) {
  auto m = arch_test::Build(R"({"model_type": "deberta-v2",
      "architectures": ["DebertaV2ForSequenceClassification"], "vocab_size": 10, "hidden_size": 4,
      "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8,
      "max_position_embeddings": 6, "type_vocab_size": 0, "position_biased_input": false,
      "relative_attention": true, "position_buckets": 3, "norm_rel_ebd": "layer_norm",
      "share_att_key": true, "pos_att_type": ["p2c", "c2p"], "num_labels": 2})");
  ASSERT_TRUE(m) << m.error().message;
  auto totals = ComputeTotals(*m);
  // Embeddings: word 40 + LayerNorm 8 = 48 (no positions, no token types). Layers as BERT's:
  // 2 * 172 = 344. rel_embeddings 2*3 buckets * 4 = 24, encoder.LayerNorm 8. Head: pooler.dense
  // 20 + classifier 4*2+2 = 10. 48 + 344 + 24 + 8 + 30 = 454; DebertaV2Model 424.
  EXPECT_EQ(totals.parameters, 454u);
  EXPECT_EQ(totals.head_parameters, 30u);
  // position_ids int64 [1, 6].
  EXPECT_EQ(totals.buffer_bytes, 48u);
}

TEST(DebertaV2Builder, HostileConfigNamesTheField) {
  auto m = arch_test::Build(R"({"model_type": "deberta-v2", "vocab_size": 10, "hidden_size": 4,
      "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8,
      "relative_attention": true, "position_buckets": "many"})");
  testing::ExpectErrorContains(m, "position_buckets");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
