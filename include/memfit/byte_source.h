#pragma once
// Random-access bytes: a local file, a Hub file read with HTTP ranges, or memory in tests.
// Format readers take a ByteSource and never a path or URL, so disk, Hub and tests share one path.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "memfit/result.h"

namespace memfit {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Total size in bytes.
  virtual Result<uint64_t> Size() = 0;
  // Exactly `length` bytes at `offset`, or an error; never a short read.
  virtual Result<std::string> Read(uint64_t offset, size_t length) = 0;
  // A name for error messages: a path, a URL or "<memory>".
  virtual std::string Name() const = 0;
};

// Bytes held in memory (tests, fuzzers, cached headers).
class MemoryByteSource final : public ByteSource {
 public:
  explicit MemoryByteSource(std::string bytes, std::string name = "<memory>")
      : bytes_(std::move(bytes)), name_(std::move(name)) {}
  Result<uint64_t> Size() override { return static_cast<uint64_t>(bytes_.size()); }
  Result<std::string> Read(uint64_t offset, size_t length) override;
  std::string Name() const override { return name_; }

 private:
  std::string bytes_;
  std::string name_;
};

// A local file, opened lazily; reads with pread.
std::unique_ptr<ByteSource> OpenFileByteSource(const std::string& path);

}  // namespace memfit
