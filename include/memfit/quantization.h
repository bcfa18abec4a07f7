#pragma once
// Quantized weights: exact bytes of real quantization schemes (bitsandbytes LLM.int8 and 4-bit,
// GPTQ, AWQ, FP8, MXFP4, HQQ) and the modules each leaves unquantized. Pure; see
// docs/estimates.md, "Quantization".

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/dtype.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit {

enum class QuantScheme : uint8_t {
  // No re-quantization: tensors the checkpoint stores quantized (FP8, NVFP4, MXFP4, GPTQ, ...;
  // memfit/stored_format.h) keep their stored bytes unless QuantOptions::dequantize_stored; every
  // other floating tensor at QuantOptions::compute_dtype.
  kNone,
  kBnbInt8,     // bitsandbytes LLM.int8: int8 weight + fp32 per-row scale (SCB)
  kBnbNf4,      // bitsandbytes 4-bit NF4, block 64 (double quant optional)
  kBnbFp4,      // bitsandbytes 4-bit FP4, block 64 (double quant optional)
  kGptq,        // packed int32 qweight, qzeros, fp16 scales per group, int32 g_idx
  kAwq,         // packed int32 qweight, qzeros, fp16 scales per group
  kFp8,         // FP8 E4M3 weight + one fp32 scale per tensor (+ static input scale)
  kFp8Block,    // FP8 E4M3 weight + fp32 scale per 128x128 block (DeepSeek-V3 style)
  kMxfp4,       // OCP MXFP4: 32-element blocks of 4-bit values + one E8M0 scale byte
  kHqq,         // HQQ: packed n-bit weight + fp16 scale and zero per group
  kPlainInt8,   // accelerate's what-if: every floating parameter at 1 byte, nothing kept
  kPlainInt4,   // accelerate's what-if: every floating parameter at 0.5 byte
};
std::string_view QuantSchemeName(QuantScheme scheme);
// "stored" (also "" and "auto": the checkpoint's own quantization), "none" (dequantize what is
// stored quantized: everything at the compute dtype), "bnb-int8" (also "int8-bnb", "llm.int8"),
// "nf4", "fp4", "nf4-dq", "fp4-dq", "gptq", "awq", "fp8", "fp8-block", "mxfp4", "hqq", "int8",
// "int4". "-dq" sets double_quant. Any scheme but stored/none re-quantizes the floating weights,
// FP8-stored ones included.
struct QuantOptions;
Result<QuantOptions> ParseQuant(std::string_view name);

struct QuantOptions {
  QuantScheme scheme = QuantScheme::kNone;
  Dtype compute_dtype = Dtype::kBF16;  // dtype of everything left unquantized
  bool double_quant = false;           // bnb 4-bit: 8-bit absmax, second-level block 256
  uint32_t bits = 4;                   // GPTQ / AWQ / HQQ
  uint64_t group_size = 128;           // GPTQ / AWQ (0 = one group per row); HQQ uses 64
  uint64_t fp8_block = 128;            // kFp8Block
  // Quantize the task head (lm_head) too. Off for every scheme here: bnb skips the output
  // embedding (get_keys_to_not_convert), GPTQ/AWQ/FP8 checkpoints keep lm_head in 16-bit.
  bool quantize_head = false;
  // kNone only: dequantize what the checkpoint stores quantized to compute_dtype ("--quant none",
  // or an engine that cannot run the stored format on the GPU). Packed integer formats are
  // unpacked at their bits per value (4 for MXFP4/NVFP4/bnb 4-bit, "bits" for GPTQ/AWQ).
  bool dequantize_stored = false;
};

// The totals of quantized weights: what an estimate keeps (not the bytes of every tensor).
struct QuantizedWeightsSummary {
  uint64_t total_bytes = 0;        // resident weights and buffers
  uint64_t quantized_params = 0;   // elements stored quantized
  uint64_t quantized_bytes = 0;    // their bytes incl. scales, zeros, indices
  uint64_t kept_params = 0;        // floating parameters left at compute_dtype
  uint64_t kept_bytes = 0;
  uint64_t other_bytes = 0;        // integer tensors and buffers at their stored size
  // Tensors kept as the checkpoint stores them quantized (data, scales, zeros; in total_bytes and
  // in other_bytes): 0 when nothing is stored quantized or it was dequantized / re-quantized.
  uint64_t stored_quantized_bytes = 0;
  std::string stored_format;       // StoredFormatName of the checkpoint ("none" when plain)
  uint64_t largest_linear_params = 0;  // for dequantization transients
  std::vector<std::string> notes;  // what stayed unquantized and why
};

struct QuantizedWeights : QuantizedWeightsSummary {
  // Bytes of each of model.tensors under the scheme, in order (0 for tied duplicates): what the
  // fit planner places per block.
  std::vector<uint64_t> tensor_bytes;
};

// Bytes of one quantized linear weight of shape [out, in] under `options`; nullopt on overflow.
// For 3-D expert stacks pass out = experts * out.
std::optional<uint64_t> QuantizedLinearBytes(uint64_t out, uint64_t in, const QuantOptions& options);

Result<QuantizedWeights> EstimateQuantizedWeights(const Model& model, const QuantOptions& options);

}  // namespace memfit
