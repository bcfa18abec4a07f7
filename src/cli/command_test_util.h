#pragma once
// What the command tests beside src/cli/*_command.cc share: memfit run in-process (cli::Run)
// with a clean, offline Hub environment, and a tiny local model counted by hand.

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

// Runs `memfit ARGS`, which must exit 0 and print one JSON document whose "schema" is `schema`,
// into `j`; the failure names what went wrong, with stderr. `err`, when given, receives stderr.
inline ::testing::AssertionResult RunJson(const std::vector<std::string>& args,
                                          std::string_view schema, nlohmann::json& j,
                                          std::string* err = nullptr) {
  RunResult r = RunMemfit(args);
  if (r.code != 0) {
    return ::testing::AssertionFailure() << "exit " << r.code << ", stderr: " << r.err;
  }
  j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return ::testing::AssertionFailure() << "not JSON: " << r.out;
  if (err) *err = std::move(r.err);
  const nlohmann::json got = j.is_object() && j.contains("schema") ? j["schema"] : nullptr;
  if (got != std::string(schema)) {
    return ::testing::AssertionFailure() << "schema " << got.dump() << ", expected " << schema;
  }
  return ::testing::AssertionSuccess();
}

// The fixture of a test that runs commands in OfflineEnv's environment.
class OfflineCommandTest : public ::testing::Test {
 protected:
  // cli_test::RunJson into `j`, and stderr into `err`.
  ::testing::AssertionResult RunJson(const std::vector<std::string>& args,
                                     std::string_view schema) {
    return cli_test::RunJson(args, schema, j, &err);
  }

  OfflineEnv env_;
  nlohmann::json j;  // the document of the last RunJson
  std::string err;   // its stderr
};

// Commands on TinyModelDir(), the directory `dir`.
class TinyModelTest : public OfflineCommandTest {
 protected:
  const std::string dir = TinyModelDir();
};

// Commands on GPT-2 small from the catalog (openai-community/gpt2): 12 layers, 12 heads of 64
// (768 wide), 1,024 positions, 124,439,808 parameters (transformers' count, tied embedding once).
class Gpt2Test : public OfflineCommandTest {
 protected:
  // `memfit COMMAND openai-community/gpt2 --offline FLAGS...`'s arguments.
  static std::vector<std::string> Gpt2(const std::string& command,
                                       const std::vector<std::string>& flags) {
    std::vector<std::string> args = {command, "openai-community/gpt2", "--offline"};
    args.insert(args.end(), flags.begin(), flags.end());
    return args;
  }
};

// Whether `actual` holds every member `expected` names, at any depth, with the same value (arrays
// and values other than objects compare whole); the failure names each member that differs:
//   EXPECT_TRUE(JsonHas(j, {{"schema", "memfit.fit/1"}, {"settings", {{"batch", 2}}}}));
inline ::testing::AssertionResult JsonHas(const nlohmann::json& actual,
                                          const nlohmann::json& expected) {
  std::string diff;
  auto walk = [&diff](auto& self, const nlohmann::json& got, const nlohmann::json& want,
                      const std::string& path) -> void {
    if (want.is_object() && got.is_object()) {
      for (const auto& [key, value] : want.items()) {
        if (!got.contains(key)) {
          diff += "\n  " + path + "/" + key + ": missing, expected " + value.dump();
        } else {
          self(self, got[key], value, path + "/" + key);
        }
      }
    } else if (got != want) {
      diff += "\n  " + (path.empty() ? "/" : path) + ": " + got.dump() + ", expected " +
              want.dump();
    }
  };
  walk(walk, actual, expected, "");
  if (diff.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the JSON differs:" << diff;
}

}  // namespace memfit::cli_test
