// Parsing the Hub's API answers (see hub_api.h).

#include "hub/net/hub_api.h"

#include "formats/json.h"

namespace memfit::hubnet {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// Whether a link's parameters (`; rel="next"; type=...`) hold rel with the token "next" (rel may
// list several space-separated relation types).
bool RelIsNext(std::string_view params) {
  while (!params.empty()) {
    size_t semi = params.find(';');
    std::string_view param = Trim(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    size_t eq = param.find('=');
    if (eq == std::string_view::npos || !EqualsIgnoreCase(Trim(param.substr(0, eq)), "rel"))
      continue;
    std::string_view value = Trim(param.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    while (!value.empty()) {
      size_t space = value.find(' ');
      if (EqualsIgnoreCase(value.substr(0, space), "next")) return true;
      value = space == std::string_view::npos ? std::string_view() : value.substr(space + 1);
    }
  }
  return false;
}

}  // namespace

bool IsObjectId(std::string_view s) {
  return (s.size() == 40 || s.size() == 64) &&
         s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

Result<std::string> ParseModelInfoSha(std::string_view body, std::string_view url) {
  MEMFIT_ASSIGN_OR_RETURN(auto json, ParseJson(body, url, JsonLimits{.max_bytes = kMaxApiBytes}));
  if (!json.is_object() || !json.contains("sha") || !json["sha"].is_string()) {
    return MakeError("{}: the model info has no commit \"sha\"", url);
  }
  std::string sha = json["sha"].get<std::string>();
  if (sha.size() != 40 || !IsObjectId(sha)) {
    return MakeError("{}: the model info's \"sha\" is not a commit id", url);
  }
  return sha;
}

Result<std::vector<RepoFile>> ParseTreePage(std::string_view body, std::string_view url) {
  MEMFIT_ASSIGN_OR_RETURN(auto json, ParseJson(body, url, JsonLimits{.max_bytes = kMaxApiBytes}));
  if (!json.is_array()) return MakeError("{}: expected a JSON array of files", url);
  std::vector<RepoFile> files;
  for (const auto& e : json) {
    if (!e.is_object() || !e.contains("type") || !e["type"].is_string()) {
      return MakeError("{}: tree entry without a \"type\"", url);
    }
    if (e["type"] != "file") continue;
    if (!e.contains("path") || !e["path"].is_string() || !e.contains("size") ||
        !e["size"].is_number_unsigned() || !e.contains("oid") || !e["oid"].is_string()) {
      return MakeError("{}: tree entry needs path, size and oid", url);
    }
    RepoFile f{e["path"].get<std::string>(), e["size"].get<uint64_t>(), e["oid"].get<std::string>(),
               false};
    if (!IsSafeRepoPath(f.path)) return MakeError("{}: unsafe path \"{}\"", url, f.path);
    if (e.contains("lfs") && e["lfs"].is_object()) {
      const auto& lfs = e["lfs"];
      if (lfs.contains("oid") && lfs["oid"].is_string()) f.etag = lfs["oid"].get<std::string>();
      if (lfs.contains("size") && lfs["size"].is_number_unsigned()) {
        f.size = lfs["size"].get<uint64_t>();
      }
      f.lfs = true;
    }
    files.push_back(std::move(f));
  }
  return files;
}

std::string NextPageLink(std::string_view link) {
  // link-value = "<" URI-Reference ">" *( ";" link-param ), separated by commas; a comma may
  // occur inside <...>, so the URI is taken first and the parameters run to the next "<".
  size_t pos = 0;
  while (true) {
    size_t lt = link.find('<', pos);
    if (lt == std::string_view::npos) return "";
    size_t gt = link.find('>', lt + 1);
    if (gt == std::string_view::npos) return "";
    std::string_view target = link.substr(lt + 1, gt - lt - 1);
    size_t next_lt = link.find('<', gt + 1);
    std::string_view params = link.substr(
        gt + 1, next_lt == std::string_view::npos ? std::string_view::npos : next_lt - gt - 1);
    if (size_t comma = params.rfind(','); comma != std::string_view::npos) {
      params = params.substr(0, comma);
    }
    if (RelIsNext(params)) return std::string(target);
    if (next_lt == std::string_view::npos) return "";
    pos = next_lt;
  }
}

std::optional<ContentRange> ParseContentRange(std::string_view value) {
  value = Trim(value);
  if (value.size() < 6 || !EqualsIgnoreCase(value.substr(0, 6), "bytes ")) return std::nullopt;
  value = Trim(value.substr(6));
  size_t slash = value.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view range = value.substr(0, slash), total = value.substr(slash + 1);
  ContentRange out;
  if (total != "*") {
    out.total = ParseDecimalU64(total);
    if (!out.total) return std::nullopt;
  }
  if (range == "*") {
    if (!out.total) return std::nullopt;  // "bytes */*" says nothing
    return out;
  }
  size_t dash = range.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  out.first = ParseDecimalU64(range.substr(0, dash));
  out.last = ParseDecimalU64(range.substr(dash + 1));
  if (!out.first || !out.last || *out.first > *out.last) return std::nullopt;
  if (out.total && *out.last >= *out.total) return std::nullopt;
  return out;
}

std::optional<uint64_t> ParseDecimalU64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return v;
}

}  // namespace memfit::hubnet
