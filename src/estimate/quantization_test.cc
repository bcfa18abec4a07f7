#include <gtest/gtest.h>

#include "memfit/quantization.h"
#include "model/tensor_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

QuantOptions Q(QuantScheme s) { return QuantOptions{.scheme = s}; }

TEST(QuantizationTest, LinearBytesPerScheme) {
  const uint64_t n = 4096ull * 4096;  // 16777216 elements
  // LLM.int8: 1 byte each + fp32 scale per output row.
  EXPECT_EQ(*QuantizedLinearBytes(4096, 4096, Q(QuantScheme::kBnbInt8)), n + 4096 * 4);
  // NF4: n/2 packed + fp32 absmax per 64 (262144 blocks) + 16-entry fp32 code = 4.5 bits.
  EXPECT_EQ(*QuantizedLinearBytes(4096, 4096, Q(QuantScheme::kBnbNf4)), n / 2 + 262144 * 4 + 64);
  // Double quant: uint8 absmax + fp32 per 256 absmax (1024) + fp32 offset = ~4.127 bits.
  QuantOptions dq = Q(QuantScheme::kBnbNf4);
  dq.double_quant = true;
  EXPECT_EQ(*QuantizedLinearBytes(4096, 4096, dq), n / 2 + 262144 + 1024 * 4 + 4 + 64);
  // GPTQ 4-bit g128: qweight n/2, qzeros 32 groups x 4096/8 int32, fp16 scales 32 x 4096,
  // g_idx 4096 int32.
  EXPECT_EQ(*QuantizedLinearBytes(4096, 4096, Q(QuantScheme::kGptq)),
            n / 2 + 32 * 512 * 4 + 32 * 4096 * 2 + 4096 * 4);
  EXPECT_EQ(*QuantizedLinearBytes(4096, 4096, Q(QuantScheme::kAwq)),
            n / 2 + 32 * 512 * 4 + 32 * 4096 * 2);
  EXPECT_EQ(*QuantizedLinearBytes(4096, 4096, Q(QuantScheme::kFp8)), n + 8);
  // 128x128 blocks: 32 x 32 fp32 scales.
  EXPECT_EQ(*QuantizedLinearBytes(4096, 4096, Q(QuantScheme::kFp8Block)), n + 32 * 32 * 4);
  // MXFP4: 17 bytes per 32 values (4.25 bits).
  EXPECT_EQ(*QuantizedLinearBytes(4096, 4096, Q(QuantScheme::kMxfp4)), n / 32 * 17);
  // HQQ 4-bit g64: n/2 + fp16 scale and zero per 64.
  QuantOptions hqq = Q(QuantScheme::kHqq);
  hqq.group_size = 64;
  EXPECT_EQ(*QuantizedLinearBytes(4096, 4096, hqq), n / 2 + n / 64 * 4);
  EXPECT_EQ(*QuantizedLinearBytes(4096, 4096, Q(QuantScheme::kPlainInt4)), n / 2);
}

TEST(QuantizationTest, EmbeddingsHeadNormsAndBiasesStayUnquantized) {
  QuantOptions o = Q(QuantScheme::kBnbInt8);
  auto w = EstimateQuantizedWeights(testing::TinyBf16Lm(), o);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->quantized_params, 4096u);
  EXPECT_EQ(w->quantized_bytes, 4096u + 64 * 4);
  // bf16: embed 6400 + bias 64 + norm 64 + head 6400 elements.
  EXPECT_EQ(w->kept_bytes, (6400u + 64 + 64 + 6400) * 2);
  EXPECT_EQ(w->total_bytes, w->quantized_bytes + w->kept_bytes);
  EXPECT_FALSE(w->notes.empty());
  // accelerate's plain int8 quantizes everything: 1 byte per element.
  auto plain = EstimateQuantizedWeights(testing::TinyBf16Lm(), Q(QuantScheme::kPlainInt8));
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->total_bytes, 6400u + 4096 + 64 + 64 + 6400);
}

TEST(QuantizationTest, ParseNames) {
  EXPECT_EQ(ParseQuant("nf4-dq")->scheme, QuantScheme::kBnbNf4);
  EXPECT_TRUE(ParseQuant("nf4-dq")->double_quant);
  EXPECT_EQ(ParseQuant("gptq-8bit")->bits, 8u);
  EXPECT_FALSE(ParseQuant("q4_k").has_value());
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
