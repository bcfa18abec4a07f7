#pragma once
// Running the CLI against the fake Hub the way a user's shell would: Hub settings from the
// environment (HF_ENDPOINT, fresh HF and memfit caches), output captured.

#include <sstream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "hub_fixtures.h"

namespace memfit::testing {

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

inline CliRun RunCli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = cli::Run(args, out, err);
  return {code, out.str(), err.str()};
}

// A clean Hub environment pointing at `endpoint`, with fresh caches.
inline void PointAt(ScopedEnv& env, const std::string& endpoint) {
  static std::vector<std::string> keep;  // setenv copies, but keep the strings simple
  keep.push_back(TempDir());
  keep.push_back(TempDir());
  env.Set("HF_ENDPOINT", endpoint.c_str());
  env.Set("HF_HUB_CACHE", keep[keep.size() - 2].c_str());
  env.Set("MEMFIT_CACHE", keep.back().c_str());
  env.Set("HF_HOME", keep.back().c_str());
  env.Set("HF_TOKEN", nullptr);
  env.Set("HF_HUB_OFFLINE", nullptr);
  env.Set("TRANSFORMERS_OFFLINE", nullptr);
  env.Set("HF_HUB_DISABLE_IMPLICIT_TOKEN", nullptr);
}

}  // namespace memfit::testing
