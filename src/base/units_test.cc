// Sizes and counts as memfit prints and parses them (include/memfit/units.h).

#include "memfit/units.h"

#include <gtest/gtest.h>

#include "base/error_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(FormatBytesTest, BinaryUnitsWithTwoDecimals) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.00 KiB");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(uint64_t{1} << 30), "1.00 GiB");
  EXPECT_EQ(FormatBytes(16'060'522'496), "14.96 GiB");  // Llama-3.1-8B in bfloat16
  EXPECT_EQ(FormatBytes(uint64_t{1} << 50), "1.00 PiB");
  EXPECT_EQ(FormatBytes(UINT64_MAX), "16384.00 PiB");  // no unit past PiB
}

TEST(FormatBytesAccelerateTest, PythonsRoundAndReprWithAcceleratesLabels) {
  EXPECT_EQ(FormatBytesAccelerate(0), "0.0 bytes");
  EXPECT_EQ(FormatBytesAccelerate(1023), "1023.0 bytes");
  EXPECT_EQ(FormatBytesAccelerate(1024), "1.0 KB");
  EXPECT_EQ(FormatBytesAccelerate(1024.0 * 1024 * 1.25), "1.25 MB");
  EXPECT_EQ(FormatBytesAccelerate(418'000'000), "398.64 MB");  // round(398.6358..., 2)
  EXPECT_EQ(FormatBytesAccelerate(1024.0 * 1024 * 1024 * 1024 * 1024 * 3), "3.0 PB");
}

TEST(ParseByteSizeTest, BinaryAndDecimalUnits) {
  EXPECT_EQ(*ParseByteSize("24GiB"), uint64_t{24} << 30);
  EXPECT_EQ(*ParseByteSize("24 GB"), 24'000'000'000u);
  EXPECT_EQ(*ParseByteSize("512MiB"), uint64_t{512} << 20);
  EXPECT_EQ(*ParseByteSize("1.5TiB"), uint64_t{3} << 39);
  EXPECT_EQ(*ParseByteSize("80000000000"), 80'000'000'000u);
  EXPECT_EQ(*ParseByteSize("80g"), uint64_t{80} << 30);
  EXPECT_EQ(*ParseByteSize(" 2 kib "), 2048u);
  EXPECT_EQ(*ParseByteSize("0"), 0u);
}

TEST(ParseByteSizeTest, SizesAbove2To63AreExact) {
  // Past a long long's range (llround would give 2^63 for both).
  EXPECT_EQ(*ParseByteSize("10000000000000000000"), 10'000'000'000'000'000'000u);
  EXPECT_EQ(*ParseByteSize("17000000TB"), 17'000'000'000'000'000'000u);
}

TEST(ParseByteSizeTest, ErrorsSayWhatIsWrong) {
  for (const char* bad : {"", "GiB", "-1", "1e3", "12XB", "1.2.3GiB"}) {
    auto parsed = ParseByteSize(bad);
    EXPECT_FALSE(parsed) << bad;
    if (!parsed) {
      EXPECT_TRUE(parsed.error().message.starts_with("size \"")) << parsed.error().message;
    }
  }
  auto huge = ParseByteSize("20000000000000000000");
  testing::ExpectErrorContains(huge, "out of range");
  EXPECT_FALSE(ParseByteSize("99999999999TiB"));
}

TEST(FormatCountTest, ThousandsWithTwoDecimals) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1000), "1.00K");
  EXPECT_EQ(FormatCount(108'300'000), "108.30M");
  EXPECT_EQ(FormatCount(8'030'261'248), "8.03B");
  EXPECT_EQ(FormatCount(671'000'000'000'000), "671.00T");
  EXPECT_EQ(FormatCount(UINT64_MAX), "18446744.07T");  // no unit past T
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
