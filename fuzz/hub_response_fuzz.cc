// Fuzz target: what the Hub and its CDN send back, through the code that reads it (src/hub/net):
//   0 an HTTP answer: header lines (AddHeaderLine), the final answer to a ranged or plain
//     request (FinishResponse), the error an answer that is not retried becomes (HubStatusError),
//     Content-Range, Link and Retry-After values;
//   1 a model info body (ParseModelInfoSha);
//   2 a tree page (ParseTreePage), then the file choice over the files it lists (PlanFiles) with
//     a fuzzed --gguf-file, model_index.json and modules.json;
//   3 memfit's cache files (DeserializeHeader, DeserializeIndex): memfit writes them, but they
//     live on disk where anything can change them; what decodes goes on to DescribeModel;
//   4 a cached GGUF header prefix read as the Hub path reads it (PrefixByteSource, HubGgufLimits).
// The input is a mode byte, then parts separated by kSeparator (see Parts()).

#include <algorithm>
#include <set>

#include "fuzz/fixtures.h"
#include "fuzz/fuzz_support.h"
#include "hub/net/cache_codec.h"
#include "hub/net/file_choice.h"
#include "hub/net/gguf_headers.h"
#include "hub/net/hub_api.h"
#include "hub/net/hub_file_source.h"
#include "hub/net/http_response.h"
#include "gguf_models.h"
#include "test_support.h"

namespace memfit::fuzz {
namespace {

using namespace hubnet;  // NOLINT: the target exercises this one module

constexpr std::string_view kSeparator = "\n--\n";
constexpr size_t kMaxParts = 6;

std::vector<std::string_view> Parts(std::string_view input) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < kMaxParts) {
    size_t at = input.find(kSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(input.substr(0, at));
    input.remove_prefix(at + kSeparator.size());
  }
  parts.push_back(input);
  while (parts.size() < kMaxParts) parts.push_back({});
  return parts;
}

uint64_t Number(std::string_view bytes, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width && at + i < bytes.size(); ++i) {
    v |= uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  }
  return v;
}

std::string Join(char mode, std::initializer_list<std::string_view> parts) {
  std::string out(1, mode);
  bool first = true;
  for (auto p : parts) {
    if (!first) out += kSeparator;
    out += p;
    first = false;
  }
  return out;
}

// Mode 0. parts: header block, body, parameters (status u16, flags u8, first u32, last u32,
// max_body u16).
void HttpAnswer(const std::vector<std::string_view>& parts) {
  std::map<std::string, std::string> headers, hub_headers;
  std::string_view block = parts[0];
  for (size_t start = 0; start < block.size();) {
    size_t end = block.find('\n', start);
    end = end == std::string_view::npos ? block.size() : end + 1;
    AddHeaderLine(block.substr(start, end - start), headers);
    start = end;
  }
  for (const auto& [name, value] : headers) {
    for (char c : name) Require(!(c >= 'A' && c <= 'Z'), "a header name not lowercased");
    Require(name.size() + value.size() <= block.size(), "a header larger than its block");
  }
  const std::string_view params = parts[2];
  const long status = 100 + static_cast<long>(Number(params, 0, 2) % 500);
  const uint64_t flags = Number(params, 2, 1);
  HttpRequest request{.url = "https://cdn.example/org/name/file?X-Amz-Signature=SECRET"};
  if (flags & 1) {
    uint64_t first = Number(params, 3, 4), last = Number(params, 7, 4);
    request.range = std::make_pair(std::min(first, last), std::max(first, last));
  }
  request.max_body_bytes = Number(params, 11, 2);
  if (flags & 2) hub_headers = headers;
  const std::string body(parts[1]);
  const bool capped = (flags & 4) != 0;
  // The request URL's signature never reaches a message, unless the answer itself carried it.
  bool answer_has_secret = block.find("SECRET") != std::string_view::npos;
  auto no_secret = [&](const Error& error) {
    Require(answer_has_secret || error.message.find("SECRET") == std::string::npos,
            "a CDN signature in an error");
  };
  if (auto range = ParseContentRange(headers.count("content-range") ? headers["content-range"] : "")) {
    Require(range->first.has_value() == range->last.has_value(), "half a byte range");
    if (range->first) Require(*range->first <= *range->last, "a range that ends before it starts");
    if (range->first && range->total) Require(*range->last < *range->total, "a range past its total");
    Require(range->first || range->total, "a Content-Range that says nothing");
  }
  (void)NextPageLink(headers.count("link") ? headers["link"] : "");
  (void)ParseDecimalU64(headers.count("retry-after") ? headers["retry-after"] : "");
  if (status >= 200 && status < 300) {
    auto response = FinishResponse(request, request.url, status, headers, hub_headers, body, capped);
    CheckResult(response);
    if (response) {
      if (request.range && status == 206) Require(response->body == body, "a 206 body changed");
      if (request.range && status == 200) {
        Require(response->body.size() <= body.size(), "a 200 window larger than the body");
      }
      if (!request.range) Require(!capped, "a capped body accepted");
    } else {
      no_secret(response.error());
    }
  } else if (!IsRetryableStatus(status)) {
    const ErrorContext context{.repo_id = "org/name", .revision = "main", .file = "config.json"};
    Error error = HubStatusError(status, headers, context, "https://huggingface.co", flags & 8,
                                 RedactUrl(request.url));
    CheckError(error);
    no_secret(error);
  }
}

// Mode 2. parts: tree page, --gguf-file, model_index.json, modules.json.
void TreeAndPlan(const std::vector<std::string_view>& parts) {
  auto files = hubnet::ParseTreePage(parts[0], "https://hub/api/models/org/name/tree/main");
  CheckResult(files);
  if (!files) return;
  std::set<std::string> names;
  for (const auto& f : *files) {
    Require(hubnet::IsSafeRepoPath(f.path), "an unsafe path accepted from a tree page");
    names.insert(f.path);
  }
  auto plan = hubnet::PlanFiles("org/name", *files, parts[1], parts[2], parts[3]);
  CheckResult(plan);
  if (!plan) return;
  auto listed = [&](const std::string& path) {
    Require(path.empty() || names.count(path), "the plan names a file the tree does not list");
  };
  listed(plan->config_path);
  listed(plan->root_index_path);
  listed(plan->pending_file);
  listed(plan->gguf_file);
  for (const auto& p : plan->json_files) listed(p);
  for (const auto& p : plan->gguf_paths) listed(p);
  for (const auto& g : plan->groups) {
    listed(g.index_path);
    for (const auto& p : g.files) listed(p);
    for (const auto& p : g.likely_shards) listed(p);
  }
}

// Mode 3. The decoded header or index re-encodes to something that decodes to the same thing.
void Cache(std::string_view bytes, uint32_t choice) {
  if (auto header = hubnet::DeserializeHeader(bytes)) {
    std::string again = hubnet::SerializeHeader(*header);
    auto round = hubnet::DeserializeHeader(again);
    Require(round.has_value(), "a decoded header does not re-decode");
    Require(round->tensors.size() == header->tensors.size() &&
                round->header_bytes == header->header_bytes &&
                round->data_bytes == header->data_bytes,
            "a header changed through the cache codec");
    for (size_t i = 0; i < header->tensors.size(); ++i) {
      const auto& a = header->tensors[i];
      const auto& b = round->tensors[i];
      Require(a.name == b.name && a.dtype == b.dtype && a.shape == b.shape && a.begin == b.begin &&
                  a.end == b.end,
              "a tensor changed through the cache codec");
    }
    ModelInputs inputs;
    inputs.name = "fuzz";
    inputs.location = "cache";
    inputs.safetensors.emplace_back("model.safetensors", std::move(*header));
    DescribeAndExercise(inputs, "fuzz", choice);
  }
  if (auto index = hubnet::DeserializeIndex(bytes)) {
    auto round = hubnet::DeserializeIndex(hubnet::SerializeIndex(*index));
    Require(round.has_value(), "a decoded index does not re-decode");
    Require(round->total_size == index->total_size && round->shards() == index->shards(),
            "an index changed through the cache codec");
    Require(std::is_sorted(index->shards().begin(), index->shards().end()), "index shards not sorted");
    size_t n = 0;
    for (const auto& [tensor, shard] : index->weight_map) {
      Require(std::binary_search(index->shards().begin(), index->shards().end(), shard),
              "an index entry names no listed shard");
      ++n;
    }
    size_t m = 0;
    for ([[maybe_unused]] const auto& entry : round->weight_map) ++m;
    Require(n == m, "index entries changed through the cache codec");
  }
}

// Mode 4. parts: the cached bytes, the file size (u64; smaller than the bytes is allowed: the
// reader must refuse what the file cannot hold).
void GgufPrefix(const std::vector<std::string_view>& parts) {
  const uint64_t size = std::max<uint64_t>(parts[0].size(), Number(parts[1], 0, 8) >> 4);
  hubnet::PrefixByteSource source(std::string(parts[0]), size, "https://cdn/x.gguf");
  auto file = ReadGgufHeader(source, hubnet::HubGgufLimits());
  CheckResult(file);
  if (file) {
    Require(file->header_bytes <= parts[0].size(), "a GGUF header read past the bytes cached");
    Require(file->file_bytes == size, "a GGUF header of another file size");
  }
}

}  // namespace

std::vector<std::string> Seeds() {
  const std::string sha(40, 'a');
  const std::string oid(64, 'b');
  const std::string tree =
      R"([{"type":"file","path":"config.json","size":700,"oid":")" + sha + R"("},)"
      R"({"type":"directory","path":"unet","size":0,"oid":")" + sha + R"("},)"
      R"({"type":"file","path":"model.safetensors.index.json","size":900,"oid":")" + sha + R"("},)"
      R"({"type":"file","path":"model-00001-of-00002.safetensors","size":5000,"oid":")" + sha +
      R"(","lfs":{"oid":")" + oid + R"(","size":5000000000,"pointerSize":135}},)"
      R"({"type":"file","path":"model-00002-of-00002.safetensors","size":5000,"oid":")" + sha +
      R"(","lfs":{"oid":")" + oid + R"(","size":4000000000,"pointerSize":135}}])";
  const std::string gguf_tree =
      R"([{"type":"file","path":"m-Q4_K_M.gguf","size":9,"oid":")" + sha +
      R"(","lfs":{"oid":")" + oid + R"(","size":4000,"pointerSize":135}},)"
      R"({"type":"file","path":"m-Q8_0-00001-of-00002.gguf","size":9,"oid":")" + sha + R"("},)"
      R"({"type":"file","path":"m-Q8_0-00002-of-00002.gguf","size":9,"oid":")" + sha + R"("},)"
      R"({"type":"file","path":"mmproj-f16.gguf","size":9,"oid":")" + sha + R"("}])";
  const std::string diffusers_tree =
      R"([{"type":"file","path":"model_index.json","size":9,"oid":")" + sha + R"("},)"
      R"({"type":"file","path":"unet/diffusion_pytorch_model.safetensors","size":9,"oid":")" +
      sha + R"("},{"type":"file","path":"vae/diffusion_pytorch_model.fp16.safetensors","size":9,)"
      R"("oid":")" + sha + R"("}])";
  const std::string st_tree =
      R"([{"type":"file","path":"modules.json","size":9,"oid":")" + sha + R"("},)"
      R"({"type":"file","path":"config.json","size":9,"oid":")" + sha + R"("},)"
      R"({"type":"file","path":"model.safetensors","size":9,"oid":")" + sha + R"("},)"
      R"({"type":"file","path":"2_Dense/model.safetensors","size":9,"oid":")" + sha + R"("}])";
  // Parameters of mode 0: status, flags, first, last, max_body (little-endian).
  auto params = [](uint16_t status, uint8_t flags, uint32_t first, uint32_t last, uint16_t max) {
    std::string p;
    for (int i = 0; i < 2; ++i) p += static_cast<char>((status - 100) >> (8 * i));
    p += static_cast<char>(flags);
    for (int i = 0; i < 4; ++i) p += static_cast<char>(first >> (8 * i));
    for (int i = 0; i < 4; ++i) p += static_cast<char>(last >> (8 * i));
    for (int i = 0; i < 2; ++i) p += static_cast<char>(max >> (8 * i));
    return p;
  };
  std::vector<std::string> seeds = {
      Join('\0', {"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-7/100\r\n"
                    "X-Linked-Size: 100\r\n",
                    "01234567", params(206, 1, 0, 7, 0)}),
      Join('\0', {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n", "0123456789abcdef",
                    params(200, 5, 4, 11, 0)}),
      Join('\0', {"HTTP/1.1 302 Found\r\nLocation: https://cdn/x\r\nHTTP/1.1 403 Forbidden\r\n"
                    "X-Error-Code: GatedRepo\r\nX-Error-Message: Access to model org/name is "
                    "restricted\r\n",
                    "{\"error\":\"gated\"}", params(403, 2, 0, 0, 100)}),
      Join('\0', {"HTTP/2 404\r\nx-error-code: EntryNotFound\r\n", "", params(404, 0, 0, 0, 9)}),
      Join('\0', {"HTTP/2 429\r\nRetry-After: 7\r\n", "", params(429, 0, 0, 0, 9)}),
      Join('\0', {"HTTP/2 200\r\nLink: <https://hub/api/models/a/tree/main?cursor=x>; "
                    "rel=\"next\", <https://hub/x>; rel=prev\r\n",
                    "[]", params(200, 0, 0, 0, 1000)}),
      Join('\1', {R"({"id":"org/name","sha":")" + sha + R"(","siblings":[]})"}),
      Join('\2', {tree, "", "", ""}),
      Join('\2', {gguf_tree, "Q8_0", "", ""}),
      Join('\2', {gguf_tree, "", "", ""}),
      Join('\2', {diffusers_tree, "",
                    R"({"_class_name":"StableDiffusionPipeline","unet":["diffusers","UNet2DConditionModel"],"vae":["diffusers","AutoencoderKL"]})",
                    ""}),
      Join('\2', {st_tree, "", "",
                   R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},{"idx":1,"name":"1","path":"2_Dense","type":"sentence_transformers.models.Dense"}])"}),
      Join('\3', {hubnet::SerializeHeader(TinyLlamaHeader())}),
  };
  auto index = ParseWeightIndex(
      R"({"metadata":{"total_size":1168},"weight_map":{"a.weight":"model-00001-of-00002.safetensors","b.weight":"model-00002-of-00002.safetensors","c":"model-00001-of-00002.safetensors"}})",
      "seed");
  if (index) seeds.push_back(Join('\3', {hubnet::SerializeIndex(*index)}));
  // A GGUF file's first bytes as the cache keeps them (the tests' GGUF builder), with its size.
  testing::GgufShape shape;
  shape.n_vocab = 64;
  const testing::GgufWriter writer = testing::MakeGgufWriter(shape);
  const std::string header = writer.Header();
  std::string size;
  const uint64_t file_size = (header.size() + writer.DataBytes()) << 4;
  for (int i = 0; i < 8; ++i) size += static_cast<char>(file_size >> (8 * i));
  seeds.push_back(Join('\4', {header, size}));
  return seeds;
}

void Run(std::string_view input) {
  if (input.empty()) return;
  const uint8_t mode = static_cast<uint8_t>(input[0]) % 5;
  const auto parts = Parts(input.substr(1));
  switch (mode) {
    case 0: HttpAnswer(parts); break;
    case 1: {
      auto sha = hubnet::ParseModelInfoSha(input.substr(1), "https://hub/api/models/org/name");
      CheckResult(sha);
      if (sha) Require(sha->size() == 40 && hubnet::IsObjectId(*sha), "a bad commit accepted");
      break;
    }
    case 2: TreeAndPlan(parts); break;
    case 3: Cache(input.substr(1), Choice(input)); break;
    case 4: GgufPrefix(parts); break;
  }
}

}  // namespace memfit::fuzz
