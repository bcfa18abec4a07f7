// HubSettings from the environment, as huggingface_hub/constants.py reads it.

#include <cstdlib>
#include <filesystem>
#include <string>

#include "memfit/byte_source.h"
#include "memfit/hub.h"
#include "hub/net/hub_api.h"
#include "hub/net/hub_guard.h"
#include "memfit/local_source.h"

namespace memfit {
namespace fs = std::filesystem;
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// Seconds as a float ("10", "2.5") -> milliseconds; `fallback` when absent or malformed.
uint32_t EnvSecondsAsMs(const char* name, uint32_t fallback) {
  std::string v = Env(name);
  if (v.empty()) return fallback;
  char* end = nullptr;
  double seconds = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(seconds > 0) || seconds > 86400) return fallback;
  return static_cast<uint32_t>(seconds * 1000.0);
}

std::string HfHome() {
  if (std::string v = Env("HF_HOME"); !v.empty()) return v;
  if (std::string v = Env("XDG_CACHE_HOME"); !v.empty()) return (fs::path(v) / "huggingface").string();
  std::string home = Env("HOME");
  return (fs::path(home.empty() ? "/" : home) / ".cache" / "huggingface").string();
}

// The token file, trimmed like huggingface_hub's get_token (strip whitespace and newlines).
std::string ReadTokenFile(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return "";
  auto source = OpenFileByteSource(path);
  auto size = source->Size();
  if (!size || *size > 4096) return "";
  auto text = source->Read(0, static_cast<size_t>(*size));
  if (!text) return "";
  std::string t = *text;
  auto first = t.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  auto last = t.find_last_not_of(" \t\r\n");
  return t.substr(first, last - first + 1);
}

}  // namespace

bool EnvIsTrue(const char* name) {
  std::string s = Env(name);
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s == "1" || s == "ON" || s == "YES" || s == "TRUE";
}

HubSettings HubSettingsFromEnvironment(std::string explicit_token, bool offline_flag) {
  HubSettings s;
  if (std::string v = Env("HF_ENDPOINT"); !v.empty()) {
    while (!v.empty() && v.back() == '/') v.pop_back();
    s.endpoint = v;
  }
  // get_token_to_send: an explicit token always; the implicit ones (HF_TOKEN, then the token
  // file) unless HF_HUB_DISABLE_IMPLICIT_TOKEN.
  if (!explicit_token.empty()) {
    s.token = std::move(explicit_token);
  } else if (!EnvIsTrue("HF_HUB_DISABLE_IMPLICIT_TOKEN")) {
    std::string env_token = Env("HF_TOKEN");
    if (env_token.empty()) env_token = Env("HUGGING_FACE_HUB_TOKEN");  // legacy name
    auto first = env_token.find_first_not_of(" \t\r\n");
    if (first != std::string::npos) {
      s.token = env_token.substr(first, env_token.find_last_not_of(" \t\r\n") - first + 1);
    } else {
      std::string path = Env("HF_TOKEN_PATH");
      if (path.empty()) path = (fs::path(HfHome()) / "token").string();
      s.token = ReadTokenFile(path);
    }
  }
  s.hub_cache = DefaultHfHubCache();
  if (std::string v = Env("MEMFIT_CACHE"); !v.empty()) {
    s.memfit_cache = v;
  } else if (std::string x = Env("XDG_CACHE_HOME"); !x.empty()) {
    s.memfit_cache = (fs::path(x) / "memfit").string();
  } else {
    std::string home = Env("HOME");
    s.memfit_cache = (fs::path(home.empty() ? "/" : home) / ".cache" / "memfit").string();
  }
  s.offline = offline_flag || EnvIsTrue("HF_HUB_OFFLINE") || EnvIsTrue("TRANSFORMERS_OFFLINE");
  s.metadata_timeout_ms = EnvSecondsAsMs("HF_HUB_ETAG_TIMEOUT", s.metadata_timeout_ms);
  s.download_timeout_ms = EnvSecondsAsMs("HF_HUB_DOWNLOAD_TIMEOUT", s.download_timeout_ms);
  s.deadline_ms = EnvSecondsAsMs("MEMFIT_HUB_DEADLINE", s.deadline_ms);
  // MEMFIT_HUB_CONCURRENCY: parallel header reads (1..256); the wasm engine, which has no
  // threads, sets 1.
  if (std::string v = Env("MEMFIT_HUB_CONCURRENCY"); !v.empty()) {
    if (auto n = hubnet::ParseDecimalU64(v); n && *n >= 1 && *n <= 256) {
      s.max_concurrency = static_cast<uint32_t>(*n);
    }
  }
  s.guard = &DefaultHubGuard();
  s.ca_bundle = Env("REQUESTS_CA_BUNDLE");
  if (s.ca_bundle.empty()) s.ca_bundle = Env("CURL_CA_BUNDLE");
  return s;
}

}  // namespace memfit
