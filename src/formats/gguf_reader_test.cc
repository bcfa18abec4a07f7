#include <filesystem>

#include <gtest/gtest.h>

#include "gguf_writer.h"
#include "memfit/gguf.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::GgufWriter;

Result<GgufFile> Parse(const std::string& bytes, size_t chunk = 1 << 20) {
  MemoryByteSource source(bytes, "t.gguf");
  return ReadGgufHeader(source, GgufLimits{.chunk_bytes = chunk});
}

GgufWriter EveryValueType(uint32_t version, bool big_endian) {
  GgufWriter w(version, big_endian);
  w.Str("general.architecture", "llama")
      .U8("u8", 200).I8("i8", -5).U16("u16", 60000).I16("i16", -300).U32("u32", 4000000000u)
      .I32("i32", -7).F32("f32", 1.5f).Bool("b", true).U64("u64", 1ull << 40).I64("i64", -(1ll << 40))
      .F64("f64", 0.25).U32Array("llama.feed_forward_length", {100, 200}).I32Array("ia", {-1, 2})
      .F32Array("fa", {0.5f, 2.0f}).BoolArray("ba", {true, false, true}).StrArray("sa", {"a", "", "ccc"});
  w.NestedU16Array("nested", {{1, 2}, {3}});  // [[1, 2], [3]] of uint16
  // Q4_K [256, 3]: 3 blocks of 144 bytes; F32 [5]; MXFP4 [64, 2]: 4 blocks of 17 bytes.
  w.Tensor("blk.0.w", {256, 3}, 12).Tensor("norm", {5}, 0).Tensor("e", {64, 2}, 39);
  return w;
}

void ExpectEveryValueType(const GgufFile& f) {
  EXPECT_EQ(f.Find("u8")->uint_value, 200u);
  EXPECT_EQ(f.Find("i8")->int_value, -5);
  EXPECT_EQ(f.Find("u16")->uint_value, 60000u);
  EXPECT_EQ(f.Find("i16")->int_value, -300);
  EXPECT_EQ(f.Find("u32")->uint_value, 4000000000u);
  EXPECT_EQ(f.Find("i32")->int_value, -7);
  EXPECT_EQ(f.Find("f32")->float_value, 1.5);
  EXPECT_EQ(f.Find("b")->AsBool(), true);
  EXPECT_EQ(f.Find("u64")->uint_value, 1ull << 40);
  EXPECT_EQ(f.Find("i64")->int_value, -(1ll << 40));
  EXPECT_EQ(f.Find("f64")->float_value, 0.25);
  EXPECT_EQ(f.Find("llama.feed_forward_length")->AsUintArray(), (std::vector<uint64_t>{100, 200}));
  EXPECT_EQ(f.Find("ia")->ints, (std::vector<int64_t>{-1, 2}));
  EXPECT_FALSE(f.Find("ia")->AsUintArray());  // negative element
  EXPECT_EQ(f.Find("fa")->floats, (std::vector<double>{0.5, 2.0}));
  EXPECT_EQ(f.Find("ba")->AsUintArray(), (std::vector<uint64_t>{1, 0, 1}));
  EXPECT_EQ(f.Find("sa")->strings, (std::vector<std::string>{"a", "", "ccc"}));
  const GgufValue* nested = f.Find("nested");
  ASSERT_EQ(nested->nested.size(), 2u);
  EXPECT_EQ(nested->nested[0].uints, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(nested->nested[1].uints, (std::vector<uint64_t>{3}));
  ASSERT_EQ(f.tensors.size(), 3u);
  EXPECT_EQ(f.tensors[0].bytes, 3u * 144);
  EXPECT_EQ(f.tensors[0].type->name, "Q4_K");
  EXPECT_EQ(f.tensors[1].bytes, 20u);
  EXPECT_EQ(f.tensors[1].offset, 448u);  // 432 rounded up to 32
  EXPECT_EQ(f.tensors[2].bytes, 68u);
  EXPECT_EQ(f.tensors[2].offset, 480u);
  EXPECT_EQ(f.tensor_bytes, 432u + 20 + 68);
  EXPECT_EQ(f.data_offset % 32, 0u);
}

TEST(GgufReader, EveryVersionByteOrderAndValueType) {
  for (uint32_t version : {1u, 2u, 3u}) {
    for (bool big : {false, true}) {
      SCOPED_TRACE(fmt::format("v{} {}", version, big ? "BE" : "LE"));
      std::string bytes = EveryValueType(version, big).Build();
      for (size_t chunk : {size_t{64}, size_t{1} << 20}) {  // chunk boundaries everywhere
        auto f = Parse(bytes, chunk);
        ASSERT_TRUE(f) << f.error().message;
        EXPECT_EQ(f->version, version);
        EXPECT_EQ(f->big_endian, big);
        ExpectEveryValueType(*f);
      }
    }
  }
}

TEST(GgufReader, GeneralAlignment) {
  GgufWriter w;
  w.U32("general.alignment", 64);
  w.set_alignment_for_offsets(64);
  w.Tensor("a", {32}, 0).Tensor("b", {8}, 1);
  auto f = Parse(w.Build());
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->alignment, 64u);
  EXPECT_EQ(f->tensors[1].offset, 128u);
  EXPECT_EQ(f->data_offset % 64, 0u);

  GgufWriter bad;
  bad.U32("general.alignment", 48);
  EXPECT_NE(Parse(bad.Build()).error().message.find("not a power of two"), std::string::npos);
  GgufWriter wrong_type;
  wrong_type.U64("general.alignment", 32);
  EXPECT_NE(Parse(wrong_type.Build()).error().message.find("must be a uint32"), std::string::npos);
}

TEST(GgufReader, VocabOnlyFileEndsWithoutPadding) {
  GgufWriter w;
  w.Str("general.architecture", "llama").StrArray("tokenizer.ggml.tokens", {"a", "bb"});
  std::string bytes = w.Build();
  auto f = Parse(bytes);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->data_offset, bytes.size());
  EXPECT_EQ(f->header_bytes, bytes.size());
  EXPECT_TRUE(f->tensors.empty());
}

TEST(GgufReader, EveryGgmlTypeSize) {
  // bytes of a [block * 2, 3] tensor = 6 blocks.
  for (const auto& t : GgmlTypes()) {
    GgufWriter w;
    w.Tensor("x", {uint64_t{t.block_elements} * 2, 3}, t.id);
    auto f = Parse(w.Build());
    ASSERT_TRUE(f) << t.name << ": " << f.error().message;
    EXPECT_EQ(f->tensors[0].bytes, 6ull * t.block_bytes) << t.name;
  }
  // Hand-checked bits per weight from ggml-common.h: Q4_K 4.5, Q6_K 6.5625, MXFP4 4.25.
  EXPECT_EQ(FindGgmlType(12)->block_bytes * 8.0 / FindGgmlType(12)->block_elements, 4.5);
  EXPECT_EQ(FindGgmlType(14)->block_bytes * 8.0 / FindGgmlType(14)->block_elements, 6.5625);
  EXPECT_EQ(FindGgmlTypeByName("mxfp4")->block_bytes * 8.0 / 32, 4.25);
  EXPECT_EQ(FindGgmlType(4), nullptr);
  EXPECT_EQ(FindGgmlType(43), nullptr);
}

std::string WithTensor(const std::string& name, std::vector<uint64_t> dims, uint32_t type,
                       std::optional<uint64_t> offset = std::nullopt) {
  GgufWriter w;
  w.Tensor(name, std::move(dims), type, offset);
  return w.Header() + std::string(64, '\0');
}

// `v`'s bytes as GgufWriter puts them (little-endian).
template <typename T>
std::string Bytes(T v) {
  std::string out;
  GgufWriter().Put<T>(out, v);
  return out;
}

// A file whose one key "k" is of value type `type` and holds the bytes `value`.
std::string WithRawKey(uint32_t type, const std::string& value) {
  GgufWriter w;
  w.Raw("k", type, [&](std::string& o) { o += value; });
  return w.Build();
}

void ExpectError(const Result<GgufFile>& f, std::string_view text) {
  ASSERT_FALSE(f) << "expected an error containing: " << text;
  EXPECT_NE(f.error().message.find(text), std::string::npos) << f.error().message;
  EXPECT_EQ(f.error().message.find('\n'), std::string::npos);
}

TEST(GgufReader, HostileHeaders) {
  ExpectError(Parse("GGU"), "too short");
  ExpectError(Parse(std::string("GGML\3\0\0\0xxxxxxxxxxxxxxxx", 24)), "magic");
  ExpectError(Parse(std::string("GGUF\x04\0\0\0", 8) + std::string(16, '\0')), "unsupported GGUF version 4");
  // tensor_count / kv_count larger than the file could hold.
  ExpectError(Parse("GGUF" + Bytes<uint32_t>(3) + Bytes<uint64_t>(0) + Bytes<uint64_t>(1ull << 19)),
              "cannot fit");
  ExpectError(Parse("GGUF" + Bytes<uint32_t>(3) + Bytes<uint64_t>(~0ull) + Bytes<uint64_t>(0)),
              "exceeds the limit");
  // A string length beyond the file.
  ExpectError(Parse(WithRawKey(8, Bytes<uint64_t>(1ull << 62))), "exceeds the limit");
  ExpectError(Parse(WithRawKey(8, Bytes<uint64_t>(1000))), "bytes left");
  // An array claiming 2^40 elements.
  ExpectError(Parse(WithRawKey(9, Bytes<uint32_t>(4) + Bytes<uint64_t>(1ull << 27))),
              "cannot fit");
  ExpectError(Parse(WithRawKey(9, Bytes<uint32_t>(13) + Bytes<uint64_t>(0))),
              "unknown array element type 13");
  ExpectError(Parse(WithRawKey(13, "")), "unknown value type 13");
  ExpectError(Parse(WithRawKey(7, Bytes<uint8_t>(2))), "bool value 2");
  // Arrays nested too deep.
  std::string deep;
  for (int i = 0; i < 20; ++i) deep += Bytes<uint32_t>(9) + Bytes<uint64_t>(1);
  ExpectError(Parse(WithRawKey(9, deep + Bytes<uint32_t>(0) + Bytes<uint64_t>(0))),
              "nested deeper");
  // Duplicates.
  GgufWriter dk;
  dk.U32("a", 1).U32("a", 2);
  ExpectError(Parse(dk.Build()), "duplicate key \"a\"");
  GgufWriter dt;
  dt.Tensor("x", {4}, 0).Tensor("x", {4}, 0);
  ExpectError(Parse(dt.Build()), "duplicate tensor \"x\"");
  // Tensor infos.
  ExpectError(Parse(WithTensor(std::string(64, 'n'), {4}, 0)), "limit of 63 bytes");
  ExpectError(Parse(WithTensor("x", {1, 1, 1, 1, 1}, 0)), "5 dimensions");
  ExpectError(Parse(WithTensor("x", {32}, 4)), "unknown ggml type id 4");
  ExpectError(Parse(WithTensor("x", {32}, 99)), "unknown ggml type id 99");
  ExpectError(Parse(WithTensor("x", {100}, 12)), "not a multiple of the Q4_K block size 256");
  ExpectError(Parse(WithTensor("x", {1ull << 32, 1ull << 32}, 0)), "overflows");
  ExpectError(Parse(WithTensor("x", {~0ull}, 0)), "negative");
  ExpectError(Parse(WithTensor("x", {4}, 0, 8)), "not a multiple of the alignment");
  ExpectError(Parse(WithTensor("x", {4}, 0, 4096)), "past the end of the data section");
  GgufWriter ov;
  ov.Tensor("a", {64}, 0, 0).Tensor("b", {64}, 0, 128);
  ExpectError(Parse(ov.Build()), "overlaps");
  // Truncated anywhere: every prefix of a valid file fails cleanly.
  std::string good = EveryValueType(3, false).Build();
  for (size_t n = 0; n < good.size(); n += 7) {
    auto f = Parse(good.substr(0, n));
    if (f) {
      // Only possible once the header is complete and the data section is what is cut.
      ADD_FAILURE() << "prefix of " << n << " bytes parsed";
    }
  }
}

// The real vocab-only files from llama.cpp's models/ (../shared/eval/gguf, see its README).
TEST(GgufReader, RealVocabOnlyFiles) {
  auto eval = testing::EvalDir();
  if (!eval || !std::filesystem::exists(*eval + "/gguf/ggml-vocab-llama-spm.gguf")) {
    GTEST_SKIP() << "shared/eval/gguf not available";
  }
  struct Expect {
    const char* file;
    uint64_t bytes, n_kv, tokens;
    const char* arch;
  };
  // Sizes, key counts and vocabularies from docs/reference/gguf-and-llamacpp.md section 5.
  for (const Expect& e : {Expect{"ggml-vocab-llama-spm.gguf", 723869, 22, 32000, "llama"},
                          Expect{"ggml-vocab-phi-3.gguf", 726019, 26, 32064, "phi3"},
                          Expect{"ggml-vocab-bert-bge.gguf", 627549, 20, 30522, "bert"},
                          Expect{"ggml-vocab-gpt-2.gguf", 1766807, 16, 50257, "gpt2"}}) {
    SCOPED_TRACE(e.file);
    auto source = OpenFileByteSource(*eval + "/gguf/" + e.file);
    auto f = ReadGgufHeader(*source, GgufLimits{.chunk_bytes = 4096});
    ASSERT_TRUE(f) << f.error().message;
    EXPECT_EQ(f->version, 3u);
    EXPECT_FALSE(f->big_endian);
    EXPECT_EQ(f->file_bytes, e.bytes);
    EXPECT_EQ(f->metadata.size(), e.n_kv);
    EXPECT_EQ(f->data_offset, e.bytes);  // ends right after the last key/value
    EXPECT_TRUE(f->tensors.empty());
    EXPECT_EQ(f->GetString("general.architecture"), e.arch);
    EXPECT_EQ(f->Find("tokenizer.ggml.tokens")->strings.size(), e.tokens);
  }
}

TEST(GgufSplit, ParsesAndFormatsNames) {
  auto s = ParseGgufSplitName("/m/Qwen2.5-7B-Q8_0-00002-of-00003.gguf");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->prefix, "/m/Qwen2.5-7B-Q8_0");
  EXPECT_EQ(s->index, 2u);
  EXPECT_EQ(s->count, 3u);
  EXPECT_EQ(GgufSplitPath(s->prefix, 1, 3), "/m/Qwen2.5-7B-Q8_0-00001-of-00003.gguf");
  EXPECT_FALSE(ParseGgufSplitName("model.gguf"));
  EXPECT_FALSE(ParseGgufSplitName("m-00004-of-00003.gguf"));
  EXPECT_FALSE(ParseGgufSplitName("m-0000a-of-00003.gguf"));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
