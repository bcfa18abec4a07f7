// `memfit estimate-memory DIR --library_name transformers --accelerate` on an IDEFICS config
// written here (the tiny config of src/model/arch/idefics_test.cc), through memfit::cli::Run.

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "test_support.h"  // tests/

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

namespace fs = std::filesystem;

// Decoder vocab 10 (+2), hidden 8, 2 heads, intermediate 12, 2 layers, one gated cross-attention
// layer; vision embed_dim 6 (1 layer, image 4, patch 2); perceiver depth 1, 2 heads of 3.
const char* kTinyIdefics = R"({"model_type": "idefics",
  "architectures": ["IdeficsForVisionText2Text"], "torch_dtype": "bfloat16",
  "vocab_size": 10, "additional_vocab_size": 2, "hidden_size": 8, "intermediate_size": 12,
  "num_hidden_layers": 2, "num_attention_heads": 2, "cross_layer_interval": 2,
  "qk_layer_norms": true, "use_resampler": true,
  "vision_config": {"embed_dim": 6, "intermediate_size": 8, "num_hidden_layers": 1,
    "num_attention_heads": 2, "image_size": 4, "patch_size": 2},
  "perceiver_config": {"resampler_depth": 1, "resampler_n_heads": 2, "resampler_head_dim": 3,
    "resampler_n_latents": 4, "qk_layer_norms_perceiver": true}})";

struct Ran {
  int code;
  std::string out, err;
};

Ran RunCli(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = cli::Run(args, out, err);
  return {code, out.str(), err.str()};
}

fs::path WriteConfig() {
  // This process's own temporary folder (test_support.h): gtest's TempDir() is /tmp itself, which
  // the other test of this file, run by ctest -j2 in another process, writes at the same time.
  fs::path dir = fs::path(memfit::testing::TempDir()) / "idefics_cli";
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << kTinyIdefics;
  return dir;
}

TEST(IdeficsCli, AccelerateEstimateOfAConfigDirectory) {
  const fs::path dir = WriteConfig();
  auto r = RunCli({"estimate-memory", dir.string(), "--library_name", "transformers",
                   "--accelerate", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // No auto_map: accelerate builds AutoModel, i.e. IdeficsModel without lm_head.
  EXPECT_EQ(j["constructor_class"], "IdeficsModel");
  // IdeficsModel: 2808 - 96 (lm_head) = 2712 parameters at float32, plus the buffers: vision
  // position_ids 5 x int64 = 40 bytes and three rotary modules of 8 + 2 x 32768 bytes.
  const double total = 2712.0 * 4 + 40 + 3 * (8 + 2 * 32768);
  // Largest block: a decoder layer, 560 parameters + its rotary buffers (the cross-attention
  // layer has 538); accelerate names it without the "model." prefix.
  const double largest = 560.0 * 4 + 8 + 2 * 32768;
  ASSERT_FALSE(j["rows"].empty());
  EXPECT_EQ(j["rows"][0]["dtype"], "float32");
  EXPECT_DOUBLE_EQ(j["rows"][0]["total_size_bytes"].get<double>(), total);
  EXPECT_DOUBLE_EQ(j["rows"][0]["largest_layer_bytes"].get<double>(), largest);
  EXPECT_EQ(j["largest_layer_names"], nlohmann::json({"layers.0", "layers.1"}));

  // The table form (accelerate's own layout) works too.
  auto table = RunCli({"estimate-memory", dir.string(), "--library_name", "transformers",
                    "--accelerate"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("Memory Usage for loading"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("float32"), std::string::npos) << table.out;
}

TEST(IdeficsCli, PlainEstimateReportsTheComponents) {
  const fs::path dir = WriteConfig();
  auto r = RunCli({"estimate-memory", dir.string(), "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["parameters"], 2808);
  EXPECT_EQ(j["stored_bytes"], 2808 * 2);
  EXPECT_NE(r.out.find("component vision_model: 434 parameters"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("component perceiver_resampler: 516 parameters"), std::string::npos)
      << r.out;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
