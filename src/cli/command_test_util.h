#pragma once
// What the command tests beside src/cli/*_command.cc share: memfit run in-process (cli::Run)
// with a clean, offline Hub environment, and a tiny local model counted by hand.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_run.h"       // tests/: RunMemfit
#include "hub_fixtures.h"  // tests/: ScopedEnv
#include "test_support.h"  // tests/: TempDir, MakeSafetensors

namespace memfit::cli_test {

using testing::RunMemfit;
using testing::RunResult;

// Fresh, empty HF and memfit caches and HF_HUB_OFFLINE=1 for the test's lifetime: only the
// catalog and the files a test writes are found; the Hub is never asked.
class OfflineEnv {
 public:
  OfflineEnv() {
    hf_ = testing::TempDir();
    memfit_ = testing::TempDir();
    env_.Set("HF_HUB_CACHE", hf_.c_str());
    env_.Set("HF_HOME", memfit_.c_str());
    env_.Set("MEMFIT_CACHE", memfit_.c_str());
    env_.Set("HF_HUB_OFFLINE", "1");
    env_.Set("HF_ENDPOINT", "http://127.0.0.1:9");
    env_.Set("HF_TOKEN", nullptr);
  }
  const std::string& hf_cache() const { return hf_; }

 private:
  std::string hf_, memfit_;
  testing::ScopedEnv env_;
};

// A directory holding one model.safetensors (no config.json):
//   model.embed_tokens.weight  F32  [8, 4]  32 elements  128 B
//   model.layers.0.mlp.w       BF16 [4, 4]  16 elements   32 B
//   model.layers.1.mlp.w       BF16 [4, 4]  16 elements   32 B
// 64 parameters, 192 B stored.
inline std::string TinyModelDir() {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "tiny";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "model.safetensors", std::ios::binary)
      << testing::MakeSafetensors({{"model.embed_tokens.weight", "F32", {8, 4}},
                                   {"model.layers.0.mlp.w", "BF16", {4, 4}},
                                   {"model.layers.1.mlp.w", "BF16", {4, 4}}});
  return dir.string();
}

}  // namespace memfit::cli_test
