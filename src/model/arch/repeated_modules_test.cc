// The compact form of a layer's experts (RepeatedModules, BuildOptions::compact_repeats): when the
// quantization provably treats every expert alike (IndexBlind, by hand), and, for every catalog
// model and every config of ../shared/eval, that the compact model written out is the expanded
// model tensor for tensor and gives the same totals, blocks and load table.

#include "model/arch/repeated_modules.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "memfit/catalog.h"
#include "memfit/estimate_load.h"
#include "memfit/load_summary.h"
#include "model/arch/arch_test_util.h"
#include "model/arch/omni_test_configs.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

Quantization Skipping(std::vector<std::string> skip, QuantMethod method = QuantMethod::kFp8Block) {
  Quantization q;
  q.method = method;
  q.skip = std::move(skip);
  q.skip_index = std::make_shared<const SkipIndex>(IndexSkips(q.skip));
  return q;
}

const std::string kPath = "model.layers.3.mlp.experts";

TEST(IndexBlindTest, NoQuantizationOrDigitFreePatternsCannotSeeTheIndex) {
  EXPECT_TRUE(IndexBlind(Quantization{}, kPath));
  EXPECT_TRUE(IndexBlind(Skipping({}), kPath));
  EXPECT_TRUE(IndexBlind(Skipping({"lm_head", "*.self_attn.*", "*.mlp.gate"}), kPath));
  // Digits that stand before another module than the experts' index (Qwen3.5 NVFP4's lists).
  EXPECT_TRUE(IndexBlind(
      Skipping({"model.layers.0.mlp.shared_expert*", "model.layers.3.linear_attn"}), kPath));
}

TEST(IndexBlindTest, DigitsWhereTheIndexStandsCanSeeIt) {
  EXPECT_FALSE(IndexBlind(Skipping({"model.layers.3.mlp.experts.1"}), kPath));
  EXPECT_FALSE(IndexBlind(Skipping({"*.experts.17.*"}), kPath));
  EXPECT_FALSE(IndexBlind(Skipping({"s.1"}), kPath));  // a substring ending "...experts."
  EXPECT_FALSE(IndexBlind(Skipping({"12*"}), kPath));  // digits at a piece's start
}

TEST(IndexBlindTest, RegexesAndPerModuleMethodsBelowThePathAreNotAnalysed) {
  // "re:" patterns that are not plain globs stay regexes: any of them keeps every copy.
  EXPECT_FALSE(IndexBlind(Skipping({"re:.*experts\\.[0-9]{2}\\..*"}), kPath));
  Quantization mixed;
  mixed.method = QuantMethod::kMixed;
  mixed.per_module = {{"model.layers.3.mlp.experts.5.gate_proj", QuantMethod::kNvfp4}};
  EXPECT_FALSE(IndexBlind(mixed, kPath));
  mixed.per_module = {{"model.layers.3.mlp.experts", QuantMethod::kNvfp4}};  // the module itself
  EXPECT_TRUE(IndexBlind(mixed, kPath));
}

// A skip list that names one expert keeps every expert written out, and that expert unquantized.
TEST(RepeatedModulesTest, AnExpertNamedBySkipIsBuiltAsItIs) {
  const std::string config =
      R"({"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"],
    "hidden_size": 64, "intermediate_size": 128, "moe_intermediate_size": 32,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
    "num_experts": 8, "num_experts_per_tok": 2, "vocab_size": 100, "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "fp8", "weight_block_size": [16, 16],
      "modules_to_not_convert": ["model.layers.1.mlp.experts.5.up_proj"]}})";
  auto compact = arch_test::Build(config, {.compact_repeats = true});
  auto expanded = arch_test::Build(config);
  ASSERT_TRUE(compact) << compact.error().message;
  ASSERT_TRUE(expanded) << expanded.error().message;
  EXPECT_EQ(ComputeTotals(*compact).stored_bytes, ComputeTotals(*expanded).stored_bytes);
  const Tensor* skipped =
      arch_test::FindTensor(*compact, "model.layers.1.mlp.experts.5.up_proj.weight");
  ASSERT_NE(skipped, nullptr);  // layer 1 is written out
  EXPECT_EQ(skipped->dtype, Dtype::kBF16);
  // Layer 0 stays compact: 8 experts x 3 projections x (weight + scale) as one run of 6.
  const Tensor* first =
      arch_test::FindTensor(*compact, "model.layers.0.mlp.experts.0.gate_proj.weight");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->copies, 8u);
  EXPECT_EQ(first->repeat_span, 6u);
  EXPECT_EQ(arch_test::FindTensor(*compact, "model.layers.0.mlp.experts.1.gate_proj.weight"),
            nullptr);
}

// The tensor cap counts every copy: a compact build fails where the expanded one does.
TEST(RepeatedModulesTest, TheTensorCapCountsEveryCopy) {
  const std::string config =
      R"({"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"],
    "hidden_size": 64, "intermediate_size": 128, "moe_intermediate_size": 32,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
    "num_experts": 100, "num_experts_per_tok": 2, "vocab_size": 100, "torch_dtype": "bfloat16"})";
  auto expanded = arch_test::Build(config, {.max_tensors = 500});
  auto compact = arch_test::Build(config, {.compact_repeats = true, .max_tensors = 500});
  ASSERT_FALSE(expanded);
  ASSERT_FALSE(compact);
  EXPECT_EQ(compact.error().message, expanded.error().message);
}

// Everything a compact model answers equals the expanded model's, and the compact model written
// out is the expanded one.
void ExpectSameAsExpanded(const HfConfig& config, const std::string& what, size_t& compacted) {
  auto compact = BuildFromConfig(config, {.compact_repeats = true});
  auto expanded = BuildFromConfig(config);
  ASSERT_EQ(bool(compact), bool(expanded)) << what;
  if (!expanded) {
    EXPECT_EQ(compact.error().message, expanded.error().message) << what;
    return;
  }
  compacted += expanded->tensors.size() - compact->tensors.size();
  EXPECT_EQ(compact->assumptions, expanded->assumptions) << what;
  EXPECT_EQ(compact->notes, expanded->notes) << what;  // stored-only MTP bytes among them
  EXPECT_EQ(compact->no_split_patterns, expanded->no_split_patterns) << what;
  EXPECT_EQ(compact->hp.layers.size(), expanded->hp.layers.size()) << what;
  EXPECT_EQ(ExpandedTensorCount(*compact), expanded->tensors.size()) << what;
  const ModelTotals ct = ComputeTotals(*compact), et = ComputeTotals(*expanded);
  EXPECT_EQ(ct.stored_bytes, et.stored_bytes) << what;
  EXPECT_EQ(ct.resident_bytes, et.resident_bytes) << what;
  EXPECT_EQ(ct.parameters, et.parameters) << what;
  EXPECT_EQ(ct.buffer_bytes, et.buffer_bytes) << what;
  EXPECT_EQ(ct.head_parameters, et.head_parameters) << what;
  const auto cc = ComponentTotals(*compact), ec = ComponentTotals(*expanded);
  ASSERT_EQ(cc.size(), ec.size()) << what;
  for (size_t i = 0; i < cc.size(); ++i) {
    EXPECT_EQ(cc[i].first, ec[i].first) << what;
    EXPECT_EQ(cc[i].second.parameters, ec[i].second.parameters) << what;
    EXPECT_EQ(cc[i].second.resident_bytes, ec[i].second.resident_bytes) << what;
  }
  const BlockAssignment cb = AssignBlocks(*compact, {}), eb = AssignBlocks(*expanded, {});
  EXPECT_EQ(cb.names, eb.names) << what;
  const LoadOptions all{.dtypes = {LoadDtype::kAsStored, LoadDtype::kFloat32, LoadDtype::kFloat16,
                                   LoadDtype::kInt8, LoadDtype::kInt4}};
  const LoadSummary cs = SummarizeLoad(*compact, cb);
  const LoadEstimate cl = EstimateLoad(cs, all), el = EstimateLoad(*expanded, all, eb);
  EXPECT_EQ(cs.tensors, expanded->tensors.size()) << what;
  EXPECT_EQ(cl.dtype_bytes, el.dtype_bytes) << what;
  ASSERT_EQ(cl.largest_block.has_value(), el.largest_block.has_value()) << what;
  if (el.largest_block) {
    EXPECT_EQ(cl.largest_block->name, el.largest_block->name) << what;
    EXPECT_EQ(cl.largest_block->bytes, el.largest_block->bytes) << what;
    EXPECT_EQ(cl.largest_block->parameters, el.largest_block->parameters) << what;
  }
  for (size_t r = 0; r < all.dtypes.size(); ++r) {
    EXPECT_EQ(cl.rows[r].total_bytes, el.rows[r].total_bytes) << what << " row " << r;
    EXPECT_EQ(cl.rows[r].largest_block_bytes, el.rows[r].largest_block_bytes) << what << " " << r;
    EXPECT_EQ(cl.rows[r].training_adam_bytes, el.rows[r].training_adam_bytes) << what << " " << r;
  }
  Model written = std::move(*compact);
  ExpandRepeats(written);
  ASSERT_EQ(written.tensors.size(), expanded->tensors.size()) << what;
  for (size_t i = 0; i < written.tensors.size(); ++i) {
    const Tensor &a = written.tensors[i], &b = expanded->tensors[i];
    ASSERT_EQ(a.name, b.name) << what << " tensor " << i;
    EXPECT_EQ(a.shape, b.shape) << a.name;
    EXPECT_EQ(a.dtype, b.dtype) << a.name;
    EXPECT_EQ(a.dtype_label, b.dtype_label) << a.name;
    EXPECT_EQ(a.bytes, b.bytes) << a.name;
    EXPECT_EQ(a.logical_params, b.logical_params) << a.name;
    EXPECT_EQ(a.kind, b.kind) << a.name;
    EXPECT_EQ(a.in_head, b.in_head) << a.name;
    EXPECT_EQ(a.tied_to, b.tied_to) << a.name;
    EXPECT_EQ(a.stored, b.stored) << a.name;
    EXPECT_EQ(a.loaded, b.loaded) << a.name;
    EXPECT_EQ(a.component, b.component) << a.name;
    EXPECT_EQ(a.base_only, b.base_only) << a.name;
  }
}

TEST(CompactRepeatsTest, EveryCatalogModelAnswersAsExpanded) {
  size_t compacted = 0;
  for (const CatalogEntry& entry : Catalog()) {
    auto config = HfConfig::Parse(entry.config_json, std::string(entry.id));
    ASSERT_TRUE(config) << entry.id;
    ExpectSameAsExpanded(*config, std::string(entry.id), compacted);
  }
  // The per-expert checkpoints of the catalog (Kimi-K2.5 alone: 208,552 tensors) collapse.
  EXPECT_GT(compacted, 500'000u);
}

// Families whose real configs live in their tests rather than in the catalog or ../shared/eval.
TEST(CompactRepeatsTest, ConfigsOfTheBuildersTestsAnswerAsExpanded) {
  size_t compacted = 0;
  for (const char* json : {testing::kQwen25Omni7BConfig, testing::kQwen3Omni30BConfig}) {
    auto config = HfConfig::Parse(json, "config.json");
    ASSERT_TRUE(config) << config.error().message;
    ExpectSameAsExpanded(*config, config->model_type(), compacted);
  }
  EXPECT_GT(compacted, 10'000u);  // Qwen3-Omni's thinker and talker experts
}

TEST(CompactRepeatsTest, EveryEvalConfigAnswersAsExpanded) {
  auto dir = memfit::testing::EvalDir();
  if (!dir) GTEST_SKIP() << "../shared/eval is absent (set MEMFIT_EVAL_DIR)";
  size_t compacted = 0, configs = 0;
  for (const char* set : {"recent", "models"}) {
    for (const auto& entry : std::filesystem::directory_iterator(*dir + "/" + set)) {
      auto text = memfit::testing::ReadFile(entry.path().string() + "/config.json");
      if (!text) continue;
      auto config = HfConfig::Parse(*text, entry.path().filename().string());
      if (!config) continue;  // the ground-truth tests report configs that do not parse
      ++configs;
      ExpectSameAsExpanded(*config, entry.path().filename().string(), compacted);
    }
  }
  EXPECT_GT(configs, 100u);
  EXPECT_GT(compacted, 1'000'000u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
