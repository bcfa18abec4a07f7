// Quantized weight bytes per scheme. Formulas and sources: docs/estimates.md, "Quantization".

#include "memfit/quantization.h"
#include "formats/hf_config_json.h"

#include <fmt/format.h>

#include "base/enum_names.h"
#include "estimate/modules.h"
#include "estimate/weights_internal.h"
#include "memfit/checked_math.h"
#include "memfit/stored_format.h"

namespace memfit {
namespace {


// Sum of terms with overflow detection.
struct Acc {
  uint64_t v = 0;
  bool bad = false;
  void Add(std::optional<uint64_t> x) {
    if (!x) { bad = true; return; }
    auto s = CheckedAdd(v, *x);
    if (!s) bad = true; else v = *s;
  }
};

// Each scheme's name (ParseQuant reads these and more, some with options).
constexpr auto kSchemeNames = std::to_array<EnumWord<QuantScheme>>({
    {"none", QuantScheme::kNone}, {"bnb-int8", QuantScheme::kBnbInt8},
    {"nf4", QuantScheme::kBnbNf4}, {"fp4", QuantScheme::kBnbFp4}, {"gptq", QuantScheme::kGptq},
    {"awq", QuantScheme::kAwq}, {"fp8", QuantScheme::kFp8}, {"fp8-block", QuantScheme::kFp8Block},
    {"mxfp4", QuantScheme::kMxfp4}, {"hqq", QuantScheme::kHqq},
    {"int8", QuantScheme::kPlainInt8}, {"int4", QuantScheme::kPlainInt4}});

// --quant's words and the options each gives (QuantOptions' defaults for the rest): the
// checkpoint's own quantization ("stored", "auto", ""), dequantized ("none"), or a scheme.
constexpr QuantOptions kNf4{.scheme = QuantScheme::kBnbNf4};
constexpr QuantOptions kFp4{.scheme = QuantScheme::kBnbFp4};
constexpr QuantOptions kBnbInt8{.scheme = QuantScheme::kBnbInt8};
constexpr auto kQuantWords = std::to_array<EnumWord<QuantOptions>>({
    {"stored", {}}, {"auto", {}}, {"", {}},
    {"none", {.dequantize_stored = true}}, {"dequantize", {.dequantize_stored = true}},
    {"bnb-int8", kBnbInt8}, {"int8-bnb", kBnbInt8}, {"llm.int8", kBnbInt8}, {"bnb8", kBnbInt8},
    {"nf4", kNf4}, {"bnb-nf4", kNf4}, {"bnb4", kNf4},
    {"nf4-dq", {.scheme = QuantScheme::kBnbNf4, .double_quant = true}},
    {"bnb-nf4-dq", {.scheme = QuantScheme::kBnbNf4, .double_quant = true}},
    {"fp4", kFp4}, {"bnb-fp4", kFp4},
    {"fp4-dq", {.scheme = QuantScheme::kBnbFp4, .double_quant = true}},
    {"bnb-fp4-dq", {.scheme = QuantScheme::kBnbFp4, .double_quant = true}},
    {"gptq", {.scheme = QuantScheme::kGptq}}, {"gptq-4bit", {.scheme = QuantScheme::kGptq}},
    {"gptq-8bit", {.scheme = QuantScheme::kGptq, .bits = 8}},
    {"awq", {.scheme = QuantScheme::kAwq}},
    {"fp8", {.scheme = QuantScheme::kFp8}}, {"fp8-block", {.scheme = QuantScheme::kFp8Block}},
    {"mxfp4", {.scheme = QuantScheme::kMxfp4}},
    {"hqq", {.scheme = QuantScheme::kHqq, .group_size = 64}},
    {"hqq-4bit", {.scheme = QuantScheme::kHqq, .group_size = 64}},
    {"int8", {.scheme = QuantScheme::kPlainInt8}}, {"int4", {.scheme = QuantScheme::kPlainInt4}}});

}  // namespace

std::string_view QuantSchemeName(QuantScheme scheme) { return NameOf(scheme, kSchemeNames); }

Result<QuantOptions> ParseQuant(std::string_view name) {
  if (auto options = FindWord(name, kQuantWords)) return *options;
  return MakeError("--quant {}: expected stored, none, bnb-int8, nf4, nf4-dq, fp4, fp4-dq, gptq, "
                   "gptq-8bit, awq, fp8, fp8-block, mxfp4, hqq, int8 or int4", name);
}

std::optional<uint64_t> QuantizedLinearBytes(uint64_t out, uint64_t in, const QuantOptions& o) {
  auto n_opt = CheckedMul(out, in);
  if (!n_opt) return std::nullopt;
  const uint64_t n = *n_opt;
  Acc a;
  switch (o.scheme) {
    case QuantScheme::kNone:
      return TensorBytes(n, o.compute_dtype);
    case QuantScheme::kPlainInt8:
      return n;
    case QuantScheme::kPlainInt4:
      return CeilDivOrZero(n, 2);
    case QuantScheme::kBnbInt8:
      // Int8Params: int8 [out, in] + SCB fp32 [out] (one absmax per output row).
      a.Add(n);
      a.Add(CheckedMul(out, 4));
      break;
    case QuantScheme::kBnbNf4:
    case QuantScheme::kBnbFp4: {
      // Params4bit: uint8 [(n+1)/2, 1]; absmax per 64-element block; the 16-entry code (fp32).
      const uint64_t blocks = CeilDivOrZero(n, 64);
      a.Add((n + 1) / 2);
      if (o.double_quant) {
        // absmax - mean quantized to uint8 (blockwise, 256) + fp32 absmax per 256 + fp32 offset.
        a.Add(blocks);
        a.Add(CheckedMul(CeilDivOrZero(blocks, 256), 4));
        a.Add(4);
      } else {
        a.Add(CheckedMul(blocks, 4));
      }
      a.Add(16 * 4);
      break;
    }
    case QuantScheme::kGptq:
    case QuantScheme::kAwq: {
      // qweight int32 packs 32/bits values; qzeros int32 [groups, out*bits/32];
      // scales fp16 [groups, out]; GPTQ also g_idx int32 [in].
      const uint64_t g = o.group_size == 0 ? in : o.group_size;
      const uint64_t groups = CeilDivOrZero(in, g);
      const uint64_t per_word = 32 / (o.bits == 0 ? 4 : o.bits);
      a.Add(CheckedMul(CeilDivOrZero(n, per_word), 4));
      a.Add(CheckedMul(CheckedMul(groups, CeilDivOrZero(out, per_word)).value_or(UINT64_MAX), 4));
      a.Add(CheckedMul(CheckedMul(groups, out).value_or(UINT64_MAX), 2));
      if (o.scheme == QuantScheme::kGptq) a.Add(CheckedMul(in, 4));
      break;
    }
    case QuantScheme::kFp8:
      a.Add(n);
      a.Add(8);  // weight_scale + input_scale, fp32 scalars
      break;
    case QuantScheme::kFp8Block: {
      const uint64_t b = o.fp8_block == 0 ? 128 : o.fp8_block;
      a.Add(n);
      a.Add(CheckedMul(CheckedMul(CeilDivOrZero(out, b), CeilDivOrZero(in, b)).value_or(UINT64_MAX), 4));
      break;
    }
    case QuantScheme::kMxfp4:
      // 32 values per block: 16 bytes of nibbles + 1 E8M0 scale byte.
      a.Add(CheckedMul(CeilDivOrZero(n, 32), 17));
      break;
    case QuantScheme::kHqq: {
      const uint64_t g = o.group_size == 0 ? 64 : o.group_size;
      a.Add(CeilDivOrZero(CheckedMul(n, o.bits).value_or(UINT64_MAX), 8));
      a.Add(CheckedMul(CeilDivOrZero(n, g), 4));  // fp16 scale + fp16 zero per group
      break;
    }
  }
  if (a.bad) return std::nullopt;
  return a.v;
}

namespace {

// Values per stored element of a packed quantized data tensor: two 4-bit values per uint8 byte
// (MXFP4 blocks, NVFP4, bitsandbytes 4-bit), 32 / bits per int32 (GPTQ, AWQ, compressed-tensors
// pack-quantized), one otherwise (FP8, int8).
uint64_t ValuesPerElement(const Tensor& t, const Model& model) {
  if (IsFloatingPoint(t.dtype)) return 1;
  if (t.dtype == Dtype::kI32 || t.dtype == Dtype::kU32) {
    uint64_t bits = 4;
    if (model.quantization_config && model.quantization_config->is_object()) {
      auto it = model.quantization_config->find("bits");
      if (it != model.quantization_config->end() && it->is_number_unsigned() &&
          it->get<uint64_t>() > 0 && it->get<uint64_t>() <= 32) {
        bits = it->get<uint64_t>();
      }
    }
    return 32 / bits;
  }
  if (t.dtype == Dtype::kU8) return 2;
  return 1;
}

// The data tensor of a quantized module (its weight), as opposed to scales, zeros and indices.
bool IsQuantizedData(const Tensor& t) {
  return (t.name.ends_with(".weight") || t.name.ends_with(".qweight") ||
          t.name.ends_with("_blocks")) &&
         (DtypeBits(t.dtype) < 16 || !IsFloatingPoint(t.dtype));
}

}  // namespace

Result<QuantizedWeights> EstimateQuantizedWeights(const Model& model, const QuantOptions& o) {
  return estimate::QuantizedWeightsFrom(model, o, DetectStoredQuantization(model),
                                        estimate::ClassifyTensors(model));
}

Result<QuantizedWeights> estimate::QuantizedWeightsFrom(const Model& model, const QuantOptions& o,
                                                        const StoredQuantization& stored,
                                                        const std::vector<RoleTensor>& roles) {
  QuantizedWeights w;
  const bool plain = o.scheme == QuantScheme::kPlainInt8 || o.scheme == QuantScheme::kPlainInt4;
  const bool none = o.scheme == QuantScheme::kNone;
  w.stored_format = std::string(StoredFormatName(stored.format));
  const bool keep_stored = none && !o.dequantize_stored;
  Acc total, qbytes, kbytes, obytes, sbytes;
  bool kept_head = false, kept_embed = false, kept_other = false, kept_packed = false;
  bool skipped_unloaded = false;
  w.tensor_bytes.assign(model.tensors.size(), 0);
  for (const auto& r : roles) {
    const Tensor& t = *r.tensor;
    if (r.role == estimate::Role::kTied) continue;
    const size_t index = static_cast<size_t>(r.tensor - model.tensors.data());
    uint64_t& bytes_of = w.tensor_bytes[index];
    if (!t.loaded) {  // stored, never loaded (DeepSeek-V3's multi-token-prediction layer)
      skipped_unloaded = true;
      continue;
    }
    if (stored.quantized[index]) {
      const bool data = IsQuantizedData(t);
      if (keep_stored || (data && !IsFloatingPoint(t.dtype) && !none)) {
        // As stored; a packed integer weight cannot be re-quantized from its packed form.
        kept_packed = kept_packed || !keep_stored;
        obytes.Add(t.bytes);
        sbytes.Add(t.bytes);
        total.Add(t.bytes);
        bytes_of = t.bytes;
        continue;
      }
      if (!data) continue;  // scales, zeros, indices: gone once dequantized or re-quantized
      const uint64_t values = ValuesPerElement(t, model);
      std::optional<uint64_t> b;
      if (none) {
        auto n = CheckedMul(t.numel, values);
        b = n ? TensorBytes(*n, o.compute_dtype) : std::nullopt;
      } else {
        b = QuantizedLinearBytes(r.out ? r.out : 1, r.in ? r.in : t.numel, o);
      }
      if (!b) return MakeError("{}: size overflows", t.name);
      (none ? kbytes : qbytes).Add(*b);
      total.Add(*b);
      bytes_of = *b;
      if (none) w.kept_params += t.numel * values;
      else w.quantized_params += t.numel;
      continue;
    }
    if (!IsFloatingPoint(t.dtype) || r.role == estimate::Role::kBuffer) {
      // Integer tensors and buffers: as stored.
      obytes.Add(t.bytes);
      total.Add(t.bytes);
      bytes_of = t.bytes;
      continue;
    }
    bool quantize = false;
    if (plain) {
      quantize = true;
    } else if (!none) {
      quantize = r.role == estimate::Role::kLinear ||
                 (r.role == estimate::Role::kHead && o.quantize_head && r.in > 0);
      if (r.role == estimate::Role::kHead) kept_head = kept_head || !quantize;
      if (r.role == estimate::Role::kEmbedding) kept_embed = true;
      if (r.role == estimate::Role::kOther) kept_other = true;
    }
    if (quantize) {
      std::optional<uint64_t> b = plain ? QuantizedLinearBytes(1, t.numel, o)
                                        : QuantizedLinearBytes(r.out, r.in, o);
      if (!b) return MakeError("{}: quantized size overflows", t.name);
      qbytes.Add(*b);
      total.Add(*b);
      bytes_of = *b;
      w.quantized_params += t.numel;
      if (r.role == estimate::Role::kLinear && t.numel > w.largest_linear_params) {
        w.largest_linear_params = t.numel;
      }
    } else {
      auto b = TensorBytes(t.numel, o.compute_dtype);
      if (!b) return MakeError("{}: size overflows", t.name);
      kbytes.Add(*b);
      total.Add(*b);
      bytes_of = *b;
      w.kept_params += t.numel;
    }
  }
  if (sbytes.bad) return MakeError("{}: stored quantized total overflows", model.name);
  w.stored_quantized_bytes = sbytes.v;
  if (skipped_unloaded) {
    w.notes.push_back("tensors stored but not loaded (multi-token-prediction layers) are left out");
  }
  if (kept_packed) {
    w.notes.push_back(fmt::format("the checkpoint's packed {} weights stay as stored: --quant "
                                  "re-quantizes floating (and FP8) weights only",
                                  w.stored_format));
  }
  if (total.bad || qbytes.bad || kbytes.bad || obytes.bad) {
    return MakeError("{}: quantized weight total overflows", model.name);
  }
  w.total_bytes = total.v;
  w.quantized_bytes = qbytes.v;
  w.kept_bytes = kbytes.v;
  w.other_bytes = obytes.v;
  if (!none && !plain) {
    std::string dt(TorchDtypeName(o.compute_dtype));
    if (kept_embed) w.notes.push_back("embeddings stay in " + dt + " (" + std::string(QuantSchemeName(o.scheme)) + " quantizes linear layers only)");
    if (kept_head) w.notes.push_back("the output head (lm_head) stays in " + dt);
    w.notes.push_back("norms and biases stay in " + dt);
    if (kept_other) w.notes.push_back("convolutions and other non-linear parameters stay in " + dt);
  }
  return w;
}

}  // namespace memfit
