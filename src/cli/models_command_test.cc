// `memfit models` (cli/models_command.cc): the catalog by family, and --export-configs.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "cli/command_test_util.h"
#include "memfit/catalog.h"

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using cli_test::RunMemfit;

TEST(ModelsCommandTest, FamilyFilter) {
  auto r = RunMemfit({"models", "--family", "gpt2", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j.empty());
  bool gpt2 = false;
  for (const auto& e : j) {
    EXPECT_EQ(e["family"], "gpt2") << e.dump();
    if (e["id"] == "openai-community/gpt2") {
      gpt2 = true;
      // GPT-2 small: 124,439,808 parameters (transformers' count; catalog_test.cc checks the
      // entry's build against it).
      EXPECT_EQ(e["parameters"], 124439808);
    }
  }
  EXPECT_TRUE(gpt2) << r.out;
  auto none = RunMemfit({"models", "--family", "no-such-family", "--format", "json"});
  EXPECT_EQ(none.code, 0);
  EXPECT_EQ(none.out, "[]\n");
}

TEST(ModelsCommandTest, ExportConfigsWritesOneFolderPerEntry) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / "configs";
  auto r = RunMemfit({"models", "--export-configs", dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + std::to_string(Catalog().size()) + " configs under " + dir.string() + "\n");
  const auto config = testing::ReadFile((dir / "openai-community__gpt2" / "config.json").string());
  ASSERT_TRUE(config);
  EXPECT_EQ(nlohmann::json::parse(*config)["model_type"], "gpt2");
  size_t folders = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++folders;
  EXPECT_EQ(folders, Catalog().size());
  // A file where the directory should be: one error line naming it.
  const fs::path file = fs::path(testing::TempDir()) / "a-file";
  std::ofstream(file) << "x";
  auto bad = RunMemfit({"models", "--export-configs", file.string()});
  EXPECT_EQ(bad.code, 1);
  EXPECT_TRUE(bad.err.starts_with("memfit: error: " + file.string() + ": cannot create directory: "))
      << bad.err;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
