// Issue 29, items 2, 3, 5 and 9 (CLI side), on catalog models offline: a first-line verdict in
// every command given hardware (and the same object in JSON), training advice that searches to a
// setup that fits, device maps only for placements that load, readable tables.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/command_test_util.h"
#include "cli/terminal.h"

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using cli_test::RunMemfit;

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

TEST(VerdictCommandTest, InferenceWithAGpuSaysFirstThatItDoesNotFitAndOnHowMany) {
  cli_test::OfflineEnv env;
  // Qwen3-30B-A3B at 32768 tokens: about 62 GiB on one 24 GiB RTX 4090.
  const std::vector<std::string> args = {"inference", "Qwen/Qwen3-30B-A3B", "--gpu", "rtx4090",
                                         "--context", "32768"};
  auto table = RunMemfit(args);
  ASSERT_EQ(table.code, 0) << table.err;
  const std::string first = FirstLine(table.out);
  EXPECT_TRUE(first.starts_with("does not fit on 1 x RTX 4090: needs ")) << first;
  EXPECT_NE(first.find("weights"), std::string::npos) << first;  // which part is too big
  auto with_json = args;
  with_json.insert(with_json.end(), {"--format", "json"});
  auto json = RunMemfit(with_json);
  ASSERT_EQ(json.code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  const auto& v = j["verdict"];
  EXPECT_EQ(v["verdict"], "does not fit");
  EXPECT_EQ(v["gpu"], "RTX 4090");
  EXPECT_EQ(v["need_bytes"], j["total_bytes"]);
  EXPECT_FALSE(v["reason"].get<std::string>().empty());
  EXPECT_EQ(v["line"], first);
  // The count it names is one that fits: the same request with that --tp.
  ASSERT_TRUE(v["gpus_needed"].is_number()) << v;
  const std::string tp = std::to_string(v["gpus_needed"].get<int>());
  EXPECT_EQ(v["gpus_needed_flags"], "--tp " + tp);
  auto wider = with_json;
  wider.insert(wider.end(), {"--tp", tp});
  auto spread = RunMemfit(wider);
  ASSERT_EQ(spread.code, 0) << spread.err;
  EXPECT_EQ(nlohmann::json::parse(spread.out)["verdict"]["verdict"], "fits");
  // Without a GPU there is no verdict.
  auto bare = RunMemfit({"inference", "Qwen/Qwen3-30B-A3B", "--format", "json"});
  ASSERT_EQ(bare.code, 0) << bare.err;
  EXPECT_TRUE(nlohmann::json::parse(bare.out)["verdict"].is_null());
}

TEST(VerdictCommandTest, TrainWithAGpuSaysItFirstAndSearchesForSettingsThatFit) {
  cli_test::OfflineEnv env;
  auto qlora = RunMemfit({"train", "meta-llama/Llama-3.1-8B", "--method", "qlora",
                          "--checkpointing", "full", "--gpu", "rtx4090"});
  ASSERT_EQ(qlora.code, 0) << qlora.err;
  EXPECT_TRUE(FirstLine(qlora.out).starts_with("fits on 1 x RTX 4090: needs ")) << qlora.out;
  EXPECT_EQ(qlora.out.find("note: on RTX 4090"), std::string::npos);  // not hidden in a note
  // Full fine-tuning does not fit; the fix it names is one that does.
  auto full = RunMemfit({"train", "meta-llama/Llama-3.1-8B", "--gpu", "rtx4090", "--format",
                         "json"});
  ASSERT_EQ(full.code, 0) << full.err;
  const auto v = nlohmann::json::parse(full.out)["verdict"];
  EXPECT_EQ(v["verdict"], "does not fit");
  const std::string fix = v["fix_flags"];
  ASSERT_FALSE(fix.empty()) << v;
  std::vector<std::string> args = {"train", "meta-llama/Llama-3.1-8B", "--gpu", "rtx4090",
                                   "--format", "json"};
  for (size_t at = 0; at < fix.size();) {
    size_t space = fix.find(' ', at);
    args.push_back(fix.substr(at, space - at));
    at = space == std::string::npos ? fix.size() : space + 1;
  }
  auto fixed = RunMemfit(args);
  ASSERT_EQ(fixed.code, 0) << fixed.err;
  const auto fv = nlohmann::json::parse(fixed.out)["verdict"];
  EXPECT_EQ(fv["verdict"], "fits") << fix;
  EXPECT_EQ(fv["need_bytes"], v["fix_bytes"]);
}

TEST(VerdictCommandTest, FitForTrainingSearchesUntilASetupFitsAndAddsUp) {
  cli_test::OfflineEnv env;
  auto r = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "rtx4090", "--task", "train",
                      "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "does not fit");
  // The total is its terms.
  const auto& t = j["total_terms"];
  EXPECT_EQ(t["weight_bytes"].get<uint64_t>() + t["state_bytes"].get<uint64_t>() +
                t["kv_cache_bytes"].get<uint64_t>() +
                t["per_gpu_bytes"].get<uint64_t>() * t["gpus_used"].get<uint64_t>(),
            j["total_bytes"].get<uint64_t>());
  bool fitting = false;
  for (const auto& a : j["advice"]) {
    const std::string action = a["action"];
    // Only changes that apply to training.
    EXPECT_EQ(action.find("GGUF"), std::string::npos) << action;
    EXPECT_EQ(action.find("context"), std::string::npos) << action;
    EXPECT_EQ(action.find("prune"), std::string::npos) << action;
    if (a["verdict"] == "fits") {
      fitting = true;
      EXPECT_TRUE(a["command"].get<std::string>().starts_with("memfit train meta-llama/Llama-3.1-8B"))
          << a;
    }
  }
  EXPECT_TRUE(fitting) << j["advice"];
  EXPECT_FALSE(j["verdict_detail"]["fix_flags"].get<std::string>().empty());
  // Llama-3.1-8B's largest block is far smaller than an RTX 4090: the reason is not the block.
  auto table = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "rtx4090", "--task", "train"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_TRUE(FirstLine(table.out).starts_with("does not fit on 1 x RTX 4090")) << table.out;
  EXPECT_EQ(table.out.find("a block is larger"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("largest block ("), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("apply the best that fits: memfit train"), std::string::npos);
  // --method: the training method fit plans; QLoRA with checkpointing's cost... QLoRA alone
  // already changes the plan's weights to NF4.
  auto qlora = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "rtx4090", "--task", "train",
                          "--method", "qlora", "--format", "json"});
  ASSERT_EQ(qlora.code, 0) << qlora.err;
  EXPECT_LT(nlohmann::json::parse(qlora.out)["weight_bytes"].get<uint64_t>(),
            j["weight_bytes"].get<uint64_t>() / 2);
  auto wrong = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "rtx4090", "--method", "qlora"});
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("--method"), std::string::npos) << wrong.err;
}

TEST(VerdictCommandTest, DeviceMapIsPrintedOnlyForAPlacementThatLoads) {
  cli_test::OfflineEnv env;
  // Qwen3-32B in bf16 (about 61 GiB) on one RTX 4090: no map, a non-zero exit and the reason.
  auto none = RunMemfit({"fit", "Qwen/Qwen3-32B", "--gpu", "rtx4090", "--device-map"});
  EXPECT_EQ(none.code, 1);
  EXPECT_EQ(none.out, "");
  EXPECT_TRUE(none.err.starts_with("memfit: error: fit --device-map: no map that loads: does not "
                                   "fit on 1 x RTX 4090")) << none.err;
  // With CPU RAM for the rest, the map names the CPU.
  auto offload = RunMemfit({"fit", "Qwen/Qwen3-32B", "--gpu", "rtx4090", "--ram", "128GiB",
                            "--device-map"});
  ASSERT_EQ(offload.code, 0) << offload.err;
  const auto map = nlohmann::json::parse(offload.out);
  bool cpu = false;
  for (const auto& [module, device] : map.items()) cpu = cpu || device == "cpu";
  EXPECT_TRUE(cpu) << offload.out;
}

TEST(VerdictCommandTest, AdviceOffersOnlyWhatHelpsAndTheSiblingThatFits) {
  cli_test::OfflineEnv env;
  auto r = RunMemfit({"fit", "Qwen/Qwen3-32B", "--gpu", "rtx4090", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> siblings;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& a : j["advice"]) {
    const std::string action = a["action"];
    EXPECT_GT(a["saved_bytes"].get<int64_t>() + (action.starts_with("offload") ? 1 : 0), 0) << action;
    EXPECT_EQ(action.find("CSR"), std::string::npos) << action;
    if (action.starts_with("use the smaller sibling")) siblings.push_back(action);
  }
  // Qwen3-14B (about 28 GiB in bf16) does not fit a 24 GiB GPU; Qwen3-8B does.
  EXPECT_EQ(siblings, std::vector<std::string>{"use the smaller sibling Qwen/Qwen3-8B"});
}

TEST(VerdictCommandTest, GpuMemoryIsLabelledInBinaryUnits) {
  cli_test::OfflineEnv env;
  auto r = RunMemfit({"gpus", "--vendor", "nvidia", "--wide"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find(" GB "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(" GB\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("80.00 GiB"), std::string::npos) << r.out;  // H100: 80 x 2^30 bytes
}

TEST(VerdictCommandTest, TablesFitTheTerminalUnlessWide) {
  cli_test::OfflineEnv env;
  testing::ScopedEnv columns;
  columns.Set("COLUMNS", "80");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"gpus"},
        std::vector<std::string>{"fit", "Qwen/Qwen3-32B", "--gpu", "rtx4090"}}) {
    auto r = RunMemfit(args);
    ASSERT_EQ(r.code, 0) << r.err;
    size_t widest = 0;
    bool in_table = false;
    for (size_t at = 0; at < r.out.size();) {
      size_t end = r.out.find('\n', at);
      const std::string line = r.out.substr(at, end - at);
      at = end + 1;
      // Table lines: between a rule and the next blank line (the lines above and below are text).
      if (line.starts_with("──")) in_table = true;
      else if (line.empty() || line.starts_with("(") || line.starts_with("apply ")) in_table = false;
      size_t width = 0;
      for (unsigned char c : line) width += (c & 0xC0) != 0x80;
      if (in_table) widest = std::max(widest, width);
    }
    EXPECT_LE(widest, 80u) << args[0] << "\n" << r.out;
    auto wide = args;
    wide.push_back("--wide");
    auto all = RunMemfit(wide);
    ASSERT_EQ(all.code, 0) << all.err;
    EXPECT_GT(all.out.size(), r.out.size()) << args[0];
  }
}

TEST(VerdictCommandTest, LayoutComesFromColumnsThenTheTerminalThenDefaults) {
  EXPECT_EQ(LayoutFor(false, nullptr, 0).width, 100u);
  EXPECT_EQ(LayoutFor(false, nullptr, 132).width, 132u);
  EXPECT_EQ(LayoutFor(false, "90", 132).width, 90u);
  EXPECT_EQ(LayoutFor(false, "wide", 0).width, 100u);  // not a number: ignored
  EXPECT_EQ(LayoutFor(false, "10", 0).width, 40u);     // too narrow to fit anything
  EXPECT_TRUE(LayoutFor(true, nullptr, 0).wide);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
