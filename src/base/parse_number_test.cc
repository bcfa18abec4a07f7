// ParseDecimalDouble (base/parse_number.h): std::from_chars' rules for doubles on every toolchain.

#include "base/parse_number.h"

#include <gtest/gtest.h>

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(ParseDecimalDoubleTest, PlainDecimals) {
  EXPECT_EQ(ParseDecimalDouble("12"), 12.0);
  EXPECT_EQ(ParseDecimalDouble("-0.5"), -0.5);
  EXPECT_EQ(ParseDecimalDouble(".5"), 0.5);
  EXPECT_EQ(ParseDecimalDouble("3."), 3.0);
  EXPECT_EQ(ParseDecimalDouble("1e-3"), 0.001);
  EXPECT_EQ(ParseDecimalDouble("2.5E+2"), 250.0);
}

TEST(ParseDecimalDoubleTest, RejectsWhatFromCharsRejects) {
  for (const char* text : {"", "+1", " 1", "1 ", "0x10", "inf", "nan", ".", "-", "1e", "1e+",
                           "1.2.3", "1,5", "e5"}) {
    EXPECT_FALSE(ParseDecimalDouble(text).has_value()) << text;
  }
  EXPECT_FALSE(ParseDecimalDouble(std::string(401, '1')).has_value());  // no huge copies
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
