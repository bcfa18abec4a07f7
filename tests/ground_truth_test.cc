// Ground truth over ../shared/eval (see its README): for every real model whose family has a
// builder, the config-only estimate must equal the checkpoint index's total_size exactly, the
// parameter count must equal transformers' own meta-device count (params.tsv), and --accelerate
// must reproduce accelerate's figures (accelerate_reference.jsonl). Models that cannot be exact are
// listed below with the reason. Skips when the eval folder is absent (a user's fresh clone).

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "memfit/architecture.h"
#include "memfit/describe.h"
#include "memfit/estimate_load.h"
#include "memfit/safetensors.h"
#include "memfit/units.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

namespace fs = std::filesystem;

// Models whose stored bytes from config cannot equal the index's total_size, and why.
const std::map<std::string, std::string>& StoredExceptions() {
  static const std::map<std::string, std::string> kExceptions = {
      {"OpenAssistant__oasst-sft-4-pythia-12b-epoch-3.5",
       "saved by transformers 4.28: the index also counts per-layer causal masks (bool, at 1/8 "
       "byte), masked_bias and rotary inv_freq, which current transformers does not load "
       "(difference checked to the byte in gpt_families_ground_truth_test.cc)"},
      {"MiniMaxAI__MiniMax-M1",
       "config.json names no torch_dtype: float32 is assumed, the checkpoint is bfloat16 with "
       "float32 routers (exact with the dtype given, checked in minimax_test.cc)"},
      {"bigscience__bloom",
       "config.json names no torch_dtype: float32 is assumed, the checkpoint is bfloat16 (exact "
       "with the dtype given, checked in gpt_families_ground_truth_test.cc)"},
      {"liuhaotian__llava-v1.5-7b",
       "saved by transformers < 4.31: the index also stores 32 float32 rotary_emb.inv_freq buffers "
       "(8,192 bytes) that current transformers keeps non-persistent"},
  };
  return kExceptions;
}

// Models whose accelerate figures memfit reproduces only approximately (within 0.5%), and why.
const std::map<std::string, std::string>& AccelerateApproximate() {
  static const std::map<std::string, std::string> kApprox = {};
  return kApprox;
}

struct EvalModel {
  std::string name;
  fs::path dir;
};

std::vector<EvalModel> EvalModels(const std::string& eval) {
  std::vector<EvalModel> out;
  for (const auto& entry : fs::directory_iterator(fs::path(eval) / "models")) {
    if (entry.is_directory() && fs::exists(entry.path() / "config.json")) {
      out.push_back({entry.path().filename().string(), entry.path()});
    }
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return out;
}

std::map<std::string, std::map<std::string, std::string>> ParamsTsv(const std::string& eval) {
  std::map<std::string, std::map<std::string, std::string>> rows;
  std::ifstream in(fs::path(eval) / "params.tsv");
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, '\t')) cells.push_back(cell);
    if (header.empty()) {
      header = cells;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size(); ++i) row[header[i]] = i < cells.size() ? cells[i] : "";
    rows[row["model"]] = row;
  }
  return rows;
}

std::optional<HfConfig> LoadConfig(const EvalModel& m) {
  auto text = testing::ReadFile((m.dir / "config.json").string());
  if (!text) return std::nullopt;
  auto config = HfConfig::Parse(*text, (m.dir / "config.json").string());
  if (!config) return std::nullopt;
  return *config;
}

bool HasBuilder(const HfConfig& config) {
  auto archs = config.architectures();
  return FindArchitectureBuilder(config.model_type(), archs.empty() ? "" : archs.front()) != nullptr;
}

TEST(GroundTruth, StoredBytesEqualIndexTotalSize) {
  auto eval = testing::EvalDir();
  if (!eval) GTEST_SKIP() << "../shared/eval is absent: ground-truth checks skipped";
  int checked = 0;
  for (const auto& m : EvalModels(*eval)) {
    auto config = LoadConfig(m);
    ASSERT_TRUE(config) << m.name;
    if (!HasBuilder(*config)) continue;
    std::optional<WeightIndex> index;
    for (const char* name : {"model.safetensors.index.json", "pytorch_model.bin.index.json"}) {
      if (auto text = testing::ReadFile((m.dir / name).string())) {
        auto parsed = ParseWeightIndex(*text, name);
        ASSERT_TRUE(parsed) << m.name << ": " << parsed.error().message;
        index = *parsed;
        break;
      }
    }
    // No total_size, or 0 (nvidia/Cosmos-Reason2-8B's upload: checked per shard instead in
    // qwen_ground_truth_test.cc).
    if (!index || !index->total_size || *index->total_size == 0) continue;
    auto model = BuildFromConfig(*config);
    ASSERT_TRUE(model) << m.name << ": " << model.error().message;
    uint64_t stored = ComputeTotals(*model).stored_bytes;
    if (StoredExceptions().count(m.name)) {
      EXPECT_NE(stored, *index->total_size) << m.name << " is listed as an exception but matches";
      continue;
    }
    EXPECT_EQ(stored, *index->total_size)
        << m.name << ": config-only stored bytes differ by "
        << static_cast<int64_t>(stored) - static_cast<int64_t>(*index->total_size);
    ++checked;
  }
  std::cout << "[ground truth] " << checked << " models matched their index total_size exactly\n";
}

TEST(GroundTruth, ParameterCountsEqualTransformers) {
  auto eval = testing::EvalDir();
  if (!eval) GTEST_SKIP() << "../shared/eval is absent: ground-truth checks skipped";
  auto params = ParamsTsv(*eval);
  int checked = 0;
  for (const auto& m : EvalModels(*eval)) {
    auto config = LoadConfig(m);
    ASSERT_TRUE(config) << m.name;
    if (!HasBuilder(*config)) continue;
    auto row = params.find(m.name);
    if (row == params.end() || row->second["params_architecture_class"].empty()) continue;
    auto model = BuildFromConfig(*config);
    ASSERT_TRUE(model) << m.name << ": " << model.error().message;
    auto totals = ComputeTotals(*model);
    EXPECT_EQ(totals.parameters, std::stoull(row->second["params_architecture_class"])) << m.name;
    EXPECT_EQ(totals.parameters - totals.head_parameters + totals.base_only_parameters,
              std::stoull(row->second["params_automodel"]))
        << m.name << " (base AutoModel)";
    ++checked;
  }
  std::cout << "[ground truth] " << checked << " parameter counts checked\n";
}

TEST(GroundTruth, AccelerateReference) {
  auto eval = testing::EvalDir();
  if (!eval) GTEST_SKIP() << "../shared/eval is absent: ground-truth checks skipped";
  std::ifstream in(fs::path(*eval) / "accelerate_reference.jsonl");
  std::string line;
  int exact = 0, approx = 0;
  while (std::getline(in, line)) {
    auto ref = nlohmann::json::parse(line);
    std::string name = ref["model"];
    auto text = testing::ReadFile((fs::path(*eval) / "models" / name / "config.json").string());
    ASSERT_TRUE(text) << name;
    auto config = HfConfig::Parse(*text, name);
    ASSERT_TRUE(config) << name;
    if (!HasBuilder(*config)) continue;
    BuildOptions options{.buffers = BufferConvention::kTransformers442};
    options.ignore_quantization = true;  // create_empty_model builds the unquantized model
    for (const auto& key : config->auto_map_keys()) {
      if (key.starts_with("AutoModelFor")) {
        options.head_class = key;
        break;
      }
    }
    auto model = BuildFromConfig(*config, options);
    ASSERT_TRUE(model) << name << ": " << model.error().message;
    auto estimate = EstimateAccelerate(*model);
    ASSERT_TRUE(estimate) << name;
    const auto& f32 = estimate->rows[0];
    double want_total = ref["accelerate_per_dtype"]["float32"]["total_size_bytes"].get<double>();
    double want_largest = ref["accelerate_per_dtype"]["float32"]["largest_layer_bytes"].get<double>();
    if (AccelerateApproximate().count(name)) {
      EXPECT_NEAR(f32.total_bytes / want_total, 1.0, 0.005) << name;
      ++approx;
      continue;
    }
    EXPECT_EQ(f32.total_bytes, want_total) << name << " total differs by " << f32.total_bytes - want_total;
    EXPECT_EQ(f32.largest_layer_bytes, want_largest) << name;
    for (size_t i = 0; i < estimate->rows.size(); ++i) {
      const auto& row = estimate->rows[i];
      const auto& strings = ref["accelerate_per_dtype"][row.dtype]["strings"];
      EXPECT_EQ(FormatBytesAccelerate(row.total_bytes), strings["total_size"].get<std::string>()) << name << " " << row.dtype;
      EXPECT_EQ(FormatBytesAccelerate(row.largest_layer_bytes), strings["largest_layer"].get<std::string>()) << name << " " << row.dtype;
    }
    EXPECT_EQ(estimate->constructor_class, ref["accelerate_constructor_class"].get<std::string>()) << name;
    ++exact;
  }
  std::cout << "[ground truth] accelerate: " << exact << " exact, " << approx << " within 0.5%\n";
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
