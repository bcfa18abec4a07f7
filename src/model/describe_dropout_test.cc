// The dropout probabilities a training estimate counts come from the config's keys for every
// family, exact builders included (FillTrainingDropout, memfit/text_hparams.h): StarCoder2's
// residual_dropout / attention_dropout and Qwen2's attention_dropout used to
// change no estimate because their builders read no dropout (issue 31).

#include <gtest/gtest.h>

#include "memfit/describe.h"
#include "memfit/text_hparams.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

Model Describe(const std::string& json) {
  auto config = HfConfig::Parse(json, "config.json");
  EXPECT_TRUE(config) << config.error().message;
  ModelInputs inputs;
  inputs.name = "m";
  inputs.config = *config;
  auto model = DescribeModel(inputs);
  EXPECT_TRUE(model) << model.error().message;
  return model ? *model : Model{};
}

// StarCoder2Config's keys (transformers configuration_starcoder2.py): the modeling file applies
// residual_dropout after o_proj and after c_proj and attention_dropout to the eager attention
// probabilities (embedding_dropout, to the embedding output, is counted as hidden_dropout).
TEST(DescribeDropout, Starcoder2ReadsResidualAndAttentionDropout) {
  const Model m = Describe(R"({"model_type":"starcoder2","architectures":["Starcoder2ForCausalLM"],
    "vocab_size":16,"hidden_size":8,"intermediate_size":32,"num_hidden_layers":1,
    "num_attention_heads":2,"num_key_value_heads":1,"torch_dtype":"float32",
    "residual_dropout":0.1,"embedding_dropout":0.05,"attention_dropout":0.2})");
  EXPECT_EQ(m.hp.hidden_dropout, 0.1);
  EXPECT_EQ(m.hp.attention_dropout, 0.2);
}

TEST(DescribeDropout, Qwen2ReadsAttentionDropoutAndNothingElse) {
  const Model m = Describe(R"({"model_type":"qwen2","architectures":["Qwen2ForCausalLM"],
    "vocab_size":16,"hidden_size":8,"intermediate_size":32,"num_hidden_layers":1,
    "num_attention_heads":2,"num_key_value_heads":1,"torch_dtype":"float32",
    "attention_dropout":0.1})");
  EXPECT_EQ(m.hp.attention_dropout, 0.1);
  EXPECT_EQ(m.hp.hidden_dropout, 0.0);
}

// A builder's own value (GPT-2's resid_pdrop, BERT's hidden_dropout_prob default) is kept; only
// fields it left at 0 are filled.
TEST(DescribeDropout, FillsOnlyWhatTheBuilderLeftAtZero) {
  auto config = HfConfig::Parse(R"({"model_type":"x","residual_dropout":0.3,
    "attention_dropout":0.4})", "config.json");
  ASSERT_TRUE(config);
  Hyperparameters hp;
  hp.hidden_dropout = 0.1;
  FillTrainingDropout(*config, hp);
  EXPECT_EQ(hp.hidden_dropout, 0.1);
  EXPECT_EQ(hp.attention_dropout, 0.4);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
