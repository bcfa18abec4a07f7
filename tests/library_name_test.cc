// `estimate-memory --accelerate --library_name`: timm configs build with --library_name timm as
// they do without it, accelerate's header line names the library, and a library that does not
// match the config is a one-line error.

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cli_run.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

namespace fs = std::filesystem;

using testing::RunMemfit;

std::string WriteConfig(const std::string& name, const std::string& json) {
  fs::path dir = fs::path(testing::TempDir()) / name;
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << json;
  return dir.string();
}

TEST(LibraryName, TimmConfigBuildsWithLibraryNameTimm) {
  const std::string dir =
      WriteConfig("resnet50.a1_in1k", R"({"architecture": "resnet50.a1_in1k", "num_classes": 1000})");
  auto plain = RunMemfit({"estimate-memory", dir, "--accelerate"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  auto timm = RunMemfit({"estimate-memory", dir, "--library_name", "timm", "--accelerate"});
  ASSERT_EQ(timm.code, 0) << timm.err;
  EXPECT_NE(timm.out.find("from `timm`..."), std::string::npos) << timm.out;
  EXPECT_NE(plain.out.find("from `timm`..."), std::string::npos) << plain.out;
  // The same table either way (accelerate's 97.7 MB total for resnet50.a1_in1k).
  EXPECT_EQ(plain.out, timm.out);
  EXPECT_NE(timm.out.find("97.7 MB"), std::string::npos) << timm.out;
}

TEST(LibraryName, MismatchedLibraryIsAOneLineError) {
  const std::string dir =
      WriteConfig("resnet-timm", R"({"architecture": "resnet50.a1_in1k", "num_classes": 1000})");
  auto r = RunMemfit({"estimate-memory", dir, "--library_name", "transformers", "--accelerate"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("timm config"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST(LibraryName, TransformersHeaderByDefault) {
  const std::string dir = WriteConfig(
      "tiny-llama", R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"],
      "torch_dtype": "float16", "vocab_size": 32, "hidden_size": 8, "intermediate_size": 16,
      "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1})");
  auto r = RunMemfit({"estimate-memory", dir, "--library_name", "transformers", "--accelerate"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("from `transformers`..."), std::string::npos) << r.out;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
