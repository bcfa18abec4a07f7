// Hostile input across modules: sizes near 2^63 and products that overflow, counts that would
// allocate without bound, names and strings that would make work quadratic, bytes that are not
// UTF-8. Each case is a regression test for a bug found while fuzzing or auditing (docs/security.md);
// its input is built here in code.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "memfit/architecture.h"
#include "memfit/describe.h"
#include "memfit/estimate_load.h"
#include "memfit/hf_config.h"
#include "formats/json.h"
#include "memfit/local_source.h"
#include "memfit/render.h"
#include "memfit/render_fit.h"
#include "memfit/safetensors.h"
#include "gguf_writer.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

HfConfig Config(const std::string& json) {
  auto config = HfConfig::Parse(json, "config.json");
  EXPECT_TRUE(config) << config.error().message;
  return std::move(*config);
}

// A llama config: small defaults, with `fields` (JSON members) replacing or adding keys.
std::string Llama(const std::string& fields) {
  auto config = nlohmann::json::parse(R"({"model_type": "llama", "vocab_size": 32,
      "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 2,
      "num_attention_heads": 2})");
  const auto overrides = nlohmann::json::parse("{" + fields + "}");
  for (const auto& [key, value] : overrides.items()) config[key] = value;
  return config.dump();
}

Result<Model> Describe(const std::string& config_json, BuildOptions build = {}) {
  ModelInputs inputs;
  inputs.name = "m";
  inputs.config = Config(config_json);
  return DescribeModel(inputs, DescribeOptions{.build = build});
}

void ExpectErrorContaining(const Result<Model>& model, const std::string& fragment) {
  ASSERT_FALSE(model) << "expected an error containing: " << fragment;
  EXPECT_NE(model.error().message.find(fragment), std::string::npos) << model.error().message;
  EXPECT_EQ(model.error().message.find('\n'), std::string::npos);
}

TEST(HostileInput, ConfigProductThatOverflows64Bits) {
  // vocab_size x hidden_size = 2^40 x 2^40 = 2^80 elements: the embedding's size overflows.
  ExpectErrorContaining(Describe(Llama(R"("vocab_size": 1099511627776, "hidden_size": 1099511627776,
                                          "num_attention_heads": 1)")),
                        "overflows 64 bits");
}

TEST(HostileInput, ConfigHeadsTimesHeadDimOverflowIsAnError) {
  // num_attention_heads x head_dim = 2^40 x 2^40 wrapped to 0 before the fix, giving q_proj a
  // [0, hidden] shape and a silently wrong size.
  ExpectErrorContaining(Describe(Llama(R"("hidden_size": 1099511627776,
                                          "num_attention_heads": 1099511627776,
                                          "head_dim": 1099511627776, "num_hidden_layers": 1)")),
                        "num_attention_heads x head_dim = 1099511627776 x 1099511627776 overflows");
}

TEST(HostileInput, ModelsBeyond2To56ElementsAreRejectedNotWrapped) {
  // vocab 2^40 x hidden 2^18 = 2^58 elements per embedding (2^59 bytes in bf16): each tensor's
  // bytes fit in 64 bits, but 18 B/param for AdamW (2^58 x 2 x 18) wrapped in EstimateLoad before
  // the model bounds existed.
  ExpectErrorContaining(Describe(Llama(R"("vocab_size": 1099511627776, "hidden_size": 262144,
                                          "num_attention_heads": 1, "torch_dtype": "bfloat16")")),
                        "more than 2^56 elements");
  // Just under the bound every figure is exact: 2^27 x 2^27 = 2^54 elements per embedding, two
  // embeddings plus 2 layers.
  auto model = Describe(Llama(R"("vocab_size": 134217728, "hidden_size": 134217728,
                                 "intermediate_size": 1, "num_hidden_layers": 0,
                                 "num_attention_heads": 1, "torch_dtype": "bfloat16")"));
  ASSERT_TRUE(model) << model.error().message;
  auto load = EstimateLoad(*model);
  // embed_tokens and lm_head: 2 x 2^54; model.norm: 2^27.
  EXPECT_EQ(load.totals.parameters, (uint64_t{1} << 55) + 134217728u);
  ASSERT_TRUE(load.rows[0].training_adam_bytes);
  // float32 row: 16 B/param plus the rotary buffer (head_dim 2^27 / 2 floats = 2^28 bytes).
  EXPECT_EQ(*load.rows[0].training_adam_bytes,
            ((uint64_t{1} << 55) + 134217728u) * 16 + (uint64_t{1} << 28));
}

TEST(HostileInput, HugeLayerAndExpertCountsStopAtTheTensorCap) {
  // 2^40 layers: before the cap the builder looped 2^40 times (hours, then out of memory).
  ExpectErrorContaining(Describe(Llama(R"("num_hidden_layers": 1099511627776)")),
                        "more than 1048576 tensors");
  // 2^40 experts in one layer: the expert loop did not stop when the builder failed (it went on
  // formatting 2^40 names). A small cap keeps the test fast.
  ExpectErrorContaining(
      Describe(R"({"model_type": "mixtral", "vocab_size": 8, "hidden_size": 8,
                   "num_hidden_layers": 1, "num_attention_heads": 1,
                   "num_local_experts": 1099511627776, "num_experts_per_tok": 1})",
               BuildOptions{.max_tensors = 1000}),
      "more than 1000 tensors");
  // The cap is BuildOptions::max_tensors: 2 layers of llama are 1 + 2 x 9 + 2 = 21 tensors plus a
  // rotary buffer, so 22 pass and 21 do not.
  EXPECT_TRUE(Describe(Llama(R"("num_key_value_heads": 2)"), BuildOptions{.max_tensors = 22}));
  ExpectErrorContaining(Describe(Llama(R"("num_key_value_heads": 2)"), BuildOptions{.max_tensors = 21}),
                        "more than 21 tensors");
}

TEST(HostileInput, IndexTotalSizeNear2To64DoesNotOverflowTheNote) {
  // stored - total_size was computed in int64_t: with total_size = 2^64 - 1 and a small model
  // that is signed overflow (UBSan: "signed integer overflow").
  ModelInputs inputs;
  inputs.name = "m";
  inputs.config = Config(Llama(R"("num_hidden_layers": 0, "tie_word_embeddings": true)"));
  auto index = ParseWeightIndex(
      R"({"metadata": {"total_size": 18446744073709551615}, "weight_map": {}})", "index.json");
  ASSERT_TRUE(index) << index.error().message;
  inputs.index = *index;
  inputs.index_name = "model.safetensors.index.json";
  auto model = DescribeModel(inputs);
  ASSERT_TRUE(model) << model.error().message;
  // Stored: embed_tokens 32 x 8 float32 = 1024 bytes + model.norm 8 x 4 = 32 bytes = 1056 bytes.
  std::string notes;
  for (const auto& note : model->notes) notes += note + "\n";
  EXPECT_NE(notes.find("memfit counts 1056 bytes of stored tensors (-18446744073709550559 bytes)"),
            std::string::npos)
      << notes;
}

TEST(HostileInput, ConfigValueAbove2To63IsTooLargeNotNegative) {
  auto config = Config(Llama(R"("num_key_value_heads": 18446744073709551615)"));
  auto value = config.Uint("num_key_value_heads");
  ASSERT_FALSE(value);
  EXPECT_NE(value.error().message.find("absurdly large"), std::string::npos)
      << value.error().message;
}

TEST(HostileInput, SafetensorsDimensionsNear2To63) {
  // [2^60] of U8 is 2^63 bits: a valid header (its sizes fit), but a model that large is rejected
  // by DescribeModel rather than overflowing the estimators.
  auto header = ParseSafetensorsHeaderJson(
      R"({"t": {"dtype": "U8", "shape": [1152921504606846976], "data_offsets": [0, 1152921504606846976]}})",
      std::nullopt);
  ASSERT_TRUE(header) << header.error().message;
  ModelInputs inputs;
  inputs.name = "m";
  inputs.location = "m";
  inputs.safetensors.emplace_back("model.safetensors", *header);
  ExpectErrorContaining(DescribeModel(inputs), "more than 2^56 elements");
  // [2^62, 4] of F32 is 2^66 bytes: the reader's checked product catches it.
  auto overflow = ParseSafetensorsHeaderJson(
      R"({"t": {"dtype": "F32", "shape": [4611686018427387904, 4], "data_offsets": [0, 0]}})",
      std::nullopt);
  ASSERT_FALSE(overflow);
  EXPECT_NE(overflow.error().message.find("overflows 64 bits"), std::string::npos);
}

TEST(HostileInput, DeepTensorNamesAreCutAt64Segments) {
  // A 200-segment name made IndivisibleBlocks copy every prefix (quadratic in the name). Paths
  // are now views and stop at 64 segments: the module holding the tensor is its first 63.
  std::string name = "s0";
  for (int i = 1; i < 200; ++i) name += ".s" + std::to_string(i);
  Model model;
  model.tensors.push_back(Tensor{.name = name, .shape = {2}, .numel = 2, .bytes = 8});
  auto blocks = IndivisibleBlocks(model, TensorFilter{});
  ASSERT_EQ(blocks.size(), 1u);
  std::string expected = "s0";
  for (int i = 1; i < 63; ++i) expected += ".s" + std::to_string(i);
  EXPECT_EQ(blocks[0].name, expected);
  EXPECT_EQ(blocks[0].bytes, 8u);
}

TEST(HostileInput, GuessedLayerPatternsAreCapped) {
  // 100 distinct "x<i>.layers.N" containers: every module was matched against every pattern
  // (quadratic). At most 64 are kept, with a note.
  std::vector<testing::FakeTensor> tensors;
  for (int i = 0; i < 100; ++i) tensors.push_back({"x" + std::to_string(i) + ".layers.0.w", "F32", {1}});
  MemoryByteSource source(testing::MakeSafetensors(tensors), "m.safetensors");
  auto header = ReadSafetensorsHeader(source);
  ASSERT_TRUE(header) << header.error().message;
  ModelInputs inputs;
  inputs.name = "m";
  inputs.safetensors.emplace_back("m.safetensors", *header);
  auto model = DescribeModel(inputs);
  ASSERT_TRUE(model) << model.error().message;
  EXPECT_EQ(model->no_split_patterns.size(), 64u);
  std::string notes;
  for (const auto& note : model->notes) notes += note + "\n";
  EXPECT_NE(notes.find("100 kinds of numbered layer"), std::string::npos) << notes;
}

TEST(HostileInput, LongCellsDoNotWidenEveryRow) {
  // One 10,000-character module name padded all 1,000 rows to 10,000 columns (10 MB of spaces).
  std::vector<std::vector<std::string>> rows(1000, {"a", "1"});
  rows[0][0] = std::string(10000, 'n');
  std::string table = RenderPlainTable({"module", "tensors"}, rows);
  // Each short row is now at most 160 + 2 + 1 + 1 characters.
  EXPECT_LT(table.size(), 10000u + 1000u * 200u);
  EXPECT_NE(table.find(std::string(10000, 'n')), std::string::npos);  // nothing is cut
}

TEST(HostileInput, InvalidUtf8NamesRenderAsJson) {
  // nlohmann's dump() throws on invalid UTF-8: a model directory named with byte 0xFF crashed
  // `--format json` (uncaught exception). Bytes that are not UTF-8 now print as U+FFFD.
  auto model = Describe(Llama(""));
  ASSERT_TRUE(model) << model.error().message;
  model->name = "bad\xff\xfe";
  std::string json = RenderLoadEstimate(*model, EstimateLoad(*model), OutputFormat::kJson);
  EXPECT_NE(json.find("bad\xEF\xBF\xBD"), std::string::npos);
  auto accelerate = EstimateAccelerate(*model);
  ASSERT_TRUE(accelerate);
  EXPECT_NE(RenderAccelerate(model->name, *accelerate, OutputFormat::kJson).find("bad"),
            std::string::npos);
  EXPECT_NE(RenderInspect(*model, OutputFormat::kJson, 2).find("bad"), std::string::npos);
}

TEST(HostileInput, InvalidUtf8TensorNamesRenderInTheFitReport) {
  // The fit report's table printed the device map with nlohmann's dump(), which throws on a
  // module name that is not UTF-8. safetensors names are UTF-8 (simdjson checks), but GGUF
  // tensor names are any bytes, and a Hub GGUF repository (`memfit fit org/name-GGUF`) goes
  // through the accelerate planner: the report crashed. Found auditing the renderers for dump()
  // while writing fuzz/gguf_fuzz.cc.
  testing::GgufWriter w;
  w.Str("general.architecture", "llama").U32("llama.block_count", 1).U32("llama.embedding_length", 16)
      .U32("llama.attention.head_count", 1).Tensor("token_embd.weight", {16, 8}, 0)
      .Tensor("blk.0.attn_q.weight", {16, 16}, 0).Tensor("out\xff.weight", {16, 64}, 0);
  MemoryByteSource source(w.Build(), "m.gguf");
  auto file = ReadGgufHeader(source);
  ASSERT_TRUE(file) << file.error().message;
  ModelInputs inputs;
  inputs.name = "m";
  inputs.gguf = {GgufShard{"m.gguf", std::move(*file)}};
  auto model = DescribeModel(inputs);
  ASSERT_TRUE(model) << model.error().message;
  // A GPU too small for "out\xff": the device map names it (on the CPU).
  FitRequest request;
  ASSERT_TRUE(ParseDeviceArg("5KiB", request.gpus));
  request.ram_bytes = uint64_t{1} << 30;
  auto plan = PlanFit(*model, request);
  ASSERT_TRUE(plan) << plan.error().message;
  const RuntimeModel runtime;
  const FitReportInput in{.model = &*model, .request = &request, .runtime = &runtime, .plan = &*plan};
  for (auto format : {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kMarkdown, OutputFormat::kCsv}) {
    EXPECT_NO_THROW((void)RenderFitPlan(in, format));
  }
  EXPECT_TRUE(nlohmann::json::accept(RenderFitPlan(in, OutputFormat::kJson)));
  EXPECT_NE(RenderFitPlan(in, OutputFormat::kTable).find("\"out\xef\xbf\xbd\":\"cpu\""), std::string::npos)
      << RenderFitPlan(in, OutputFormat::kTable);
}

TEST(HostileInput, RevisionsDoNotLeaveTheHfCache) {
  // The HF cache lookup joined --revision into refs/<revision> and the file's content into
  // snapshots/<content>, unchecked: the CLI falls back to it when the Hub client fails (which it
  // does for a revision with ".."), and the server passes a request's "revision" on. A revision
  // "../../../pointer" whose file held "../../../secret" served the directory secret/ as the
  // model. Found auditing what server_request_fuzz's "no local path" invariant could not see.
  namespace fs = std::filesystem;
  const fs::path root = testing::TempDir();
  const fs::path repo = root / "hub" / "models--org--name";
  const std::string sha(40, 'a');
  fs::create_directories(repo / "refs");
  fs::create_directories(repo / "snapshots" / sha);
  fs::create_directories(root / "secret");
  std::ofstream(repo / "refs" / "main") << sha;
  std::ofstream(repo / "snapshots" / sha / "config.json") << Llama("");
  std::ofstream(root / "secret" / "config.json") << Llama(R"("hidden_size": 1234, "num_attention_heads": 2)");
  std::ofstream(root / "pointer") << "../../../secret";
  const LocalResolveOptions base{.hf_hub_cache = (root / "hub").string(), .use_catalog = false};
  auto ok = ResolveLocalModel("org/name", base);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->kind, InputKind::kHfCache);
  for (const std::string revision : {"../../../pointer", "/etc/hostname", "../refs/main", "main/../../x"}) {
    LocalResolveOptions options = base;
    options.revision = revision;
    auto r = ResolveLocalModel("org/name", options);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->kind, InputKind::kNotFound) << revision;
  }
  // A refs file that does not hold a commit sha names no snapshot either.
  std::ofstream(repo / "refs" / "bad") << "../../../secret";
  LocalResolveOptions bad = base;
  bad.revision = "bad";
  auto r = ResolveLocalModel("org/name", bad);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->kind, InputKind::kNotFound);
}

TEST(HostileInput, NamesWithNewlinesKeepErrorsOnOneLine) {
  // JSON escapes decode to control characters: a tensor named "a\nb" made a two-line error.
  auto index = ParseWeightIndex(R"({"weight_map": {"a\nb": 3}})", "index.json");
  ASSERT_FALSE(index);
  EXPECT_EQ(index.error().message.find('\n'), std::string::npos) << index.error().message;
  EXPECT_NE(index.error().message.find(R"(weight_map["a\nb"])"), std::string::npos)
      << index.error().message;
  auto header = ParseSafetensorsHeaderJson(
      R"({"x\u0001y": {"dtype": "F32\r", "shape": [1], "data_offsets": [0, 4]}})", std::nullopt);
  ASSERT_FALSE(header);
  EXPECT_EQ(header.error().message,
            R"(safetensors: tensor "x\x01y": unknown dtype "F32\r")");
}

TEST(HostileInput, ArchitectureNamesWithNewlinesKeepErrorsOnOneLine) {
  // Found by config_fuzz: the encoder builders' "unknown head" error was formatted without
  // MakeError, so an architecture name holding "\n" made a two-line error.
  auto model = Describe(R"({"model_type": "t5", "architectures": ["T5Odd\nHead"]})");
  ExpectErrorContaining(model, R"(architecture "T5Odd\nHead" is not built)");
}

TEST(HostileInput, JsonNestingAndSizeLimits) {
  std::string deep = std::string(65, '[') + std::string(65, ']');
  auto nested = ParseJson(deep, "x.json");
  ASSERT_FALSE(nested);
  EXPECT_NE(nested.error().message.find("nested deeper than 64 levels"), std::string::npos);
  EXPECT_TRUE(ParseJson(std::string(64, '[') + std::string(64, ']'), "x.json"));
  // Brackets inside strings do not count.
  EXPECT_TRUE(ParseJson("[\"" + std::string(1000, '[') + "\"]", "x.json"));
  // config.json is capped at 16 MB: a 17 MB string is rejected before parsing.
  auto big = HfConfig::Parse("{\"a\": \"" + std::string(17'000'000, 'x') + "\"}");
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("exceeds the limit of 16000000 bytes"), std::string::npos);
  // A safetensors header holds 3 levels (root, tensor, shape): anything nested deeper is an error.
  auto header = ParseSafetensorsHeaderJson(R"({"a": {"dtype": {"x": [[[[1]]]]}}})", std::nullopt);
  ASSERT_FALSE(header);
  EXPECT_NE(header.error().message.find("tensor \"a\""), std::string::npos)
      << header.error().message;
  auto shape = ParseSafetensorsHeaderJson(
      R"({"a": {"dtype": "F32", "shape": [[2]], "data_offsets": [0, 8]}})", std::nullopt);
  ASSERT_FALSE(shape);
  EXPECT_NE(shape.error().message.find("unexpected array"), std::string::npos)
      << shape.error().message;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
