#pragma once
// What a checkpoint stores quantized (FP8 per-tensor or block, NVFP4, MXFP4, compressed-tensors,
// GPTQ/AWQ, bitsandbytes), which tensors belong to it, and what an engine does with it on a GPU of
// a given compute capability: keep it as stored, or dequantize it to the compute dtype. Pure; see
// docs/estimates.md, "Weights as stored".

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/engine.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit {

enum class StoredFormat : uint8_t {
  kNone,      // nothing stored below 16 bits
  kFp8,       // FP8 E4M3, one scale per tensor or channel (quant_method "fp8" without blocks)
  kFp8Block,  // FP8 E4M3 with 128x128 block scales (DeepSeek-V3, Qwen3-FP8)
  kNvfp4,     // NVIDIA ModelOpt NVFP4: packed 4-bit + FP8 scale per 16 + fp32 global scale
  kMxfp4,     // OCP MXFP4 (gpt-oss): 4-bit blocks of 32 + E8M0 scale
  kCompressedTensors,  // llm-compressor "compressed-tensors" (FP8, INT8, INT4 packed)
  kGptq,
  kAwq,
  kBnbInt8,
  kBnb4Bit,
  kMlx,    // mlx-lm / mlx-vlm: uint32 words with scales (and biases) per group (MLX block)
  kOther,  // low-bit tensors whose format the config does not name
};
std::string_view StoredFormatName(StoredFormat format);  // "fp8-block", "nvfp4", ...

struct StoredQuantization {
  StoredFormat format = StoredFormat::kNone;
  // Per model.tensors: part of the stored quantization (the low-bit data and the scales, zeros
  // and indices of the same module); biases are not.
  std::vector<bool> quantized;
  uint64_t quantized_bytes = 0;  // their stored bytes, loaded tensors only
  uint64_t tensors = 0;
};
// From config.json "quantization_config" (quant_method, weight_block_size, quant_algo) and the
// tensors (a uint32 `<m>.weight` beside `<m>.scales`: MLX, when no quant_method names another): a
// tensor stored in FP8/FP6/FP4 or as an integer parameter is quantized data, and so is every other
// tensor of its module except the bias.
StoredQuantization DetectStoredQuantization(const Model& model);

// What the engine loads the stored format as on a GPU of compute capability `cc` (major x 10 +
// minor, e.g. 90 for H100; 0 = unknown, taken as able). kKeep: the stored bytes; kDequantize: the
// quantized weights at the compute dtype. An error when the engine refuses the format on that GPU
// (vLLM's get_min_capability). `assumptions` gets one line saying which and why.
enum class StoredHandling : uint8_t { kKeep, kDequantize };
Result<StoredHandling> HandleStoredFormat(StoredFormat format, Engine engine, uint32_t cc,
                                          std::vector<std::string>& assumptions);

}  // namespace memfit
