// Hostile GGUF files: counts and sizes that a file may claim (a local sparse file or a Hub
// Content-Range can make the file as large as the header says), products that overflow, names
// that are not UTF-8. Each case is a regression test for a bug found by fuzz/gguf_fuzz.cc or while
// writing it (docs/security.md, "Bugs found"); its input is built here in code.

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "gguf_models.h"
#include "gguf_writer.h"
#include "memfit/describe.h"
#include "memfit/gguf.h"
#include "memfit/gguf_model.h"
#include "memfit/llamacpp.h"
#include "memfit/llamacpp_report.h"

#if defined(__SANITIZE_ADDRESS__)
#define MEMFIT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMFIT_TEST_ASAN 1
#endif
#endif
#ifdef MEMFIT_TEST_ASAN
#include <sanitizer/allocator_interface.h>
#else
#include <malloc.h>
#endif

namespace memfit {
namespace {

using testing::GgufWriter;
using testing::VirtualGgufSource;

// Bytes of heap in use now (reserved capacity included: it is allocated even if never touched).
uint64_t HeapInUse() {
#ifdef MEMFIT_TEST_ASAN
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#endif
}

// A file of `size` bytes, `head` then zeros, whose reads fail beyond the first 64 KiB (a download
// cut short). Records the heap growth seen at each read: what the reader allocated before reading
// the bytes that would justify it.
class WatchedSource final : public ByteSource {
 public:
  WatchedSource(std::string head, uint64_t size) : head_(std::move(head)), size_(size), base_(HeapInUse()) {}
  Result<uint64_t> Size() override { return size_; }
  Result<std::string> Read(uint64_t offset, size_t length) override {
    const uint64_t now = HeapInUse();
    if (now > base_) peak_ = std::max(peak_, now - base_);
    if (offset + length > (64u << 10)) return MakeError("watched.gguf: connection closed");
    std::string out(length, '\0');
    if (offset < head_.size()) head_.copy(out.data(), std::min<uint64_t>(length, head_.size() - offset), offset);
    return out;
  }
  std::string Name() const override { return "watched.gguf"; }
  uint64_t peak() const { return peak_; }

 private:
  std::string head_;
  uint64_t size_;
  uint64_t base_;
  uint64_t peak_ = 0;
};

constexpr uint64_t kTiB = uint64_t{1} << 40;

TEST(HostileGguf, CountsNearTheFileSizeReserveOnlyWhatIsRead) {
  // Before the fix the reader reserved every count it had checked against the bytes left in the
  // file, not the bytes read: in a 1 TiB file (sparse, or a Hub Content-Range), 30 header bytes
  // reserved 2^28 nested array values (~50 GiB: std::bad_alloc, a crash), or 2^20 key/values and
  // 2^22 tensor infos (~0.6 GiB). Reads use 64-byte chunks, so the source sees each reservation
  // before the next read.
  const GgufLimits limits{.chunk_bytes = 64};
  {
    // key "a": an array of 2^28 arrays (the first of which is cut off).
    GgufWriter w;
    w.Raw("a", 9, [&](std::string& o) {
      w.Put<uint32_t>(o, 9);
      w.PutCount(o, (uint64_t{1} << 28) - 1);
    });
    WatchedSource source(w.Header(), kTiB);
    auto f = ReadGgufHeader(source, limits);
    ASSERT_FALSE(f);
    EXPECT_NE(f.error().message.find("connection closed"), std::string::npos) << f.error().message;
    EXPECT_LT(source.peak(), 16u << 20);
  }
  {
    // 2^20 key/values and 2^22 tensors claimed; one key of 27 bytes makes the key/values end at
    // byte 64, so the first tensor info starts a new read; then zeros (a second empty tensor
    // name: a duplicate).
    std::string head = "GGUF";
    GgufWriter w;
    w.Put<uint32_t>(head, 3);
    w.Put<uint64_t>(head, uint64_t{1} << 22);
    w.Put<uint64_t>(head, 1);
    w.PutString(head, std::string(27, 'k'));
    w.Put<uint32_t>(head, 0);
    head += '\x01';
    ASSERT_EQ(head.size(), 64u);
    WatchedSource source(head, kTiB);
    auto f = ReadGgufHeader(source, limits);
    ASSERT_FALSE(f);
    EXPECT_NE(f.error().message.find("duplicate tensor"), std::string::npos) << f.error().message;
    EXPECT_LT(source.peak(), 16u << 20);
    std::string kv_head = head.substr(0, 8);
    w.Put<uint64_t>(kv_head, 0);
    w.Put<uint64_t>(kv_head, uint64_t{1} << 20);
    kv_head += head.substr(24);
    WatchedSource kv_source(kv_head + std::string(100, 'x'), kTiB);
    auto g = ReadGgufHeader(kv_source, limits);
    ASSERT_FALSE(g);
    EXPECT_LT(kv_source.peak(), 16u << 20);
  }
}

}  // namespace
}  // namespace memfit
