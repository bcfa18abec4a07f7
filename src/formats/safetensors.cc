// safetensors header reader.
//
// Byte layout (huggingface/safetensors README, "Format"):
//   [0, 8)        u64 little-endian N: length of the JSON header
//   [8, 8+N)      UTF-8 JSON object: {"name": {"dtype": "F16", "shape": [..],
//                 "data_offsets": [begin, end]}, ..., "__metadata__": {str: str}}, may be padded
//                 with trailing spaces
//   [8+N, EOF)    the data buffer; offsets are relative to its start, end exclusive, no holes
//
// The header is parsed with nlohmann's SAX interface straight into SafetensorsTensorInfo: no DOM,
// so a 91k-tensor checkpoint parses in milliseconds, and duplicate names are seen as they come.

#include "memfit/safetensors.h"

#include <algorithm>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "memfit/checked_math.h"

namespace memfit {
namespace {

constexpr uint32_t kMaxDepth = 4;  // root > tensor > shape/offsets arrays

class HeaderSax {
 public:
  using json = nlohmann::json;
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  explicit HeaderSax(const SafetensorsLimits& limits) : limits_(limits) {}

  bool null() { return Scalar("null"); }
  bool boolean(bool) { return Scalar("boolean"); }
  bool number_integer(number_integer_t value) {
    if (value < 0) {
      if (InArray()) return Fail(fmt::format("tensor \"{}\": negative value {} in \"{}\"",
                                             name_, value, field_));
      return Scalar("integer");
    }
    return number_unsigned(static_cast<number_unsigned_t>(value));
  }
  bool number_unsigned(number_unsigned_t value) {
    if (InArray()) {
      array_.push_back(value);
      return true;
    }
    return Scalar("integer");
  }
  bool number_float(number_float_t, const string_t&) {
    if (InArray()) {
      return Fail(fmt::format("tensor \"{}\": non-integer value in \"{}\"", name_, field_));
    }
    return Scalar("number");
  }
  bool binary(binary_t&) { return Fail("binary value in header"); }
  bool string(string_t& value) {
    if (depth_ == 2 && in_metadata_) {
      metadata_[field_] = value;
      return true;
    }
    if (depth_ == 2 && field_ == "dtype") {
      auto dtype = ParseSafetensorsDtype(value);
      if (!dtype) return Fail(fmt::format("tensor \"{}\": {}", name_, dtype.error().message));
      current_.dtype = *dtype;
      seen_dtype_ = true;
      return true;
    }
    return Scalar("string");
  }
  bool start_object(std::size_t) {
    if (++depth_ > 2) return Fail(fmt::format("tensor \"{}\": unexpected object in \"{}\"", name_, field_));
    if (depth_ == 2) {
      in_metadata_ = name_ == "__metadata__";
      current_ = SafetensorsTensorInfo{};
      current_.name = name_;
      seen_dtype_ = seen_shape_ = seen_offsets_ = false;
    }
    return true;
  }
  bool key(string_t& value) {
    if (depth_ == 1) {
      if (!names_.insert(value).second) return Fail(fmt::format("duplicate tensor \"{}\"", value));
      if (names_.size() > limits_.max_tensors) {
        return Fail(fmt::format("more than {} tensors", limits_.max_tensors));
      }
      name_ = value;
    } else {
      field_ = value;
    }
    return true;
  }
  bool end_object() {
    if (depth_ == 2 && !in_metadata_) {
      if (!seen_dtype_) return Fail(fmt::format("tensor \"{}\": missing \"dtype\"", name_));
      if (!seen_shape_) return Fail(fmt::format("tensor \"{}\": missing \"shape\"", name_));
      if (!seen_offsets_) return Fail(fmt::format("tensor \"{}\": missing \"data_offsets\"", name_));
      tensors_.push_back(std::move(current_));
    }
    if (depth_ == 2) in_metadata_ = false;
    --depth_;
    return true;
  }
  bool start_array(std::size_t) {
    if (depth_ != 2 || in_metadata_ || (field_ != "shape" && field_ != "data_offsets")) {
      return Fail(depth_ <= 1 ? fmt::format("\"{}\": expected an object", name_)
                              : fmt::format("tensor \"{}\": unexpected array in \"{}\"", name_, field_));
    }
    ++depth_;
    array_.clear();
    return true;
  }
  bool end_array() {
    --depth_;
    if (field_ == "shape") {
      current_.shape = array_;
      seen_shape_ = true;
    } else {
      if (array_.size() != 2) {
        return Fail(fmt::format("tensor \"{}\": \"data_offsets\" must hold 2 integers, got {}",
                                name_, array_.size()));
      }
      current_.begin = array_[0];
      current_.end = array_[1];
      seen_offsets_ = true;
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    if (error_.empty()) {
      std::string message = e.what();
      auto pos = message.find("] ");
      if (pos != std::string::npos) message = message.substr(pos + 2);
      error_ = fmt::format("invalid JSON at byte {}: {}", position, message);
    }
    return false;
  }

  std::string& error() { return error_; }
  std::vector<SafetensorsTensorInfo>& tensors() { return tensors_; }
  std::map<std::string, std::string>& metadata() { return metadata_; }

 private:
  bool InArray() const { return depth_ == 3; }
  bool Scalar(std::string_view type) {
    if (depth_ == 0) return Fail("header is not a JSON object");
    if (depth_ == 1) return Fail(fmt::format("\"{}\": expected an object, got {}", name_, type));
    if (depth_ == 2 && in_metadata_) {
      return Fail(fmt::format("__metadata__ \"{}\": values must be strings, got {}", field_, type));
    }
    if (depth_ == 3) {
      return Fail(fmt::format("tensor \"{}\": \"{}\" must hold integers, got {}", name_, field_, type));
    }
    if (field_ == "dtype") return Fail(fmt::format("tensor \"{}\": \"dtype\" must be a string", name_));
    return true;  // unknown scalar fields are ignored, as serde does
  }
  bool Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  const SafetensorsLimits& limits_;
  uint32_t depth_ = 0;
  bool in_metadata_ = false;
  bool seen_dtype_ = false, seen_shape_ = false, seen_offsets_ = false;
  std::string name_, field_, error_;
  std::vector<uint64_t> array_;
  SafetensorsTensorInfo current_;
  std::unordered_set<std::string> names_;
  std::vector<SafetensorsTensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

Status ValidateTensor(const SafetensorsTensorInfo& t) {
  auto numel = CheckedProduct(t.shape);
  if (!numel) return MakeError("tensor \"{}\": element count overflows 64 bits", t.name);
  auto bits = CheckedMul(*numel, DtypeBits(t.dtype));
  if (!bits) return MakeError("tensor \"{}\": byte size overflows 64 bits", t.name);
  if (*bits % 8 != 0) {
    return MakeError("tensor \"{}\": {} elements of {} do not fill whole bytes", t.name, *numel,
                     DtypeName(t.dtype));
  }
  if (t.end < t.begin) {
    return MakeError("tensor \"{}\": data_offsets [{}, {}] end before they begin", t.name, t.begin,
                     t.end);
  }
  if (t.end - t.begin != *bits / 8) {
    return MakeError("tensor \"{}\": data_offsets [{}, {}] hold {} bytes but shape and dtype need {}",
                     t.name, t.begin, t.end, t.end - t.begin, *bits / 8);
  }
  return Ok{};
}

}  // namespace

Result<SafetensorsHeader> ParseSafetensorsHeaderJson(std::string_view json_text,
                                                     std::optional<uint64_t> data_bytes,
                                                     const SafetensorsLimits& limits) {
  if (json_text.size() > limits.max_header_bytes) {
    return MakeError("safetensors: header of {} bytes exceeds the limit of {} bytes",
                     json_text.size(), limits.max_header_bytes);
  }
  size_t first = json_text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || json_text[first] != '{') {
    return MakeError("safetensors: header is not a JSON object");
  }
  HeaderSax sax(limits);
  // Depth is bounded by the state machine (kMaxDepth); anything deeper fails at once.
  static_assert(kMaxDepth == 4);
  bool ok = nlohmann::json::sax_parse(json_text.begin(), json_text.end(), &sax);
  if (!ok || !sax.error().empty()) {
    return MakeError("safetensors: {}", sax.error().empty() ? "invalid header" : sax.error());
  }
  SafetensorsHeader header;
  header.header_bytes = json_text.size();
  header.tensors = std::move(sax.tensors());
  header.metadata = std::move(sax.metadata());
  for (const auto& t : header.tensors) {
    auto status = ValidateTensor(t);
    if (!status) return Wrap(status.error(), "safetensors");
  }
  std::stable_sort(header.tensors.begin(), header.tensors.end(),
                   [](const auto& a, const auto& b) {
                     return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
                   });
  // No holes and no overlaps: each tensor starts where the previous one ended.
  uint64_t expected = 0;
  for (const auto& t : header.tensors) {
    if (t.begin != expected) {
      return MakeError("safetensors: tensor \"{}\" starts at byte {} of the data buffer, expected {} ({})",
                       t.name, t.begin, expected, t.begin > expected ? "a hole" : "an overlap");
    }
    expected = t.end;
  }
  header.data_bytes = expected;
  if (data_bytes && *data_bytes != expected) {
    return MakeError("safetensors: tensors cover {} bytes but the data buffer holds {} bytes",
                     expected, *data_bytes);
  }
  return header;
}

Result<SafetensorsHeader> ReadSafetensorsHeader(ByteSource& source,
                                                const SafetensorsLimits& limits) {
  auto where = source.Name();
  MEMFIT_ASSIGN_OR_RETURN(uint64_t size, source.Size());
  if (size < 8) {
    return MakeError("{}: file of {} bytes is too short for a safetensors header", where, size);
  }
  MEMFIT_ASSIGN_OR_RETURN(std::string prefix, source.Read(0, 8));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(prefix[i]);
  if (n > limits.max_header_bytes) {
    return MakeError("{}: safetensors header length {} exceeds the limit of {} bytes", where, n,
                     limits.max_header_bytes);
  }
  if (n > size - 8) {
    return MakeError("{}: safetensors header length {} exceeds file size {}", where, n, size);
  }
  if (n < 2) return MakeError("{}: safetensors header length {} is too small", where, n);
  MEMFIT_ASSIGN_OR_RETURN(std::string json_text, source.Read(8, static_cast<size_t>(n)));
  auto header = ParseSafetensorsHeaderJson(json_text, size - 8 - n, limits);
  if (!header) return Wrap(header.error(), where);
  return header;
}

}  // namespace memfit
