// The cache's binary formats: round trips, and every malformed input a miss, never a crash.

#include "hub/net/cache_codec.h"

#include <gtest/gtest.h>

namespace memfit::hubnet {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

SafetensorsHeader SampleHeader() {
  SafetensorsHeader h;
  h.header_bytes = 120;
  h.data_bytes = 28;
  h.metadata["format"] = "pt";
  h.metadata["a"] = "b";
  h.tensors.push_back({"a.weight", Dtype::kBF16, {2, 3}, 0, 12});
  h.tensors.push_back({"b", Dtype::kF32, {3}, 12, 24});
  h.tensors.push_back({"c.scale", Dtype::kF8E4M3, {}, 24, 25});
  h.tensors.push_back({"d", Dtype::kBF16, {1, 1, 1, 1, 1, 1, 1, 1, 1, 3}, 25, 28});
  return h;
}

WeightIndex SampleIndex() {
  auto index = ParseWeightIndex(
      R"({"metadata": {"total_size": 1234}, "weight_map": {"z": "model-00002-of-00002.safetensors",
          "a": "model-00001-of-00002.safetensors", "m": "model-00001-of-00002.safetensors"}})",
      "index.json");
  EXPECT_TRUE(index);
  return *index;
}

TEST(CacheCodecTest, HeaderRoundTrip) {
  const SafetensorsHeader h = SampleHeader();
  auto back = DeserializeHeader(SerializeHeader(h));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->header_bytes, 120u);
  EXPECT_EQ(back->data_bytes, 28u);
  EXPECT_EQ(back->metadata, h.metadata);
  ASSERT_EQ(back->tensors.size(), h.tensors.size());
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    EXPECT_EQ(back->tensors[i].name, h.tensors[i].name);
    EXPECT_EQ(back->tensors[i].dtype, h.tensors[i].dtype);
    EXPECT_EQ(back->tensors[i].shape, h.tensors[i].shape);
    EXPECT_EQ(back->tensors[i].begin, h.tensors[i].begin);
    EXPECT_EQ(back->tensors[i].end, h.tensors[i].end);
  }
  EXPECT_TRUE(DeserializeHeader(SerializeHeader(SafetensorsHeader{})));
}

TEST(CacheCodecTest, IndexRoundTrip) {
  const WeightIndex index = SampleIndex();
  auto back = DeserializeIndex(SerializeIndex(index));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->total_size, index.total_size);
  EXPECT_EQ(back->weight_map, index.weight_map);
  EXPECT_EQ(back->shards(), index.shards());
  WeightIndex no_total = index;
  no_total.total_size.reset();
  auto back2 = DeserializeIndex(SerializeIndex(no_total));
  ASSERT_TRUE(back2);
  EXPECT_FALSE(back2->total_size);
}

// Truncations and single-byte changes: a miss or a value, never a crash (ASan/UBSan builds check
// the reads); truncations are always a miss.
template <typename Decode>
void Mangle(const std::string& bytes, Decode decode) {
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(decode(bytes.substr(0, n))) << n;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned char v : {0x00, 0x01, 0x7f, 0xff}) {
      std::string changed = bytes;
      changed[i] = static_cast<char>(v);
      (void)decode(changed);
    }
  }
  EXPECT_FALSE(decode(bytes + "x"));
}

TEST(CacheCodecTest, MalformedIsAMiss) {
  Mangle(SerializeHeader(SampleHeader()), [](std::string_view b) { return DeserializeHeader(b); });
  Mangle(SerializeIndex(SampleIndex()), [](std::string_view b) { return DeserializeIndex(b); });
  // The previous formats are misses too (their magic changed with them).
  EXPECT_FALSE(DeserializeHeader("MFSTHDR1" + SerializeHeader(SampleHeader()).substr(8)));
  EXPECT_FALSE(DeserializeIndex("MFWIDX01" + SerializeIndex(SampleIndex()).substr(8)));
}

TEST(CacheCodecTest, IndexInvariantsAreChecked) {
  const std::string good = SerializeIndex(SampleIndex());
  // Layout: magic 8, has_total 1, total 8, shard count 4, then the shards.
  const size_t entries_at = good.find(std::string("\x03\0\0\0\0\0\0\0", 8));
  ASSERT_NE(entries_at, std::string::npos);
  // Entries out of order: swap "a" and "m" (both shard 0, same lengths).
  std::string unsorted = good;
  const size_t a = unsorted.find("a", entries_at + 8), m = unsorted.find("m", a);
  ASSERT_NE(m, std::string::npos);
  std::swap(unsorted[a], unsorted[m]);
  EXPECT_FALSE(DeserializeIndex(unsorted));
  // A shard number past the table.
  std::string out_of_range = good;
  out_of_range[out_of_range.size() - 4] = '\x02';
  EXPECT_FALSE(DeserializeIndex(out_of_range));
  // A shard no entry names ("z" moved to shard 0).
  std::string unnamed = good;
  unnamed[unnamed.size() - 4] = '\x00';
  EXPECT_FALSE(DeserializeIndex(unnamed));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::hubnet
