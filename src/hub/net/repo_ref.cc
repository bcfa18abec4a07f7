// Hub ids and URLs -> HubRef; URL percent-encoding as huggingface_hub's quote().

#include <string>

#include "memfit/hub.h"
#include "memfit/local_source.h"

namespace memfit {
namespace {

bool IsUnreserved(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

std::string Encode(std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (IsUnreserved(c) || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> Decode(std::string_view s, std::string_view spec) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) {
      return MakeError("{}: bad percent-encoding", spec);
    }
    int hi = HexValue(s[i + 1]), lo = HexValue(s[i + 2]);
    if (hi < 0 || lo < 0) return MakeError("{}: bad percent-encoding", spec);
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::string_view StripScheme(std::string_view s) {
  for (std::string_view scheme : {"https://", "http://"}) {
    if (s.starts_with(scheme)) return s.substr(scheme.size());
  }
  return s;
}

}  // namespace

std::string PercentEncodeSegment(std::string_view s) { return Encode(s, false); }
std::string PercentEncodePath(std::string_view s) { return Encode(s, true); }

Status ValidateRevision(std::string_view revision) {
  if (revision.empty()) return MakeError("revision: empty");
  if (revision.size() > 256) return MakeError("revision: longer than 256 bytes");
  if (revision.find('\0') != std::string_view::npos || revision.front() == '/' ||
      revision.back() == '/') {
    return MakeError("revision \"{}\": not a branch, tag or commit name", revision);
  }
  // No ".." path segment: the revision becomes a path under refs/ in the cache.
  size_t start = 0;
  while (start <= revision.size()) {
    size_t end = revision.find('/', start);
    if (end == std::string_view::npos) end = revision.size();
    std::string_view segment = revision.substr(start, end - start);
    if (segment.empty() || segment == "." || segment == "..") {
      return MakeError("revision \"{}\": not a branch, tag or commit name", revision);
    }
    start = end + 1;
  }
  return Ok{};
}

bool LooksLikeHubUrl(std::string_view spec) {
  return spec.starts_with("https://") || spec.starts_with("http://") ||
         spec.starts_with("hf.co/") || spec.starts_with("huggingface.co/");
}

Result<HubRef> ParseHubRef(std::string_view spec, std::string_view endpoint) {
  HubRef ref;
  if (!LooksLikeHubUrl(spec)) {
    if (!LooksLikeHubId(spec)) {
      return MakeError("{}: not a Hub id (expected org/name) or a Hub URL", spec);
    }
    ref.repo_id = std::string(spec);
    return ref;
  }
  // Strip the host: the endpoint's host, huggingface.co or hf.co.
  std::string_view rest = StripScheme(spec);
  std::string_view endpoint_host = StripScheme(endpoint);
  bool matched = false;
  for (std::string_view host : {endpoint_host, std::string_view("huggingface.co"),
                                std::string_view("www.huggingface.co"), std::string_view("hf.co")}) {
    if (!host.empty() && rest.starts_with(host) &&
        (rest.size() == host.size() || rest[host.size()] == '/')) {
      rest.remove_prefix(host.size());
      matched = true;
      break;
    }
  }
  if (!matched) {
    return MakeError("{}: not a Hugging Face Hub URL (expected {}/org/name)", spec, endpoint);
  }
  // Drop a query or fragment, then split the path.
  rest = rest.substr(0, rest.find_first_of("?#"));
  while (rest.starts_with('/')) rest.remove_prefix(1);
  while (rest.ends_with('/')) rest.remove_suffix(1);
  if (rest.starts_with("datasets/") || rest.starts_with("spaces/")) {
    return MakeError("{}: a dataset or Space, not a model repository", spec);
  }
  std::vector<std::string_view> parts;
  for (size_t start = 0; start <= rest.size();) {
    size_t end = rest.find('/', start);
    if (end == std::string_view::npos) end = rest.size();
    parts.push_back(rest.substr(start, end - start));
    start = end + 1;
  }
  // org/name, or a canonical one-part name followed by tree/blob/resolve.
  size_t id_parts = parts.size() >= 2 && parts[1] != "tree" && parts[1] != "blob" &&
                            parts[1] != "resolve"
                        ? 2
                        : 1;
  if (parts.empty() || parts[0].empty()) return MakeError("{}: the URL names no repository", spec);
  ref.repo_id = std::string(parts[0]);
  if (id_parts == 2) ref.repo_id += "/" + std::string(parts[1]);
  if (!LooksLikeHubId(ref.repo_id)) return MakeError("{}: \"{}\" is not a Hub id", spec, ref.repo_id);
  if (parts.size() == id_parts) return ref;
  std::string_view kind = parts[id_parts];
  if ((kind != "tree" && kind != "blob" && kind != "resolve") || parts.size() < id_parts + 2) {
    return MakeError("{}: expected {}/{}/tree/<revision> or /blob/<revision>/<file>", spec,
                     endpoint, ref.repo_id);
  }
  MEMFIT_ASSIGN_OR_RETURN(ref.revision, Decode(parts[id_parts + 1], spec));
  MEMFIT_RETURN_IF_ERROR(ValidateRevision(ref.revision));
  std::string file;
  for (size_t i = id_parts + 2; i < parts.size(); ++i) {
    if (!file.empty()) file += '/';
    file += parts[i];
  }
  MEMFIT_ASSIGN_OR_RETURN(ref.file, Decode(file, spec));
  if (kind == "tree" && !ref.file.empty()) {
    return MakeError("{}: a folder URL; pass the repository URL or a file URL", spec);
  }
  return ref;
}

}  // namespace memfit
