#include "test_support.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "memfit/dtype.h"

namespace memfit::testing {
namespace fs = std::filesystem;

namespace {
// Before any test runs: the Hub endpoint is a closed loopback port (tests that need a Hub start
// the fake one and set HF_ENDPOINT themselves), and the HF and memfit caches live in a fresh
// temporary directory, never in the user's home.
struct TestEnvironment {
  TestEnvironment() {
    fs::path home = fs::temp_directory_path() / ("memfit_test_home_" + std::to_string(::getpid()));
    fs::create_directories(home);
    ::setenv("HF_ENDPOINT", "http://127.0.0.1:9", 1);
    ::setenv("HF_HOME", (home / "hf").c_str(), 1);
    ::setenv("MEMFIT_CACHE", (home / "memfit").c_str(), 1);
    ::unsetenv("HF_HUB_CACHE");
    ::unsetenv("HF_TOKEN");
  }
};
const TestEnvironment kTestEnvironment;
}  // namespace

std::optional<std::string> EvalDir() {
  if (const char* v = std::getenv("MEMFIT_EVAL_DIR"); v && *v && fs::is_directory(v)) return v;
  fs::path dir = fs::path(MEMFIT_SOURCE_DIR) / ".." / "shared" / "eval";
  if (fs::is_directory(dir)) return fs::canonical(dir).string();
  return std::nullopt;
}

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

std::vector<fs::path>& TempDirs() {
  static auto* dirs = new std::vector<fs::path>();
  return *dirs;
}

// At exit, in the process that made them (not in a forked child that exits).
void RemoveTempDirs() {
  static const pid_t owner = ::getpid();
  if (::getpid() != owner) return;
  std::error_code ec;
  for (const auto& dir : TempDirs()) fs::remove_all(dir, ec);
}

}  // namespace

std::string TempDir() {
  static int counter = 0;
  fs::path dir = fs::temp_directory_path() /
                 ("memfit_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  static const bool registered = [] {
    RemoveTempDirs();  // records the owner pid (nothing to remove yet)
    return std::atexit(RemoveTempDirs) == 0;
  }();
  (void)registered;
  TempDirs().push_back(dir);
  return dir.string();
}

std::string MakeSafetensorsRaw(const std::string& header_json, uint64_t data_bytes) {
  std::string header = header_json;
  while ((8 + header.size()) % 8 != 0) header += ' ';
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += header;
  out.append(data_bytes, '\0');
  return out;
}

std::string MakeSafetensors(const std::vector<FakeTensor>& tensors,
                            const std::vector<std::pair<std::string, std::string>>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    uint64_t numel = 1;
    for (auto d : t.shape) numel *= d;
    auto dtype = ParseSafetensorsDtype(t.dtype);
    uint64_t bytes = dtype ? numel * DtypeBits(*dtype) / 8 : numel;
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  return MakeSafetensorsRaw(header.dump(), offset);
}

}  // namespace memfit::testing
