#include "model/arch/quantization.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "formats/hf_config_json.h"
#include "memfit/checked_math.h"
#include "memfit/model.h"
#include "model/arch/mlx_quantization.h"

namespace memfit::arch {
namespace {

// The bytes json.dumps() writes for bitsandbytes' packed quant_state (QuantState.as_dict(packed=
// True)): {"quant_type": ..., "blocksize": 64, "dtype": "...", "shape": [out, in]} plus the nested
// keys under double quantization. nested_offset is a data-dependent float: its repr is assumed to
// take 20 characters (e.g. "0.021044731140136719"); the caller records that assumption.
uint64_t QuantStateBytes(const Quantization& q, std::string_view dtype, uint64_t out, uint64_t in) {
  std::string text =
      fmt::format(R"({{"quant_type": "{}", "blocksize": 64, "dtype": "{}", "shape": [{}, {}])",
                  q.quant_type, dtype, out, in);
  if (q.double_quant) {
    text += R"(, "nested_blocksize": 256, "nested_dtype": "float32", "nested_offset": )";
    text += std::string(20, '0');
  }
  text += "}";
  return text.size();
}

std::vector<std::string> StringList(const nlohmann::json& q, const char* key) {
  std::vector<std::string> out;
  if (auto it = q.find(key); it != q.end() && it->is_array()) {
    for (const auto& v : *it) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    }
  }
  return out;
}

// j[key] when it is a string (an integer, a boolean), else `fallback`.
std::string JsonString(const nlohmann::json& j, const char* key, std::string fallback = "") {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}
int64_t JsonInt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}
bool JsonBool(const nlohmann::json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

// Records that memfit does not build this quantization_config from config.json (`what`: why).
void Unsupported(ModelBuilder& b, const HfConfig& c, const std::string& what) {
  b.Fail(MakeError("{}: quantization_config: {}; the safetensors headers give the exact sizes",
                   c.where(), what));
}

// A ModelOpt / compressed-tensors weight scheme: {"num_bits", "type", "group_size", "strategy"}.
QuantMethod SchemeMethod(const nlohmann::json& w, bool& per_channel) {
  const int64_t bits = JsonInt(w, "num_bits");
  const std::string type = JsonString(w, "type");
  if (bits == 4 && type == "float") {
    // MXFP4 (OCP microscaling): a shared E8M0 scale per 32 values; NVFP4: an E4M3 scale per 16.
    return JsonInt(w, "group_size") == 32 ? QuantMethod::kMxfp4Packed : QuantMethod::kNvfp4;
  }
  if ((bits == 4 || bits == 8) && type == "int") return QuantMethod::kPackedInt;
  if (bits == 8 && type == "float") {
    per_channel = JsonString(w, "strategy") == "channel";
    return QuantMethod::kFp8Tensor;
  }
  return QuantMethod::kNone;
}

QuantMethod AlgoMethod(const std::string& algo) {
  if (algo == "NVFP4" || algo == "W4A16_NVFP4" || algo == "W4A8_NVFP4_FP8") {
    return QuantMethod::kNvfp4;
  }
  if (algo == "FP8" || algo == "FP8_PER_CHANNEL_PER_TOKEN") return QuantMethod::kFp8Tensor;
  if (algo == "MXFP8") return QuantMethod::kMxfp8;
  return QuantMethod::kNone;
}

// compressed-tensors "pack-quantized" integer weights (scheme `w`).
void ReadPackedInt(ModelBuilder& b, const HfConfig& c, const nlohmann::json& qc,
                   const nlohmann::json& w, Quantization& q) {
  const std::string format = JsonString(qc, "format");
  if (format != "pack-quantized") {
    return Unsupported(b, c,
                       fmt::format("compressed-tensors integer weights in format \"{}\" are not "
                                   "built from config.json (\"pack-quantized\" is)",
                                   format));
  }
  const std::string strategy = JsonString(w, "strategy", "group");
  const int64_t group = JsonInt(w, "group_size");
  if (strategy == "group" && (group < 1 || group > (int64_t{1} << 20))) {
    return b.Fail(MakeError(
        "{}: quantization_config: a \"group\" strategy needs group_size in 1..1048576", c.where()));
  }
  if (strategy != "group" && strategy != "channel") {
    return b.Fail(
        MakeError("{}: quantization_config: integer weights with strategy \"{}\" are "
                  "not built from config.json (group, channel are)",
                  c.where(), strategy));
  }
  q.method = QuantMethod::kPackedInt;
  q.bits = static_cast<uint64_t>(JsonInt(w, "num_bits"));
  q.group_size = strategy == "group" ? static_cast<uint64_t>(group) : 0;
  q.zero_point = !JsonBool(w, "symmetric", true);
}

// NVIDIA ModelOpt ("quant_method": "modelopt", "quant_algo") and compressed-tensors
// ("config_groups".*."weights") checkpoints: NVFP4, FP8 per tensor or channel, packed integers,
// and ModelOpt's MIXED_PRECISION ("quantized_layers": module -> quant_algo). Modules in "ignore" /
// "exclude_modules" (glob patterns) stay unquantized. Sources: NVIDIA TensorRT-Model-Optimizer
// export (hf_quant_config.json), vLLM modelopt.py and compressed_tensors.py.
void ReadModelOptLike(ModelBuilder& b, const HfConfig& c, const nlohmann::json& qc,
                      Quantization& q) {
  for (const char* key : {"ignore", "exclude_modules"}) {
    for (auto& s : StringList(qc, key)) q.skip.push_back(std::move(s));
  }
  const std::string algo = JsonString(qc, "quant_algo");
  if (algo == "MIXED_PRECISION") {
    auto layers = qc.find("quantized_layers");
    if (layers == qc.end() || !layers->is_object()) {
      return b.Fail(MakeError("{}: quantization_config: MIXED_PRECISION needs \"quantized_layers\"",
                              c.where()));
    }
    q.method = QuantMethod::kMixed;
    for (auto it = layers->begin(); it != layers->end(); ++it) {
      const QuantMethod m = AlgoMethod(JsonString(*it, "quant_algo"));
      if (m != QuantMethod::kNone) q.per_module.emplace_back(it.key(), m);
    }
    std::sort(q.per_module.begin(), q.per_module.end());
    q.bits = 8;
    return;
  }
  q.method = AlgoMethod(algo);
  if (auto groups = qc.find("config_groups"); groups != qc.end() && groups->is_object()) {
    for (const auto& g : *groups) {
      if (!g.is_object() || !g.contains("weights")) continue;
      const QuantMethod from_group = SchemeMethod(g["weights"], q.per_channel);
      if (from_group == QuantMethod::kPackedInt) return ReadPackedInt(b, c, qc, g["weights"], q);
      if (from_group != QuantMethod::kNone) q.method = from_group;
      // compressed-tensors registers input_scale only for static input activations
      // (lifecycle/initialize.py: none for "dynamic": true or without input_activations).
      if (from_group == QuantMethod::kFp8Tensor &&
          JsonString(qc, "quant_method") == "compressed-tensors") {
        auto in = g.find("input_activations");
        q.input_scale = in != g.end() && in->is_object() && !JsonBool(*in, "dynamic", false);
      }
      break;
    }
  }
  if (q.method == QuantMethod::kNone) {
    return Unsupported(b, c,
                       fmt::format("the ModelOpt / compressed-tensors scheme (quant_algo \"{}\") "
                                   "is not one memfit builds from config.json (NVFP4, FP8)",
                                   algo));
  }
  const bool fp4 = q.method == QuantMethod::kNvfp4 || q.method == QuantMethod::kMxfp4Packed;
  q.bits = fp4 ? 4 : 8;
  q.group_size = q.method == QuantMethod::kNvfp4         ? 16
                 : q.method == QuantMethod::kMxfp4Packed ? 32
                                                         : 0;
}

Quantization ReadQuantizationFields(ModelBuilder& b, const HfConfig& c,
                                    const BuildOptions& options) {
  Quantization q;
  if (options.ignore_quantization) return q;
  if (HasMlxQuantization(c)) {
    // Read and checked by BuildFromConfig (MlxQuantizationScope); the builder stores it.
    q.method = QuantMethod::kMlx;
    return q;
  }
  const nlohmann::json* qc = QuantizationConfigJson(c);
  auto raw = c.raw().find("quantization_config");
  if (!qc && raw != c.raw().end() && !raw->is_null()) qc = &*raw;
  if (!qc) return q;
  if (!qc->is_object()) {
    b.Fail(MakeError("{}: \"quantization_config\" must be an object", c.where()));
    return q;
  }
  auto sub = HfConfig::FromJson(*qc, c.where() + ": quantization_config");
  if (!sub) {
    b.Fail(sub.error());
    return q;
  }
  std::string method = Get(b, sub->StringOr("quant_method", ""));
  if (method == "bitsandbytes") {
    bool int8 = Get(b, sub->BoolOr("load_in_8bit", false));
    bool int4 = Get(b, sub->BoolOr("load_in_4bit", false));
    if (int8 == int4) {
      b.Fail(
          MakeError("{}: quantization_config: bitsandbytes needs exactly one of "
                    "\"load_in_8bit\" and \"load_in_4bit\"",
                    c.where()));
      return q;
    }
    q.method = int8 ? QuantMethod::kBnbInt8 : QuantMethod::kBnb4Bit;
    q.bits = int8 ? 8 : 4;
    q.skip = StringList(*qc, "llm_int8_skip_modules");
    q.double_quant = Get(b, sub->BoolOr("bnb_4bit_use_double_quant", false));
    q.quant_type = Get(b, sub->StringOr("bnb_4bit_quant_type", "fp4"));
    std::string storage = Get(b, sub->StringOr("bnb_4bit_quant_storage", "uint8"));
    if (int4 && storage != "uint8") {
      Unsupported(
          b, c,
          fmt::format("bnb_4bit_quant_storage \"{}\" is not supported (uint8 only)", storage));
    }
  } else if (method == "gptq" || method == "awq") {
    q.method = method == "gptq" ? QuantMethod::kGptq : QuantMethod::kAwq;
    q.bits = Get(b, sub->Uint("bits"));
    // group_size -1: one group over the whole input.
    q.group_size = JsonInt(*qc, "group_size") == -1 ? 0 : Get(b, sub->UintOr("group_size", 128));
    std::string version = Get(b, sub->StringOr("version", "gemm"));
    if (q.method == QuantMethod::kAwq && version != "gemm" && version != "GEMM") {
      Unsupported(b, c, fmt::format("AWQ version \"{}\" is not supported (GEMM only)", version));
    }
    std::string format = Get(b, sub->StringOr("checkpoint_format", "gptq"));
    if (q.method == QuantMethod::kGptq && format != "gptq") {
      Unsupported(b, c, fmt::format("GPTQ checkpoint_format \"{}\" is not supported", format));
    }
    if (q.bits == 0 || 32 % q.bits != 0) {
      b.Fail(MakeError("{}: quantization_config: \"bits\" = {} is not supported (2, 4 or 8)",
                       c.where(), q.bits));
    }
    q.skip = StringList(*qc, "modules_to_not_convert");
  } else if (method == "fp8") {
    q.method = QuantMethod::kFp8Block;
    q.bits = 8;
    auto block = qc->find("weight_block_size");
    auto positive = [](const nlohmann::json& v) {
      return v.is_number_integer() && v.get<int64_t>() > 0 &&
             static_cast<uint64_t>(v.get<int64_t>()) <= kMaxConfigDimension;
    };
    if (block == qc->end() || !block->is_array() || block->size() != 2 || !positive((*block)[0]) ||
        !positive((*block)[1])) {
      Unsupported(b, c,
                  "fp8 needs \"weight_block_size\" as two positive integers (per-tensor fp8 is not "
                  "supported)");
      return q;
    }
    q.block_out = (*block)[0].get<uint64_t>();
    q.block_in = (*block)[1].get<uint64_t>();
    // transformers' FineGrainedFP8Config names "modules_to_not_convert", vLLM's Fp8Config
    // "ignored_layers" (MiMo-V2.5-Pro lists its bf16 o_proj there).
    q.skip = StringList(*qc, "modules_to_not_convert");
    for (auto& s : StringList(*qc, "ignored_layers")) q.skip.push_back(std::move(s));
  } else if (method == "modelopt" || method == "compressed-tensors" ||
             (method.empty() && (qc->contains("config_groups") || qc->contains("quant_algo")))) {
    ReadModelOptLike(b, c, *qc, q);
  } else if (method == "mxfp4") {
    q.method = QuantMethod::kMxfp4;
    q.bits = 4;
    q.skip = StringList(*qc, "modules_to_not_convert");
  } else {
    Unsupported(b, c,
                fmt::format("quant_method \"{}\" is not supported by memfit's config-only builders",
                            method));
  }
  return q;
}

}  // namespace

Quantization ReadQuantization(ModelBuilder& b, const HfConfig& c, const BuildOptions& options) {
  Quantization q = ReadQuantizationFields(b, c, options);
  if (const auto* qc = QuantizationConfigJson(c); qc && q.method != QuantMethod::kNone) {
    if (auto it = qc->find(kModuleAliasesKey); it != qc->end() && it->is_array()) {
      for (const auto& pair : *it) {
        if (pair.is_array() && pair.size() == 2 && pair[0].is_string() && pair[1].is_string()) {
          q.module_aliases.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
        }
      }
    }
  }
  // ModelOpt releases repeat the list under "ignore" and hf_quant_config's "exclude_modules".
  std::sort(q.skip.begin(), q.skip.end());
  q.skip.erase(std::unique(q.skip.begin(), q.skip.end()), q.skip.end());
  if (!q.skip.empty()) q.skip_index = std::make_shared<const SkipIndex>(IndexSkips(q.skip));
  return q;
}

void QGatedMlp(ModelBuilder& b, const Quantization& q, const std::string& prefix, uint64_t hidden,
               uint64_t width, bool bias) {
  QLinear(b, q, prefix + ".gate_proj", hidden, width, bias);
  QLinear(b, q, prefix + ".up_proj", hidden, width, bias);
  QLinear(b, q, prefix + ".down_proj", width, hidden, bias);
}

void QLinear(ModelBuilder& b, const Quantization& q, const std::string& m, uint64_t in,
             uint64_t out, bool bias) {
  QuantMethod method = q.method;
  if (method == QuantMethod::kMixed) {
    method = QuantMethod::kNone;
    for (const auto& name : CheckpointNames(q, m)) {
      auto it = std::lower_bound(q.per_module.begin(), q.per_module.end(),
                                 std::make_pair(name, QuantMethod::kNone));
      if (it != q.per_module.end() && it->first == name) {
        method = it->second;
        break;
      }
    }
  }
  if (method == QuantMethod::kNone || method == QuantMethod::kMxfp4 ||
      method == QuantMethod::kMlx || SkipsModule(q, m)) {
    b.Linear(m, in, out, bias);
    return;
  }
  // Parameters are logical (issue 15): the packed weight counts out x in, scales, zero points
  // and g_idx count none; bytes stay as stored.
  const auto logical = CheckedMul(out, in);
  if (!logical) {
    b.Fail(MakeError("{}: size overflows 64 bits", m));
    return;
  }
  const uint64_t n = *logical;
  switch (method) {
    case QuantMethod::kNvfp4:
      // Values packed two per byte [out, in/2], an E4M3 scale per 16 inputs, two float32 scalars.
      b.Packed(m + ".weight", {out, CeilDivOrZero(in, 2)}, Dtype::kU8, n);
      b.Packed(m + ".weight_scale", {out, CeilDivOrZero(in, 16)}, Dtype::kF8E4M3, 0);
      b.Packed(m + ".weight_scale_2", {}, Dtype::kF32, 0);
      b.Packed(m + ".input_scale", {}, Dtype::kF32, 0);
      break;
    case QuantMethod::kMxfp4Packed:
      // compressed-tensors mxfp4-pack-quantized: E2M1 values two per byte, an E8M0 (uint8) scale
      // per 32 inputs ("scale_dtype": "torch.uint8").
      b.Packed(m + ".weight_packed", {out, CeilDivOrZero(in, 2)}, Dtype::kU8, n);
      b.Packed(m + ".weight_scale", {out, CeilDivOrZero(in, 32)}, Dtype::kU8, 0);
      break;
    case QuantMethod::kPackedInt: {
      const uint64_t pack = 32 / q.bits;
      const uint64_t groups = q.group_size ? CeilDivOrZero(in, q.group_size) : 1;
      b.Packed(m + ".weight_packed", {out, CeilDivOrZero(in, pack)}, Dtype::kI32, n);
      b.Packed(m + ".weight_scale", {out, groups}, b.dtype(), 0);
      b.Packed(m + ".weight_shape", {2}, Dtype::kI64, 0);
      if (q.zero_point) {
        b.Packed(m + ".weight_zero_point", {CeilDivOrZero(out, pack), groups}, Dtype::kI32, 0);
      }
      break;
    }
    case QuantMethod::kFp8Tensor:
      b.ParamAs(m + ".weight", {out, in}, Dtype::kF8E4M3);
      b.Packed(m + ".weight_scale",
               q.per_channel ? std::vector<uint64_t>{out, 1} : std::vector<uint64_t>{}, Dtype::kF32,
               0);
      if (q.input_scale) b.Packed(m + ".input_scale", {}, Dtype::kF32, 0);
      break;
    case QuantMethod::kBnbInt8:
      b.ParamAs(m + ".weight", {out, in}, Dtype::kI8);
      b.Buffer(m + ".SCB", {out}, Dtype::kF32, true);
      b.Buffer(m + ".weight_format", {}, Dtype::kU8, true);
      break;
    case QuantMethod::kBnb4Bit: {
      const uint64_t blocks = CeilDivOrZero(n, 64);
      b.Packed(m + ".weight", {CeilDivOrZero(n, 2), 1}, Dtype::kU8, n);
      b.Buffer(m + ".weight.absmax", {blocks}, q.double_quant ? Dtype::kU8 : Dtype::kF32, true);
      b.Buffer(m + ".weight.quant_map", {16}, Dtype::kF32, true);
      if (q.double_quant) {
        b.Buffer(m + ".weight.nested_absmax", {CeilDivOrZero(blocks, 256)}, Dtype::kF32, true);
        b.Buffer(m + ".weight.nested_quant_map", {256}, Dtype::kF32, true);
      }
      b.Buffer(m + ".weight.quant_state.bitsandbytes__" + q.quant_type,
               {QuantStateBytes(q, TorchDtypeName(b.dtype()), out, in)}, Dtype::kU8, true);
      break;
    }
    case QuantMethod::kGptq:
    case QuantMethod::kAwq: {
      const uint64_t group = q.group_size == 0 ? in : q.group_size;
      const uint64_t groups = CeilDivOrZero(in, group);
      const uint64_t per_int = 32 / q.bits;
      if (in % per_int != 0 || out % per_int != 0) {
        b.Fail(MakeError("{}: {}x{} does not pack into int32 at {} bits", m, out, in, q.bits));
        return;
      }
      const bool gptq = q.method == QuantMethod::kGptq;
      b.Packed(m + ".qweight",
               gptq ? std::vector<uint64_t>{in / per_int, out} : std::vector{in, out / per_int},
               Dtype::kI32, n);
      b.Packed(m + ".qzeros", {groups, out / per_int}, Dtype::kI32, 0);
      b.Packed(m + ".scales", {groups, out}, Dtype::kF16, 0);
      if (gptq) b.Packed(m + ".g_idx", {in}, Dtype::kI32, 0);
      if (bias) b.ParamAs(m + ".bias", {out}, Dtype::kF16);
      return;
    }
    case QuantMethod::kMxfp8:
      // vLLM modelopt.py (ModelOpt MXFP8): E4M3 values, one E8M0 exponent per 32 inputs.
      b.ParamAs(m + ".weight", {out, in}, Dtype::kF8E4M3);
      b.Packed(m + ".weight_scale", {out, CeilDivOrZero(in, 32)}, Dtype::kF8E8M0, 0);
      break;
    case QuantMethod::kFp8Block:
      b.ParamAs(m + ".weight", {out, in}, Dtype::kF8E4M3);
      b.Packed(m + ".weight_scale_inv",
               {CeilDivOrZero(out, q.block_out), CeilDivOrZero(in, q.block_in)}, Dtype::kF32, 0);
      break;
    default:
      break;
  }
  if (bias) b.Param(m + ".bias", {out});
}

void NoteQuantization(ModelBuilder& b, const Quantization& q) {
  Model& m = b.model();
  switch (q.method) {
    case QuantMethod::kBnb4Bit:
      m.notes.push_back(
          "bitsandbytes 4-bit: weights packed two per uint8 byte; the parameter "
          "count is logical (out x in per layer), while transformers' "
          "num_parameters() after loading counts packed bytes");
      if (q.double_quant) {
        m.assumptions.push_back(
            "bitsandbytes double quantization: each quant_state JSON holds a "
            "data-dependent nested_offset, assumed 20 characters long");
      }
      break;
    case QuantMethod::kGptq:
    case QuantMethod::kAwq:
      m.notes.push_back(
          "GPTQ/AWQ: quantized layers stored as packed int32 qweight/qzeros with "
          "float16 scales; parameters are logical (out x in per layer; qzeros, "
          "scales and g_idx are not parameters), bytes as stored");
      break;
    case QuantMethod::kFp8Block:
      m.notes.push_back(
          "fp8: quantized layers stored as float8_e4m3fn with float32 "
          "weight_scale_inv per block (not parameters)");
      break;
    case QuantMethod::kPackedInt:
      m.notes.push_back(fmt::format(
          "compressed-tensors pack-quantized int{}: quantized layers stored as int32 "
          "weight_packed ({} values a word) with {} weight_scale {}{}; parameters are logical "
          "(out x in per layer), bytes as stored",
          q.bits, 32 / q.bits, DtypeName(b.dtype()),
          q.group_size ? fmt::format("per {} inputs", q.group_size) : std::string("per channel"),
          q.zero_point ? " and an int32 packed weight_zero_point" : ""));
      break;
    case QuantMethod::kMxfp4Packed:
      m.notes.push_back(
          "compressed-tensors mxfp4-pack-quantized: quantized layers stored as uint8 "
          "weight_packed [out, in/2] (two E2M1 values a byte) with a uint8 (E8M0) "
          "weight_scale per 32 inputs; parameters are logical (out x in per layer), "
          "bytes as stored");
      break;
    case QuantMethod::kNvfp4:
    case QuantMethod::kFp8Tensor:
    case QuantMethod::kMixed:
      m.notes.push_back(
          "ModelOpt / compressed-tensors: NVFP4 layers stored as uint8 [out, in/2] "
          "(two E2M1 values a byte) with an E4M3 scale per 16 and float32 "
          "weight_scale_2 and input_scale; FP8 layers as float8_e4m3fn with float32 "
          "weight_scale and input_scale. Parameters are logical (out x in per layer; scales "
          "are not parameters), bytes as stored.");
      if (std::any_of(q.per_module.begin(), q.per_module.end(),
                      [](const auto& p) { return p.second == QuantMethod::kMxfp8; })) {
        m.assumptions.push_back(
            "ModelOpt MXFP8 layers stored as float8_e4m3fn [out, in] with a uint8 E8M0 "
            "weight_scale [out, in/32] and no input_scale (vLLM's ModelOpt MXFP8 linear)");
      }
      break;
    default:
      break;
  }
}

}  // namespace memfit::arch
