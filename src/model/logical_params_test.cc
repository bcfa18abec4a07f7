// Logical parameters of tensors read from safetensors headers: shapes and names only.
#include "model/logical_params.h"
#include "formats/hf_config_json.h"

#include <gtest/gtest.h>

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

Tensor T(std::string name, std::vector<uint64_t> shape, Dtype dtype) {
  Tensor t{.name = std::move(name), .shape = std::move(shape), .dtype = dtype};
  t.numel = 1;
  for (uint64_t d : t.shape) t.numel *= d;
  t.bytes = (t.numel * DtypeBits(dtype) + 7) / 8;
  return t;
}

uint64_t Logical(const std::vector<Tensor>& ts, const std::string& name) {
  for (const auto& t : ts) {
    if (t.name == name) return LogicalParams(t);
  }
  ADD_FAILURE() << name;
  return 0;
}

// One [out 8, in 32] linear in each layout, as headers state it.
TEST(InferLogicalParams, EachPackedLayout) {
  std::vector<Tensor> ts = {
      // NVFP4: uint8 [8, 16], float8_e4m3 scale [8, 2], scalars.
      T("nv.weight", {8, 16}, Dtype::kU8), T("nv.weight_scale", {8, 2}, Dtype::kF8E4M3),
      T("nv.weight_scale_2", {}, Dtype::kF32), T("nv.input_scale", {}, Dtype::kF32),
      // MXFP4: blocks [1, 8, 1, 16], scales [1, 8, 1].
      T("mx.down_proj_blocks", {1, 8, 1, 16}, Dtype::kU8),
      T("mx.down_proj_scales", {1, 8, 1}, Dtype::kU8),
      // DeepSeek-V4 FP4: int8 [8, 16], float8_e8m0 scale [8, 1].
      T("v4.weight", {8, 16}, Dtype::kI8), T("v4.scale", {8, 1}, Dtype::kF8E8M0),
      // fp8 block: weight [8, 32], scale_inv [1, 1].
      T("f8.weight", {8, 32}, Dtype::kF8E4M3), T("f8.weight_scale_inv", {1, 1}, Dtype::kF32),
      // bitsandbytes 4-bit: [128, 1] bytes, absmax [4], quant_map [16], quant state.
      T("bnb.weight", {128, 1}, Dtype::kU8), T("bnb.weight.absmax", {4}, Dtype::kF32),
      T("bnb.weight.quant_map", {16}, Dtype::kF32),
      T("bnb.weight.quant_state.bitsandbytes__nf4", {75}, Dtype::kU8),
      // GPTQ 4-bit group 16: qweight [32/8, 8], qzeros [2, 1], scales [2, 8], g_idx [32].
      T("gptq.qweight", {4, 8}, Dtype::kI32), T("gptq.qzeros", {2, 1}, Dtype::kI32),
      T("gptq.scales", {2, 8}, Dtype::kF16), T("gptq.g_idx", {32}, Dtype::kI32),
      // AWQ 4-bit group 16: qweight [32, 8/8], qzeros [2, 1], scales [2, 8].
      T("awq.qweight", {32, 1}, Dtype::kI32), T("awq.qzeros", {2, 1}, Dtype::kI32),
      T("awq.scales", {2, 8}, Dtype::kF16),
      // compressed-tensors int4: weight_packed [8, 4], weight_scale [8, 2], weight_shape [2].
      T("ct.weight_packed", {8, 4}, Dtype::kI32), T("ct.weight_scale", {8, 2}, Dtype::kBF16),
      T("ct.weight_shape", {2}, Dtype::kI64),
      // Plain tensors keep their element count.
      T("norm.weight", {8}, Dtype::kBF16), T("plain.weight", {8, 32}, Dtype::kBF16),
  };
  const nlohmann::json qc = {
      {"config_groups", {{"group_0", {{"weights", {{"num_bits", 4}, {"type", "int"}}}}}}}};
  auto report = InferLogicalParams(ts, &qc);
  EXPECT_TRUE(report.assumptions.empty());
  ASSERT_EQ(report.notes.size(), 1u);
  for (const char* w : {"nv.weight", "v4.weight", "f8.weight", "gptq.qweight", "awq.qweight",
                        "ct.weight_packed", "plain.weight"}) {
    EXPECT_EQ(Logical(ts, w), 256u) << w;
  }
  EXPECT_EQ(Logical(ts, "mx.down_proj_blocks"), 256u);
  EXPECT_EQ(Logical(ts, "bnb.weight"), 256u);
  for (const char* s : {"nv.weight_scale", "nv.weight_scale_2", "nv.input_scale",
                        "mx.down_proj_scales", "v4.scale", "f8.weight_scale_inv",
                        "bnb.weight.absmax", "bnb.weight.quant_map",
                        "bnb.weight.quant_state.bitsandbytes__nf4", "gptq.qzeros", "gptq.scales",
                        "gptq.g_idx", "awq.qzeros", "awq.scales", "ct.weight_scale",
                        "ct.weight_shape"}) {
    EXPECT_EQ(Logical(ts, s), 0u) << s;
  }
  EXPECT_EQ(Logical(ts, "norm.weight"), 8u);
  // Bytes are untouched.
  EXPECT_EQ(ts[0].bytes, 128u);
}

// pack-quantized int32 words without a quantization_config: counted as stored, and said so.
TEST(InferLogicalParams, PackedIntWithoutBitsIsAnAssumption) {
  std::vector<Tensor> ts = {T("ct.weight_packed", {8, 4}, Dtype::kI32),
                            T("ct.weight_scale", {8, 2}, Dtype::kBF16)};
  auto report = InferLogicalParams(ts, nullptr);
  ASSERT_EQ(report.assumptions.size(), 1u);
  EXPECT_EQ(LogicalParams(ts[0]), 32u);
  EXPECT_EQ(LogicalParams(ts[1]), 0u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
