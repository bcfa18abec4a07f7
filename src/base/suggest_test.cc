#include "memfit/suggest.h"

#include <gtest/gtest.h>

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(SuggestTest, EditDistanceByHand) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("rtx4900", "rtx4090"), 1u);   // a transposition
  EXPECT_EQ(EditDistance("VLLM", "vllm"), 0u);         // case-insensitive
  EXPECT_EQ(EditDistance("contxt", "context"), 1u);    // a letter left out
}

TEST(SuggestTest, ClosestMatchWithinAThirdOfTheWord) {
  const std::vector<std::string> engines = {"transformers", "vllm", "sglang", "llama.cpp"};
  EXPECT_EQ(ClosestMatch("vlm", engines), "vllm");
  EXPECT_EQ(ClosestMatch("sglan", engines), "sglang");
  EXPECT_EQ(ClosestMatch("pytorch", engines), "");  // nothing close: no guess
  EXPECT_EQ(DidYouMean("vlm", engines), " (did you mean vllm?)");
  EXPECT_EQ(DidYouMean("zzzzzz", engines), "");
  EXPECT_EQ(ClosestMatch("x", {}), "");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
