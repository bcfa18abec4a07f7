#pragma once
// Shared test helpers: the shared eval folder (skipped when absent), fixture builders.

#include <optional>
#include <string>
#include <vector>

namespace memfit::testing {

// ../shared/eval relative to the source tree, or $MEMFIT_EVAL_DIR; nullopt when absent.
std::optional<std::string> EvalDir();
// Reads a whole file; empty optional when it cannot be read.
std::optional<std::string> ReadFile(const std::string& path);
// A fresh empty temporary directory, removed at process exit.
std::string TempDir();

// Builds a safetensors file: header JSON text and the data buffer size it declares.
struct FakeTensor {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
};
// A valid safetensors file (zeros for data) holding `tensors` in order; `metadata` optional.
std::string MakeSafetensors(const std::vector<FakeTensor>& tensors,
                            const std::vector<std::pair<std::string, std::string>>& metadata = {});
// A safetensors file from raw header JSON, padded to declare `data_bytes` of zeros.
std::string MakeSafetensorsRaw(const std::string& header_json, uint64_t data_bytes);

}  // namespace memfit::testing
