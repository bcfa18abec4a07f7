#pragma once
// The text of a ../shared/eval config.json for the benchmarks ("recent/<org__name>" or
// "models/<org__name>"): $MEMFIT_EVAL_DIR, else ../shared/eval beside the source tree or the
// working directory. nullopt when absent (the benchmark then reports a skip).

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace memfit::bench {

inline std::optional<std::string> EvalConfigText(const std::string& sub) {
  namespace fs = std::filesystem;
  const char* env = std::getenv("MEMFIT_EVAL_DIR");
  for (fs::path dir : {env ? fs::path(env) : fs::path(),
                       fs::path(__FILE__).parent_path() / "../../shared/eval",
                       fs::path("../shared/eval"), fs::path("../../shared/eval")}) {
    if (dir.empty()) continue;
    std::ifstream file(dir / sub / "config.json");
    if (!file) continue;
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }
  return std::nullopt;
}

}  // namespace memfit::bench
