// What `memfit inference` and `memfit train` (cli/inference_command.cc, cli/train_command.cc)
// share, on GPT-2 small from the catalog (1,024 positions).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/command_test_util.h"

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using RequestCommandsTest = cli_test::Gpt2Test;

// No --context: the model's own, capped at the command's default.
TEST_F(RequestCommandsTest, NoContextMeansTheModelsOwnCapped) {
  struct Case {
    const char* command;
    const char* schema;
    const char* settings_field;
  };
  for (const Case& c : {Case{"inference", "memfit.inference/1", "context"},  // min(1,024, 8,192)
                        Case{"train", "memfit.train/1", "seq"}}) {          // min(1,024, 2,048)
    SCOPED_TRACE(c.command);
    ASSERT_TRUE(RunJson(Gpt2(c.command, {"--format", "json"}), c.schema));
    EXPECT_EQ(j["settings"][c.settings_field], 1024);
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
