// Runs memfit on every row of shared/eval/measured.csv it can express and asserts the stated
// tolerance per class (5% load/inference, 10% training, 30% for rough "reported"/range rows).
// Skips when shared/eval is absent. Set MEMFIT_ACCURACY_OUT=path to write the Markdown report
// (docs/accuracy.md is made from it).

#include <fstream>

#include <gtest/gtest.h>

#include "memfit/describe.h"
#include "memfit/render_memory.h"
#include "memfit/validation.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

Tensor P(std::string name, std::vector<uint64_t> shape, bool head = false) {
  uint64_t n = 1;
  for (auto d : shape) n *= d;
  return Tensor{.name = std::move(name), .shape = shape, .dtype = Dtype::kF32, .numel = n,
                .bytes = n * 4, .in_head = head};
}

// bert-large-uncased with a 2-label sequence-classification head, built here from the published
// architecture (Devlin et al. 2019, BERT-LARGE: L 24, H 1024, A 16, FFN 4096; vocab 30522,
// 512 positions, 2 token types; hidden and attention dropout 0.1), tensor names and shapes as
// transformers' BertForSequenceClassification. 335,143,938 parameters.
Model BertLargeSeqCls() {
  const uint64_t h = 1024, f = 4096, L = 24, V = 30522;
  Model m;
  m.name = "bert-large-uncased";
  m.model_type = "bert";
  m.architecture = "BertForSequenceClassification";  // bl-01's head=sequence-classification
  auto& t = m.tensors;
  t.push_back(P("bert.embeddings.word_embeddings.weight", {V, h}));
  t.push_back(P("bert.embeddings.position_embeddings.weight", {512, h}));
  t.push_back(P("bert.embeddings.token_type_embeddings.weight", {2, h}));
  t.push_back(P("bert.embeddings.LayerNorm.weight", {h}));
  t.push_back(P("bert.embeddings.LayerNorm.bias", {h}));
  for (uint64_t i = 0; i < L; ++i) {
    const std::string l = "bert.encoder.layer." + std::to_string(i) + ".";
    for (const char* x : {"attention.self.query", "attention.self.key", "attention.self.value",
                          "attention.output.dense"}) {
      t.push_back(P(l + x + ".weight", {h, h}));
      t.push_back(P(l + x + ".bias", {h}));
    }
    t.push_back(P(l + "attention.output.LayerNorm.weight", {h}));
    t.push_back(P(l + "attention.output.LayerNorm.bias", {h}));
    t.push_back(P(l + "intermediate.dense.weight", {f, h}));
    t.push_back(P(l + "intermediate.dense.bias", {f}));
    t.push_back(P(l + "output.dense.weight", {h, f}));
    t.push_back(P(l + "output.dense.bias", {h}));
    t.push_back(P(l + "output.LayerNorm.weight", {h}));
    t.push_back(P(l + "output.LayerNorm.bias", {h}));
    m.hp.layers.push_back({.num_heads = 16, .num_kv_heads = 16, .head_dim_k = 64,
                           .head_dim_v = 64, .intermediate_size = f});
  }
  t.push_back(P("bert.pooler.dense.weight", {h, h}));
  t.push_back(P("bert.pooler.dense.bias", {h}));
  t.push_back(P("classifier.weight", {2, h}, true));
  t.push_back(P("classifier.bias", {2}, true));
  m.hp.hidden_size = h;
  m.hp.num_layers = L;
  m.hp.num_attention_heads = 16;
  m.hp.num_kv_heads = 16;
  m.hp.head_dim = 64;
  m.hp.intermediate_size = f;
  m.hp.vocab_size = V;
  m.hp.norm = "layernorm";
  m.hp.activation = "gelu";
  m.hp.hidden_dropout = 0.1;
  m.hp.attention_dropout = 0.1;
  return m;
}

TEST(MeasuredValidationTest, BertFixtureHasTheKnownParameterCount) {
  uint64_t n = 0;
  for (const auto& t : BertLargeSeqCls().tensors) n += t.numel;
  EXPECT_EQ(n, 335143938u);
}

TEST(MeasuredValidationTest, EveryExpressibleRowWithinItsTolerance) {
  auto eval = testing::EvalDir();
  if (!eval) GTEST_SKIP() << "shared/eval not found (set MEMFIT_EVAL_DIR): skipping";
  auto text = testing::ReadFile(*eval + "/measured.csv");
  ASSERT_TRUE(text.has_value());
  auto rows = ParseMeasuredCsv(*text, "measured.csv");
  ASSERT_TRUE(rows.has_value()) << rows.error().message;
  ModelProvider provider = [&](std::string_view id, const BuildOptions& build) -> Result<Model> {
    if (id == "bert-large-uncased") return BertLargeSeqCls();
    std::string folder(id);
    for (size_t p = folder.find('/'); p != std::string::npos; p = folder.find('/')) {
      folder.replace(p, 1, "__");
    }
    auto json = testing::ReadFile(*eval + "/models/" + folder + "/config.json");
    if (!json) return MakeError("no config.json for {} in shared/eval/models", id);
    MEMFIT_ASSIGN_OR_RETURN(HfConfig hf, HfConfig::Parse(*json, folder + "/config.json"));
    ModelInputs in{.name = std::string(id), .config = std::move(hf)};
    return DescribeModel(in, {.build = build, .prefer_config = true});
  };
  std::vector<RowResult> results;
  int expressed = 0;
  for (const auto& row : *rows) {
    RowResult r = EvaluateRow(row, provider);
    if (r.expressed && !r.calibration) {
      ++expressed;
      EXPECT_TRUE(r.within) << r.id << " " << r.model << ": estimate " << r.estimate
                            << " vs measured " << r.measured << " (" << r.error * 100
                            << "%, tolerance " << r.tolerance * 100 << "%)";
    }
    results.push_back(std::move(r));
  }
  EXPECT_GE(expressed, 10);  // the bert-large rows and the Llama/Qwen LoRA rows
  if (const char* out = std::getenv("MEMFIT_ACCURACY_OUT")) {
    std::ofstream(out) << RenderValidation(results, OutputFormat::kMarkdown);
  }
}

TEST(MeasuredValidationTest, ParseAndPlan) {
  auto rows = ParseMeasuredCsv(
      "id,model,task,settings,measure,value,unit,source,notes\n"
      "a,m,train,\"precision=fp16-mixed;optimizer=adamw-8bit;batch=1;grad_accum=4;"
      "checkpointing=full;seq=512;trainer=hf\",nvml_used,5363,MB,src,\n"
      "b,m,load,format=gguf;quant=Q6_K,llama_log,6.14,GiB,src,\n"
      "c,m,train,method=full;gpus=8,reported,70-77.6,GB,src,\n",
      "t.csv");
  ASSERT_TRUE(rows.has_value()) << rows.error().message;
  ASSERT_EQ(rows->size(), 3u);
  RowPlan a = PlanRow((*rows)[0]);
  EXPECT_TRUE(a.unsupported.empty()) << a.unsupported;
  EXPECT_EQ(a.train.precision, Precision::kFp16Mixed);
  EXPECT_EQ(a.train.optimizer, Optimizer::kAdamW8bit);
  EXPECT_EQ(a.train.grad_accum, 4u);
  EXPECT_EQ(a.train.checkpointing, Checkpointing::kFull);
  EXPECT_EQ(a.train.attn, AttnImpl::kEager);
  EXPECT_DOUBLE_EQ(a.measured_lo, 5363.0 * 1048576);
  EXPECT_DOUBLE_EQ(a.tolerance, 0.10);
  EXPECT_FALSE(PlanRow((*rows)[1]).unsupported.empty());
  RowPlan c = PlanRow((*rows)[2]);
  EXPECT_NE(c.unsupported.find("sequence length"), std::string::npos);
  EXPECT_TRUE(c.rough);
  EXPECT_DOUBLE_EQ(c.measured_hi, 77.6e9);
  EXPECT_FALSE(ParseMeasuredCsv("x,y\n", "bad.csv").has_value());
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
