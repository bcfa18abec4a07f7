#pragma once
// Result<T>: a value or an Error, with std::expected's accessor names (has_value, value, error) so
// that moving to std::expected later is mechanical. Fallible functions in memfit return Result;
// exceptions never cross module boundaries (see docs/ARCHITECTURE.md, "Errors").

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace memfit {

// What kind of failure an error is, for callers that answer differently (the server's HTTP
// status, the CLI's exit code): most errors are bad input; the Hub and model resolution say
// when a model does not exist, needs access, or could not be asked.
enum class ErrorKind : uint8_t {
  kBadInput,     // malformed or hostile input, impossible settings, a failed estimate
  kNotFound,     // no such model, file or revision (locally, in the catalog, on the Hub)
  kForbidden,    // gated or private: a token or accepted terms would help
  kUnavailable,  // offline, or the Hub could not be reached in time
  kUnsupported,  // a valid input memfit cannot estimate (yet)
  kUsage,        // no request of the command: an unknown option, one given twice (API bodies)
};

// An error message that says where, lowercase, context first:
// "safetensors: header length 9223372036854775807 exceeds file size 4096".
struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::kBadInput;
};

// The same error, of another kind.
[[nodiscard]] inline Error WithKind(Error error, ErrorKind kind) {
  error.kind = kind;
  return error;
}

// Errors are one line even when they quote names from a file (a tensor name may hold "\n"):
// control characters become escapes ("\n", "\x01").
[[nodiscard]] inline std::string OneLine(std::string text) {
  size_t i = 0;
  while (i < text.size() && static_cast<unsigned char>(text[i]) >= 0x20 && text[i] != 0x7f) ++i;
  if (i == text.size()) return text;
  std::string out = text.substr(0, i);
  for (; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  return out;
}

template <typename... Args>
[[nodiscard]] Error MakeError(fmt::format_string<Args...> format, Args&&... args) {
  return Error{OneLine(fmt::format(format, std::forward<Args>(args)...))};
}

// Prefixes an error with its context: Wrap(e, "model.safetensors") -> "model.safetensors: <e>".
[[nodiscard]] inline Error Wrap(const Error& error, std::string_view context) {
  return Error{OneLine(fmt::format("{}: {}", context, error.message)), error.kind};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error error) : data_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const { return data_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(data_); }
  const T& value() const& { return std::get<0>(data_); }
  T&& value() && { return std::get<0>(std::move(data_)); }
  const Error& error() const { return std::get<1>(data_); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Error> data_;
};

// Result of an operation with no value.
struct Ok {};
using Status = Result<Ok>;

}  // namespace memfit

// Evaluates `expr` (a Result); on error returns the error from the enclosing function.
#define MEMFIT_CONCAT_INNER(a, b) a##b
#define MEMFIT_CONCAT(a, b) MEMFIT_CONCAT_INNER(a, b)
#define MEMFIT_ASSIGN_OR_RETURN(lhs, expr) \
  MEMFIT_ASSIGN_OR_RETURN_IMPL(MEMFIT_CONCAT(memfit_result_, __LINE__), lhs, expr)
#define MEMFIT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.has_value()) return tmp.error();          \
  lhs = std::move(tmp).value()
#define MEMFIT_RETURN_IF_ERROR(expr)                                    \
  do {                                                                  \
    auto memfit_status_ = (expr);                                       \
    if (!memfit_status_.has_value()) return memfit_status_.error();     \
  } while (0)
