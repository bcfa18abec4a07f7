// Hostile GGUF files: counts and sizes that a file may claim (a local sparse file or a Hub
// Content-Range can make the file as large as the header says), products that overflow, names
// that are not UTF-8. Each case is a regression test for a bug found by fuzz/gguf_fuzz.cc or while
// writing it (docs/security.md, "Bugs found"); its input is built here in code.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

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
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

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
  WatchedSource(std::string head, uint64_t size)
      : head_(std::move(head)), size_(size), base_(HeapInUse()) {}
  Result<uint64_t> Size() override { return size_; }
  Result<std::string> Read(uint64_t offset, size_t length) override {
    const uint64_t now = HeapInUse();
    if (now > base_) peak_ = std::max(peak_, now - base_);
    if (offset + length > (64u << 10)) return MakeError("watched.gguf: connection closed");
    std::string out(length, '\0');
    if (offset < head_.size())
      head_.copy(out.data(), std::min<uint64_t>(length, head_.size() - offset), offset);
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

TEST(HostileGguf, LayerNumberInATensorNameIsNotAnAllocationSize) {
  // ModelFromGguf sized a vector by the largest "blk.N." in the tensor names before checking N
  // against block_count: blk.9000000000000000000 asked for 2^63 bits (std::bad_alloc, a crash).
  GgufWriter w;
  w.Str("general.architecture", "llama")
      .U32("llama.block_count", 2)
      .U32("llama.embedding_length", 32)
      .U32("llama.attention.head_count", 2)
      .Tensor("blk.9000000000000000000.ffn_up_exps.weight", {32}, 0);
  MemoryByteSource source(w.Build(), "t.gguf");
  auto f = ReadGgufHeader(source);
  ASSERT_TRUE(f) << f.error().message;
  auto m = ModelFromGguf({GgufShard{"t.gguf", std::move(*f)}}, "t");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("tensor blk.9000000000000000000 beyond llama.block_count 2"),
            std::string::npos)
      << m.error().message;
}

TEST(HostileGguf, ModelsBeyond2To56ElementsAreRejected) {
  // A 2^62-byte file holding one I8 tensor of 2^31 x 2^31 elements: valid GGUF (its size fits the
  // data section), but the model bounds every estimator relies on (2^56 elements, model.h) were
  // only enforced for safetensors and config models; EstimateLoad's 18 B/param and float32 figures
  // wrapped for GGUF.
  GgufWriter w;
  w.Str("general.architecture", "llama")
      .U32("llama.block_count", 1)
      .U32("llama.embedding_length", 32)
      .U32("llama.attention.head_count", 2)
      .Tensor("token_embd.weight", {uint64_t{1} << 31, uint64_t{1} << 31}, 24);
  VirtualGgufSource source(w.Header(), uint64_t{1} << 62);
  auto f = ReadGgufHeader(source);
  ASSERT_TRUE(f) << f.error().message;
  ModelInputs inputs;
  inputs.name = "big";
  inputs.gguf = {GgufShard{"big.gguf", std::move(*f)}};
  auto m = DescribeModel(inputs);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("more than 2^56 elements"), std::string::npos)
      << m.error().message;
}

Result<Model> ModelOf(const GgufWriter& w) {
  VirtualGgufSource source(w.Header(), w.DataBytes(), "t.gguf");
  MEMFIT_ASSIGN_OR_RETURN(GgufFile f, ReadGgufHeader(source));
  return ModelFromGguf({GgufShard{"t.gguf", std::move(f)}}, "t");
}

// A llama-like file without tensors whose hyperparameters are `set` (u32 unless given as u64).
GgufWriter Hparams(const std::function<void(GgufWriter&)>& set) {
  GgufWriter w;
  w.Str("general.architecture", "llama")
      .U32("llama.block_count", 2)
      .U32("llama.context_length", 4096)
      .U32("llama.embedding_length", 64)
      .U32("llama.feed_forward_length", 128)
      .U32("llama.attention.head_count", 4)
      .U32("llama.vocab_size", 100);
  set(w);
  return w;
}

TEST(HostileGguf, HyperparametersBeyond32BitsAreErrors) {
  // llama.cpp holds every hyperparameter in a uint32_t; memfit took any uint64 and multiplied.
  auto m = ModelOf(
      Hparams([](GgufWriter& w) { w.U64("llama.attention.key_length", uint64_t{1} << 40); }));
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find(
                "llama.attention.key_length: 1099511627776 does not fit llama.cpp's 32-bit"),
            std::string::npos)
      << m.error().message;
  auto arr = ModelOf(Hparams([](GgufWriter& w) {
    w.Raw("llama.attention.head_count_kv", 9, [&](std::string& o) {
      w.Put<uint32_t>(o, 10);
      w.PutCount(o, 2);
      w.Put<uint64_t>(o, 1);
      w.Put<uint64_t>(o, UINT64_MAX);
    });
  }));
  ASSERT_FALSE(arr);
  EXPECT_NE(arr.error().message.find("attention.head_count_kv"), std::string::npos)
      << arr.error().message;
}

void ExpectError(const Result<LlamaCppEstimate>& e, const std::string& fragment) {
  ASSERT_FALSE(e) << "expected an error containing: " << fragment;
  EXPECT_NE(e.error().message.find(fragment), std::string::npos) << e.error().message;
}

TEST(HostileGguf, LlamaCppProductsThatOverflowAreErrors) {
  // Each of these wrapped silently in EstimateLlamaCpp before the fix (unsigned arithmetic: no
  // sanitizer report, just a wrong answer); the fuzzer's invariants recompute them in 128 bits.
  const uint64_t kMax32 = UINT32_MAX;
  // KV cache: 2^24 KV heads x key_length 2^24, f16, 4096 cells: 2^61 bytes of K and of V per
  // layer; four layers hold 2^63 + 2^63 bytes, which wrapped to 0 in the device's kv_bytes.
  GgufWriter kv_file;
  kv_file.Str("general.architecture", "llama")
      .U32("llama.block_count", 4)
      .U32("llama.context_length", 4096)
      .U32("llama.embedding_length", 64)
      .U32("llama.attention.head_count", 4)
      .U32("llama.attention.head_count_kv", 1u << 24)
      .U32("llama.attention.key_length", 1u << 24)
      .U32("llama.attention.value_length", 1u << 24);
  auto kv = ModelOf(kv_file);
  ASSERT_TRUE(kv) << kv.error().message;
  ExpectError(EstimateLlamaCpp(*kv, {}), "KV cache size of layer 3 overflows 64 bits");
  // Recurrent state: conv x (inner + 2 x groups x state).
  auto rs = ModelOf(Hparams([&](GgufWriter& w) {
    w.U32("llama.ssm.conv_kernel", 4)
        .U32("llama.ssm.state_size", kMax32)
        .U32("llama.ssm.group_count", kMax32)
        .U32("llama.ssm.inner_size", 8)
        .U32("llama.full_attention_interval", 2);
  }));
  ASSERT_TRUE(rs) << rs.error().message;
  ExpectError(EstimateLlamaCpp(*rs, {}), "recurrent state size of layer 0 overflows 64 bits");
  // Compute buffer: 4 x n_ubatch x (2 x n_embd + 3 x n_ff) with every term near 2^32 (and the
  // KQ mask, 2^32 cells x 2^32 tokens).
  auto compute = ModelOf(Hparams([&](GgufWriter& w) {
    w.U32("llama.attention.key_length", 1).U32("llama.attention.value_length", 1);
  }));
  ASSERT_TRUE(compute) << compute.error().message;
  compute->hp.hidden_size = compute->hp.layers[0].intermediate_size = kMax32;
  ExpectError(EstimateLlamaCpp(*compute, {.context_tokens = kMax32,
                                          .batch_tokens = kMax32,
                                          .ubatch_tokens = kMax32,
                                          .num_gpus = 1}),
              "compute buffer size");
  // Options: llama.cpp's n_ctx is 32-bit (Pad(2^64 - 1, 256) wrapped to 0), at most 256 sequences
  // and 16 CUDA devices (est.devices held one entry per requested GPU: --gpus 4294967295 asked for
  // ~0.5 TB).
  auto small = ModelOf(Hparams([](GgufWriter&) {}));
  ASSERT_TRUE(small) << small.error().message;
  ExpectError(EstimateLlamaCpp(*small, {.context_tokens = UINT64_MAX}),
              "llama.cpp's n_ctx is a 32-bit count");
  ExpectError(EstimateLlamaCpp(*small, {.ubatch_tokens = uint64_t{1} << 32}), "32-bit n_batch");
  ExpectError(EstimateLlamaCpp(*small, {.parallel = 257}), "at most 256 sequences");
  ExpectError(EstimateLlamaCpp(*small, {.num_gpus = UINT32_MAX}), "at most 16");
  // Output buffer: 4 x vocab x sequences. Without {arch}.vocab_size the vocabulary came from
  // token_embd's shape, any 64-bit value: 2^62 + 1 made 4 x vocab wrap to 4 bytes. Values beyond
  // llama.cpp's 32 bits are now ignored (llama.cpp takes the vocabulary from the tokenizer).
  GgufWriter no_vocab;
  no_vocab.Str("general.architecture", "llama")
      .U32("llama.block_count", 1)
      .U32("llama.context_length", 256)
      .U32("llama.embedding_length", 64)
      .U32("llama.attention.head_count", 4)
      .Tensor("token_embd.weight", {0, (uint64_t{1} << 62) + 1}, 0);
  auto nv = ModelOf(no_vocab);
  ASSERT_TRUE(nv) << nv.error().message;
  EXPECT_EQ(nv->hp.vocab_size, 0u);
  auto e = EstimateLlamaCpp(*nv, {});
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->host().output_bytes, 0u);
}

TEST(HostileGguf, FitMarginNear2To64DoesNotWrapIntoAFit) {
  // Found by fuzz/gguf_fuzz.cc ("a plan that fits overfills a GPU"): device total + margin wrapped
  // past 2^64, so an 8 EiB margin (-fitt) made every plan "fit" a 1 GiB GPU.
  auto m = ModelOf(Hparams([](GgufWriter&) {}));
  ASSERT_TRUE(m) << m.error().message;
  LlamaCppFitOptions fit;
  fit.gpu_bytes = {1ull << 30};
  fit.margin_bytes = {UINT64_MAX - 1};
  auto plan = FitLlamaCpp(*m, fit);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->fits);
}

TEST(HostileGguf, ReportsOfNonUtf8NamesAreValidJson) {
  // general.architecture, tensor names and the model name are bytes from the file or the command
  // line; the llama.cpp reports used nlohmann's dump(), which throws on invalid UTF-8 (a crash of
  // `memfit gguf inference --format json`, an internal error from the server).
  GgufWriter w;
  w.Str("general.architecture", "ll\xff\xfe")
      .U32("ll\xff\xfe.block_count", 1)
      .U32("ll\xff\xfe.context_length", 256)
      .U32("ll\xff\xfe.embedding_length", 32)
      .U32("ll\xff\xfe.attention.head_count", 2)
      .Tensor("blk.0.attn_q\xc3.weight", {32, 32}, 1);
  auto m = ModelOf(w);
  ASSERT_TRUE(m) << m.error().message;
  m->name = "model-\xe2\x82";
  auto e = EstimateLlamaCpp(*m, {});
  ASSERT_TRUE(e) << e.error().message;
  std::string json;
  ASSERT_NO_THROW(json = RenderLlamaCppEstimate(*m, *e, OutputFormat::kJson));
  EXPECT_TRUE(nlohmann::json::accept(json)) << json;
  auto plan = FitLlamaCpp(*m, {.gpu_bytes = {1ull << 34}});
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_NO_THROW(json = RenderLlamaCppFit(*m, *plan, "path-\xff.gguf", OutputFormat::kJson));
  EXPECT_TRUE(nlohmann::json::accept(json)) << json;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
