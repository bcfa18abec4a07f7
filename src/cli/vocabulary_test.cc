// The shared words of every command (cli/vocabulary.cc) and the flag -> request binding
// (cli/request_flags.h): each spelling of a quantity reaches the same field, old spellings say
// once that they are deprecated, and bad words give one line naming the flag.

#include <gtest/gtest.h>

#include <sstream>

#include "base/error_test_util.h"
#include "cli/request_flags.h"
#include "cli/vocabulary.h"

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(VocabularyTest, EverySpellingOfTheContextSetsTheSameVariable) {
  for (const std::string spelling : {"-c", "--context", "--ctx-size", "--ctx"}) {
    CLI::App app;
    uint64_t tokens = 0;
    AddContextOption(app, tokens, "tokens");
    app.parse(spelling + " 512", /*program_name_included=*/false);
    EXPECT_EQ(tokens, 512u) << spelling;
  }
  CLI::App app;
  uint64_t sequences = 1;
  AddBatchOption(app, sequences, "sequences");
  app.parse("--batch 8", false);
  EXPECT_EQ(sequences, 8u);
}

TEST(VocabularyTest, ADeprecatedSpellingSetsTheFieldSaysSoAndIsHidden) {
  std::ostringstream out, err;
  Context ctx{out, err};
  CLI::App app;
  uint64_t tokens = 0;
  AddContextOption(app, tokens, "tokens");
  AddDeprecatedOption(app, ctx, "--seq", "--context", tokens);
  app.parse("--seq 256", false);
  EXPECT_EQ(tokens, 256u);
  EXPECT_EQ(err.str(), "memfit: --seq is deprecated: use --context\n");
  EXPECT_EQ(app.help().find("--seq"), std::string::npos) << app.help();
  EXPECT_NE(app.help().find("--context"), std::string::npos);
  // The new spelling says nothing.
  std::ostringstream quiet_err;
  Context quiet{out, quiet_err};
  CLI::App other;
  AddContextOption(other, tokens, "tokens");
  AddDeprecatedOption(other, quiet, "--seq", "--context", tokens);
  other.parse("--context 128", false);
  EXPECT_EQ(tokens, 128u);
  EXPECT_EQ(quiet_err.str(), "");
}

TEST(VocabularyTest, CurveGpusAreCatalogNamesOrSizes) {
  auto gpus = CurveGpus({"rtx4090", "24GiB"});
  ASSERT_TRUE(gpus) << gpus.error().message;
  ASSERT_EQ(gpus->size(), 2u);
  // The catalog's name, its 24 GB (binary: 24 x 2^30 B) and compute capability 8.9.
  EXPECT_EQ((*gpus)[0].name, "RTX 4090");
  EXPECT_EQ((*gpus)[0].memory_bytes, 24 * kGiB);
  EXPECT_EQ((*gpus)[0].compute_capability, 89u);
  // A size keeps the user's word; its compute capability is unknown (0).
  EXPECT_EQ((*gpus)[1].name, "24GiB");
  EXPECT_EQ((*gpus)[1].memory_bytes, 24 * kGiB);
  EXPECT_EQ((*gpus)[1].compute_capability, 0u);
  auto bad = CurveGpus({"potato"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "--curve-gpu \"potato\": not in memfit's GPU catalog (see `memfit gpus`); or "
            "give a size such as 24GiB");
}

TEST(VocabularyTest, LibraryVersions) {
  auto current = ToRuntimeVersions({});
  ASSERT_TRUE(current);
  EXPECT_EQ(current->torch, (LibraryVersion{2, 5}));  // memfit/runtime_versions.h's defaults
  EXPECT_EQ(current->transformers, (LibraryVersion{4, 50}));
  auto old = ToRuntimeVersions({.torch = "1.13", .transformers = "4.40.2"});
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_EQ(old->torch, (LibraryVersion{1, 13}));
  EXPECT_EQ(old->transformers, (LibraryVersion{4, 40}));
  auto bad = ToRuntimeVersions({.torch = "two"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "--torch-version two: expected a version major.minor such as 2.5");
  // The help says the defaults.
  CLI::App app;
  VersionArgs args;
  AddVersionOptions(app, args);
  EXPECT_NE(app.help().find("(default 2.5)"), std::string::npos) << app.help();
  EXPECT_NE(app.help().find("(default 4.50)"), std::string::npos) << app.help();
}

TEST(RequestFlagsTest, TrainFlagsBindToTheRequestsFields) {
  auto r = TrainRequestFromFlags({"org/model", "--seq", "512", "--micro-batch", "4", "--gpu",
                                  "h100", "--gpus", "8", "--strategy", "zero3", "--revision", "v1",
                                  "--offline", "--torch-version", "1.13", "--lora-targets",
                                  "q_proj,v_proj", "--no-foreach"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->model.spec, "org/model");
  EXPECT_EQ(r->model.revision, "v1");
  EXPECT_TRUE(r->model.offline);
  EXPECT_EQ(r->context, 512u);  // --seq is --context's old spelling
  EXPECT_EQ(r->batch, 4u);      // --micro-batch is --batch
  EXPECT_EQ(r->gpu, "h100");
  EXPECT_EQ(r->gpus, 8u);
  EXPECT_EQ(r->strategy, "zero3");
  EXPECT_EQ(r->torch_version, "1.13");
  EXPECT_EQ(r->transformers_version, "");
  EXPECT_EQ(r->lora_targets, "q_proj,v_proj");
  EXPECT_TRUE(r->no_foreach);
  // Unset flags keep the defaults memfit/requests.h states.
  auto d = TrainRequestFromFlags({"m"});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->context, 0u);
  EXPECT_EQ(d->batch, 1u);
  EXPECT_EQ(d->method, "full");
  EXPECT_EQ(d->optimizer, "adamw");
  EXPECT_EQ(d->precision, "bf16-mixed");
  EXPECT_EQ(d->qlora_quant, "nf4-dq");
  EXPECT_EQ(d->model.revision, "main");
  EXPECT_FALSE(d->model.offline);
}

TEST(RequestFlagsTest, InferenceFlagsBindToTheRequestsFields) {
  auto r = InferenceRequestFromFlags(
      {"org/model", "--ctx-size", "2048", "--batch", "8", "--engine", "sglang",
       "--mem-fraction-static", "0.8", "--gpu", "h200", "--dp", "2", "--enable-dp-attention",
       "--curve", "--curve-gpu", "24GiB", "--curve-gpu", "rtx4090", "--transformers-version",
       "4.40", "--gguf-file", "m.gguf"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->model.gguf_file, "m.gguf");
  EXPECT_EQ(r->context, 2048u);
  EXPECT_EQ(r->batch, 8u);
  EXPECT_EQ(r->engine, "sglang");
  EXPECT_EQ(r->gpu_memory_utilization, 0.8);  // --mem-fraction-static is SGLang's name for it
  EXPECT_EQ(r->gpu, "h200");
  EXPECT_EQ(r->dp, 2u);
  EXPECT_TRUE(r->dp_attention);
  EXPECT_TRUE(r->curve);
  EXPECT_EQ(r->curve_gpus, (std::vector<std::string>{"24GiB", "rtx4090"}));
  EXPECT_EQ(r->transformers_version, "4.40");
  auto d = InferenceRequestFromFlags({"m"});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->context, 0u);
  EXPECT_EQ(d->dtype, "bfloat16");
  EXPECT_EQ(d->quant, "stored");
  EXPECT_EQ(d->engine, "transformers");
  EXPECT_EQ(d->gpu_memory_utilization, -1);  // < 0: the engine's own default
  EXPECT_EQ(d->tp, 0u);
}

TEST(RequestFlagsTest, AFlagErrorNamesTheCommand) {
  auto unknown = TrainRequestFromFlags({"m", "--bogus", "1"});
  ASSERT_FALSE(unknown);
  EXPECT_TRUE(unknown.error().message.starts_with("train ")) << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("--bogus"), std::string::npos) << unknown.error().message;
  auto not_a_number = InferenceRequestFromFlags({"m", "--context", "lots"});
  ASSERT_FALSE(not_a_number);
  EXPECT_TRUE(not_a_number.error().message.starts_with("inference ")) << not_a_number.error().message;
  EXPECT_NE(not_a_number.error().message.find("lots"), std::string::npos);
  auto no_model = InferenceRequestFromFlags({});
  testing::ExpectErrorContains(no_model, "MODEL");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
