#include "memfit/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace memfit {

Result<std::string> MemoryByteSource::Read(uint64_t offset, size_t length) {
  if (offset > bytes_.size() || length > bytes_.size() - offset) {
    return MakeError("{}: read of {} bytes at offset {} past the end ({} bytes)", name_, length,
                     offset, bytes_.size());
  }
  return bytes_.substr(offset, length);
}

namespace {

class FileByteSource final : public ByteSource {
 public:
  explicit FileByteSource(std::string path) : path_(std::move(path)) {}
  ~FileByteSource() override {
    if (fd_ >= 0) ::close(fd_);
  }
  FileByteSource(const FileByteSource&) = delete;
  FileByteSource& operator=(const FileByteSource&) = delete;

  Result<uint64_t> Size() override {
    MEMFIT_RETURN_IF_ERROR(Open());
    return size_;
  }

  Result<std::string> Read(uint64_t offset, size_t length) override {
    MEMFIT_RETURN_IF_ERROR(Open());
    if (offset > size_ || length > size_ - offset) {
      return MakeError("{}: file is truncated: needed {} bytes at offset {}, file has {} bytes",
                       path_, length, offset, size_);
    }
    std::string out(length, '\0');
    size_t done = 0;
    while (done < length) {
      ssize_t n = ::pread(fd_, out.data() + done, length - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return MakeError("{}: read failed: {}", path_, std::strerror(errno));
      if (n == 0) return MakeError("{}: file ended early at byte {}", path_, offset + done);
      done += static_cast<size_t>(n);
    }
    return out;
  }

  std::string Name() const override { return path_; }

 private:
  Status Open() {
    if (fd_ >= 0) return Ok{};
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return MakeError("{}: cannot open: {}", path_, std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return MakeError("{}: cannot stat: {}", path_, std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return MakeError("{}: not a regular file", path_);
    size_ = static_cast<uint64_t>(st.st_size);
    return Ok{};
  }

  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace

std::unique_ptr<ByteSource> OpenFileByteSource(const std::string& path) {
  return std::make_unique<FileByteSource>(path);
}

}  // namespace memfit
