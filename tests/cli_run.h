#pragma once
// Runs the memfit CLI in-process and captures its exit code, stdout and stderr (CLI-level tests).

#include <sstream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace memfit::testing {

struct RunResult {
  int code;
  std::string out, err;
};

inline RunResult RunMemfit(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = cli::Run(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace memfit::testing
