#include "memfit/safetensors.h"

#include <gtest/gtest.h>

#include "base/error_test_util.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::MakeSafetensors;
using testing::MakeSafetensorsRaw;

Result<SafetensorsHeader> Read(std::string bytes) {
  MemoryByteSource source(std::move(bytes), "x.safetensors");
  return ReadSafetensorsHeader(source);
}

std::string LittleEndian(uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

TEST(Safetensors, ReadsTensorsMetadataAndSizes) {
  auto header = Read(MakeSafetensors({{"a.weight", "F32", {2, 3}}, {"b", "BF16", {4}}, {"c", "I64", {}}},
                                     {{"format", "pt"}}));
  ASSERT_TRUE(header) << header.error().message;
  ASSERT_EQ(header->tensors.size(), 3u);
  EXPECT_EQ(header->tensors[0].name, "a.weight");
  EXPECT_EQ(header->tensors[0].bytes(), 24u);
  EXPECT_EQ(header->tensors[1].dtype, Dtype::kBF16);
  EXPECT_EQ(header->tensors[1].bytes(), 8u);
  EXPECT_EQ(header->tensors[2].bytes(), 8u);  // a scalar holds one element
  EXPECT_EQ(header->data_bytes, 40u);
  EXPECT_EQ(header->metadata.at("format"), "pt");
}

TEST(Safetensors, AcceptsEveryDtypeOfTheFormat) {
  for (const char* dtype : {"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2", "F8_E8M0",
                            "F8_E4M3FNUZ", "F8_E5M2FNUZ", "F6_E2M3", "F6_E3M2", "F4", "C64", "I64",
                            "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL"}) {
    auto header = Read(MakeSafetensors({{"t", dtype, {4, 8}}}));
    ASSERT_TRUE(header) << dtype << ": " << header.error().message;
    auto parsed = ParseSafetensorsDtype(dtype);
    ASSERT_TRUE(parsed);
    EXPECT_EQ(header->tensors[0].bytes(), 32u * DtypeBits(*parsed) / 8) << dtype;
  }
}

TEST(Safetensors, EmptyTensorsAndEmptyHeader) {
  auto header = Read(MakeSafetensors({{"empty", "F32", {0, 5}}, {"x", "F16", {2}}}));
  ASSERT_TRUE(header) << header.error().message;
  EXPECT_EQ(header->data_bytes, 4u);
  auto none = Read(MakeSafetensorsRaw("{}", 0));
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->tensors.empty());
}

// A tensor's header entry: "NAME": {"dtype": "DTYPE", "shape": SHAPE, "data_offsets": OFFSETS},
// SHAPE and OFFSETS as JSON texts.
std::string Entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
  return "\"" + name + "\": {\"dtype\": \"" + dtype + "\", \"shape\": " + shape +
         ", \"data_offsets\": " + offsets + "}";
}

// The header of these entries: {ENTRY, ENTRY, ...}.
std::string Header(const std::vector<std::string>& entries) {
  std::string out = "{";
  for (const std::string& e : entries) out += (out.size() > 1 ? ", " : "") + e;
  return out + "}";
}

void ExpectError(const std::string& bytes, const std::string& fragment) {
  auto header = Read(bytes);
  ASSERT_FALSE(header) << "expected an error containing: " << fragment;
  EXPECT_NE(header.error().message.find(fragment), std::string::npos) << header.error().message;
  EXPECT_EQ(header.error().message.find('\n'), std::string::npos);
  EXPECT_EQ(header.error().message.rfind("x.safetensors", 0), 0u) << header.error().message;
}

TEST(Safetensors, RejectsHostileInput) {
  ExpectError("", "too short");
  ExpectError("abc", "too short");
  ExpectError(LittleEndian(1000) + "{}", "exceeds file size");
  ExpectError(LittleEndian(~uint64_t{0} >> 1) + "{}", "exceeds the limit");
  ExpectError(LittleEndian(4) + "abcd", "not a JSON object");
}

// Headers a reader must refuse, the bytes of data after each, and a fragment of the error.
struct BadHeader {
  std::string header;
  uint64_t data_bytes;
  std::string error;
};

TEST(Safetensors, RejectsHostileHeaders) {
  const BadHeader cases[] = {
      {"{\"a\": 3}", 0, "expected an object"},
      {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]", 8, "invalid JSON"},
      {Header({Entry("a", "Q9", "[2]", "[0, 8]")}), 8, "unknown dtype \"Q9\""},
      {Header({Entry("a", "F32", "[-2]", "[0, 8]")}), 8, "negative"},
      {Header({Entry("a", "F32", "[2.5]", "[0, 8]")}), 8, "non-integer"},
      {Header({Entry("a", "F32", "[4294967296, 4294967296]", "[0, 8]")}), 8, "overflows"},
      {Header({Entry("a", "F32", "[2]", "[0, 8]"), Entry("a", "F32", "[2]", "[8, 16]")}), 16,
       "duplicate tensor \"a\""},
      {Header({Entry("a", "F32", "[2]", "[0, 12]")}), 12,
       "hold 12 bytes but shape and dtype need 8"},
      {Header({Entry("a", "F32", "[2]", "[8, 16]")}), 16, "a hole"},
      {Header({Entry("a", "F32", "[2]", "[0, 8]"), Entry("b", "F32", "[2]", "[4, 12]")}), 12,
       "an overlap"},
      {Header({Entry("a", "F32", "[2]", "[0, 8]")}), 20, "data buffer holds 20 bytes"},
      {Header({Entry("a", "F32", "[2]", "[0]")}), 8, "must hold 2 integers"},
      {R"({"a": {"dtype": "F32", "shape": [2]}})", 8, "missing \"data_offsets\""},
      {R"({"a": {"shape": [2], "data_offsets": [0, 8]}})", 8, "missing \"dtype\""},
      {R"({"__metadata__": {"k": 3}})", 0, "values must be strings"},
      {Header({Entry("a", "F4", "[3]", "[0, 2]")}), 2, "do not fill whole bytes"},
      {Header({Entry("a", "F32", "[[2]]", "[0, 8]")}), 8, "unexpected array"},
  };
  for (const BadHeader& c : cases) {
    SCOPED_TRACE(c.header);
    ExpectError(MakeSafetensorsRaw(c.header, c.data_bytes), c.error);
  }
}

TEST(Safetensors, TruncatedDataIsAnError) {
  std::string file = MakeSafetensors({{"a", "F32", {16}}});
  ExpectError(file.substr(0, file.size() - 4), "data buffer holds 60 bytes");
}

TEST(WeightIndex, ParsesTotalSizeAsIntegerOrFloat) {
  auto index = ParseWeightIndex(
      R"({"metadata": {"total_size": 1.6e10}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors", "c": "model-00001-of-00002.safetensors"}})",
      "index.json");
  ASSERT_TRUE(index) << index.error().message;
  EXPECT_EQ(*index->total_size, 16000000000u);
  EXPECT_EQ(index->shards().size(), 2u);
  auto empty = ParseWeightIndex(R"({"metadata": {}, "weight_map": {}})", "index.json");
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->total_size);
}

TEST(WeightIndex, RejectsBadIndexes) {
  EXPECT_FALSE(ParseWeightIndex(R"({"metadata": {"total_size": -1}, "weight_map": {}})", "i"));
  EXPECT_FALSE(ParseWeightIndex(R"({"metadata": {"total_size": "big"}, "weight_map": {}})", "i"));
  EXPECT_FALSE(ParseWeightIndex(R"({"metadata": {}})", "i"));
  EXPECT_FALSE(ParseWeightIndex(R"({"weight_map": {"a": 3}})", "i"));
  EXPECT_FALSE(ParseWeightIndex(R"({"weight_map": {"a": "../../etc/passwd"}})", "i"));
  auto dup = ParseWeightIndex(R"({"weight_map": {"a": "x", "a": "y"}})", "i");
  testing::ExpectErrorContains(dup, "duplicate key");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
