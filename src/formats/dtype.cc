#include "memfit/dtype.h"

#include <array>
#include <cctype>

#include "memfit/checked_math.h"

namespace memfit {
namespace {

struct DtypeRow {
  Dtype dtype;
  std::string_view safetensors;  // safetensors spelling
  std::string_view torch;        // torch spelling
  uint32_t bits;
  bool floating;
};

// safetensors/src/tensor.rs `Dtype` and `bitsize`; torch names from torch.dtype's repr.
constexpr std::array<DtypeRow, 23> kDtypes = {{
    {Dtype::kF64, "F64", "float64", 64, true},
    {Dtype::kF32, "F32", "float32", 32, true},
    {Dtype::kF16, "F16", "float16", 16, true},
    {Dtype::kBF16, "BF16", "bfloat16", 16, true},
    {Dtype::kF8E4M3, "F8_E4M3", "float8_e4m3fn", 8, true},
    {Dtype::kF8E5M2, "F8_E5M2", "float8_e5m2", 8, true},
    {Dtype::kF8E8M0, "F8_E8M0", "float8_e8m0fnu", 8, true},
    {Dtype::kF8E4M3Fnuz, "F8_E4M3FNUZ", "float8_e4m3fnuz", 8, true},
    {Dtype::kF8E5M2Fnuz, "F8_E5M2FNUZ", "float8_e5m2fnuz", 8, true},
    {Dtype::kF6E2M3, "F6_E2M3", "float6_e2m3", 6, true},
    {Dtype::kF6E3M2, "F6_E3M2", "float6_e3m2", 6, true},
    {Dtype::kF4, "F4", "float4_e2m1", 4, true},
    {Dtype::kC64, "C64", "complex64", 64, true},
    {Dtype::kI64, "I64", "int64", 64, false},
    {Dtype::kI32, "I32", "int32", 32, false},
    {Dtype::kI16, "I16", "int16", 16, false},
    {Dtype::kI8, "I8", "int8", 8, false},
    {Dtype::kU64, "U64", "uint64", 64, false},
    {Dtype::kU32, "U32", "uint32", 32, false},
    {Dtype::kU16, "U16", "uint16", 16, false},
    {Dtype::kU8, "U8", "uint8", 8, false},
    {Dtype::kBool, "BOOL", "bool", 8, false},
    {Dtype::kBlockQuantized, "Q", "quantized", 0, false},
}};

const DtypeRow& Row(Dtype dtype) {
  for (const auto& row : kDtypes) {
    if (row.dtype == dtype) return row;
  }
  return kDtypes[1];
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

uint32_t DtypeBits(Dtype dtype) { return Row(dtype).bits; }
std::string_view DtypeName(Dtype dtype) { return Row(dtype).safetensors; }
std::string_view TorchDtypeName(Dtype dtype) { return Row(dtype).torch; }
bool IsFloatingPoint(Dtype dtype) { return Row(dtype).floating; }

Result<Dtype> ParseSafetensorsDtype(std::string_view name) {
  for (const auto& row : kDtypes) {
    if (row.dtype != Dtype::kBlockQuantized && row.safetensors == name) return row.dtype;
  }
  return MakeError("unknown dtype \"{}\"", name);
}

Result<Dtype> ParseDtypeName(std::string_view name) {
  std::string lower = Lower(name);
  if (lower.starts_with("torch.")) lower = lower.substr(6);
  struct Alias {
    std::string_view name;
    Dtype dtype;
  };
  static constexpr Alias kAliases[] = {
      {"fp32", Dtype::kF32},   {"float", Dtype::kF32},      {"fp16", Dtype::kF16},
      {"half", Dtype::kF16},   {"bf16", Dtype::kBF16},      {"fp64", Dtype::kF64},
      {"double", Dtype::kF64}, {"fp8", Dtype::kF8E4M3},     {"float8", Dtype::kF8E4M3},
      {"fp8_e4m3", Dtype::kF8E4M3}, {"fp8_e5m2", Dtype::kF8E5M2}, {"long", Dtype::kI64},
      {"int", Dtype::kI32},
  };
  for (const auto& alias : kAliases) {
    if (alias.name == lower) return alias.dtype;
  }
  for (const auto& row : kDtypes) {
    if (row.dtype == Dtype::kBlockQuantized) continue;
    if (row.torch == lower || Lower(row.safetensors) == lower) return row.dtype;
  }
  return MakeError("unknown dtype \"{}\"", name);
}

std::optional<uint64_t> TensorBytes(uint64_t numel, Dtype dtype) {
  auto bits = CheckedMul(numel, DtypeBits(dtype));
  if (!bits) return std::nullopt;
  return *bits / 8 + (*bits % 8 != 0 ? 1 : 0);
}

}  // namespace memfit
