// The application shell (cli/app.cc): exit codes 0 / 1 / 2, one-line errors on stderr, help and
// version on stdout.

#include <gtest/gtest.h>

#include "cli/command_test_util.h"

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using cli_test::RunMemfit;

TEST(AppTest, VersionAndHelpGoToStdoutWithCodeZero) {
  auto version = RunMemfit({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out, "memfit 0.1.0\n");
  auto help = RunMemfit({"--help"});
  EXPECT_EQ(help.code, 0);
  for (const char* command : {"estimate-memory", "inspect", "models", "serve", "fit", "gpus",
                              "inference", "train", "validate", "gguf"}) {
    EXPECT_NE(help.out.find(command), std::string::npos) << command;
  }
  // A command's help lists its options.
  auto inspect = RunMemfit({"inspect", "--help"});
  EXPECT_EQ(inspect.code, 0);
  EXPECT_NE(inspect.out.find("--depth"), std::string::npos) << inspect.out;
}

TEST(AppTest, UsageErrorsExitTwoWithAHint) {
  auto none = RunMemfit({});
  EXPECT_EQ(none.code, 2);
  EXPECT_TRUE(none.err.starts_with("memfit: usage error: ")) << none.err;
  EXPECT_TRUE(none.err.ends_with("\nrun `memfit --help` for the commands and their options\n"))
      << none.err;
  // No command at all: the commands and an example, not CLI11's "A subcommand is required".
  EXPECT_TRUE(none.err.starts_with("memfit: usage error: name a command (estimate-memory, "))
      << none.err;
  EXPECT_NE(none.err.find("e.g. `memfit inference meta-llama/Llama-3.1-8B --gpu rtx4090`"),
            std::string::npos)
      << none.err;
  // An unknown command is a usage error that names the word and the commands.
  auto unknown = RunMemfit({"frobnicate"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(unknown.err.starts_with(
      "memfit: usage error: unknown command \"frobnicate\" (commands: estimate-memory, inspect, "))
      << unknown.err;
  EXPECT_NE(unknown.err.find(", gguf)\n"), std::string::npos) << unknown.err;
  EXPECT_EQ(unknown.out, "");
  // A misspelt command gets the closest; a model id typed first gets the command to put before it.
  auto typo = RunMemfit({"inferense", "qwen3-8b"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_TRUE(typo.err.starts_with(
      "memfit: usage error: unknown command \"inferense\"; did you mean inference? (commands: "))
      << typo.err;
  auto model_first = RunMemfit({"Qwen/Qwen3-8B", "--gpu", "rtx4090"});
  EXPECT_EQ(model_first.code, 2);
  EXPECT_TRUE(model_first.err.starts_with(
      "memfit: usage error: unknown command \"Qwen/Qwen3-8B\"; name a command before the model, "
      "e.g. `memfit inference Qwen/Qwen3-8B` (commands: "))
      << model_first.err;
}

TEST(AppTest, AFailedCommandExitsOneWithOneLineAndItsKind) {
  cli_test::OfflineEnv env;
  std::ostringstream out, err;
  ErrorKind kind = ErrorKind::kBadInput;
  // --vendor outside its words: the request's own message, kBadInput.
  EXPECT_EQ(cli::Run({"gpus", "--vendor", "acme"}, out, err, kind), 1);
  EXPECT_EQ(err.str(), "memfit: error: --vendor acme: expected nvidia, amd, apple or intel\n");
  EXPECT_EQ(kind, ErrorKind::kBadInput);
  EXPECT_EQ(out.str(), "");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
