#pragma once
// Element types of stored tensors: every safetensors dtype string, plus the names torch and
// config.json use ("bfloat16", "float16", ...). GGUF's block-quantized types are separate
// (memfit/gguf.h); a tensor read from GGUF carries Dtype::kBlockQuantized and its own byte count.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "memfit/result.h"

namespace memfit {

enum class Dtype : uint8_t {
  kF64,
  kF32,
  kF16,
  kBF16,
  kF8E4M3,
  kF8E5M2,
  kF8E8M0,
  kF8E4M3Fnuz,
  kF8E5M2Fnuz,
  kF6E2M3,
  kF6E3M2,
  kF4,
  kC64,
  kI64,
  kI32,
  kI16,
  kI8,
  kU64,
  kU32,
  kU16,
  kU8,
  kBool,
  kBlockQuantized,  // GGUF block types: size comes from the block table, not bits per element
};

// Bits per element (safetensors/src/tensor.rs `bitsize`); 0 for kBlockQuantized.
uint32_t DtypeBits(Dtype dtype);
// The safetensors spelling: "F32", "BF16", "F8_E4M3", ... ("Q" for kBlockQuantized).
std::string_view DtypeName(Dtype dtype);
// Parses a safetensors dtype string; error for anything else.
Result<Dtype> ParseSafetensorsDtype(std::string_view name);
// Parses torch/config names: "float32", "fp16", "bfloat16", "float8_e4m3fn", "int8", ...
// and safetensors names. Used for --dtype flags and config.json "torch_dtype"/"dtype".
Result<Dtype> ParseDtypeName(std::string_view name);
// The torch spelling used in reports: "float32", "bfloat16", ...
std::string_view TorchDtypeName(Dtype dtype);
bool IsFloatingPoint(Dtype dtype);

// Bytes for `numel` elements of `dtype`, rounded up to whole bytes; nullopt on overflow.
std::optional<uint64_t> TensorBytes(uint64_t numel, Dtype dtype);

}  // namespace memfit
