// Checkpoint quantization as stored, and what each engine does with it on a given GPU.
// Sources (docs/estimates.md, "Weights as stored"): transformers quantizer_finegrained_fp8.py
// (compute capability >= 8.9) and quantizer_mxfp4.py (>= 7.5, else dequantize to bf16); vLLM
// Fp8Config / Mxfp4Config / ModelOptNvFp4Config.get_min_capability() = 80 (Marlin weight-only
// kernels below 8.9 / 9.0 / 10.0 keep the stored bytes).

#include "memfit/stored_format.h"

#include <fmt/format.h>

#include <string_view>
#include <unordered_set>
#include <vector>

#include "estimate/modules.h"
#include "formats/hf_config_json.h"

namespace memfit {
namespace {

bool LowBitOrInteger(const Tensor& t) {
  if (t.dtype == Dtype::kBlockQuantized || t.dtype == Dtype::kBool) return false;
  if (!IsFloatingPoint(t.dtype)) return t.kind == TensorKind::kParameter || DtypeBits(t.dtype) <= 8;
  return DtypeBits(t.dtype) < 16;
}

std::string QuantMethod(const Model& model) {
  if (!model.quantization_config || !model.quantization_config->is_object()) return "";
  auto it = model.quantization_config->find("quant_method");
  return it != model.quantization_config->end() && it->is_string() ? it->get<std::string>() : "";
}

StoredFormat FormatFromConfig(const Model& model) {
  const std::string method = QuantMethod(model);
  const nlohmann::json& qc = *model.quantization_config;
  if (method == "fp8")
    return qc.contains("weight_block_size") ? StoredFormat::kFp8Block : StoredFormat::kFp8;
  if (method == "mxfp4") return StoredFormat::kMxfp4;
  if (method == "modelopt") {
    auto algo = qc.find("quant_algo");
    if (algo != qc.end() && algo->is_string() &&
        algo->get<std::string>().find("FP4") != std::string::npos) {
      return StoredFormat::kNvfp4;
    }
    return StoredFormat::kFp8;
  }
  if (method == "compressed-tensors") return StoredFormat::kCompressedTensors;
  if (method == "gptq") return StoredFormat::kGptq;
  if (method == "awq") return StoredFormat::kAwq;
  if (method == "bitsandbytes") {
    auto b8 = qc.find("load_in_8bit");
    return b8 != qc.end() && b8->is_boolean() && b8->get<bool>() ? StoredFormat::kBnbInt8
                                                                 : StoredFormat::kBnb4Bit;
  }
  return StoredFormat::kOther;
}

// MLX's layout (mlx-lm writes no quant_method): a uint32 `<m>.weight` beside `<m>.scales`.
bool MlxLayout(const Model& model) {
  std::unordered_set<std::string_view> packed;
  for (const auto& t : model.tensors) {
    if (t.dtype == Dtype::kU32 && t.name.ends_with(".weight")) {
      packed.insert(std::string_view(t.name).substr(0, t.name.size() - 7));
    }
  }
  if (packed.empty()) return false;
  for (const auto& t : model.tensors) {
    if (t.name.ends_with(".scales") &&
        packed.contains(std::string_view(t.name).substr(0, t.name.size() - 7))) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view StoredFormatName(StoredFormat format) {
  switch (format) {
    case StoredFormat::kNone:
      return "none";
    case StoredFormat::kFp8:
      return "fp8";
    case StoredFormat::kFp8Block:
      return "fp8-block";
    case StoredFormat::kNvfp4:
      return "nvfp4";
    case StoredFormat::kMxfp4:
      return "mxfp4";
    case StoredFormat::kCompressedTensors:
      return "compressed-tensors";
    case StoredFormat::kGptq:
      return "gptq";
    case StoredFormat::kAwq:
      return "awq";
    case StoredFormat::kBnbInt8:
      return "bnb-int8";
    case StoredFormat::kBnb4Bit:
      return "bnb-4bit";
    case StoredFormat::kMlx:
      return "mlx";
    case StoredFormat::kOther:
      return "low-bit";
  }
  return "?";
}

StoredQuantization DetectStoredQuantization(const Model& model) {
  StoredQuantization out;
  out.quantized.assign(model.tensors.size(), false);
  // A module holds low-bit data when any of its tensors is low-bit or integer; then all of its
  // tensors (scales, zeros, indices) are stored quantized. A module's tensors are adjacent in
  // practice, so the work is per run of one module: only the few runs without low-bit data are
  // hashed (views into the names: the model outlives this function), and a low-bit run looks its
  // module up there only to catch a module split across runs. Large MoEs have ~300k tensors.
  struct Run {
    std::string_view module;
    size_t begin = 0, end = 0;
    bool low_bit = false;
  };
  std::vector<Run> runs;
  size_t low_runs = 0;
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    const Tensor& t = model.tensors[i];
    const std::string_view m = estimate::WeightModule(t.name);
    if (runs.empty() || runs.back().module != m) runs.push_back({.module = m, .begin = i});
    Run& r = runs.back();
    r.end = i + 1;
    if (!r.low_bit && t.tied_to.empty() && LowBitOrInteger(t) &&
        t.kind != TensorKind::kNonPersistentBuffer) {
      r.low_bit = true;
      ++low_runs;
    }
  }
  if (low_runs == 0) return out;
  if (low_runs < runs.size()) {
    std::unordered_set<std::string_view> plain;
    for (const Run& r : runs) {
      if (!r.low_bit) plain.insert(r.module);
    }
    std::unordered_set<std::string_view> split;  // plain somewhere, low-bit elsewhere
    for (const Run& r : runs) {
      if (r.low_bit && plain.contains(r.module)) split.insert(r.module);
    }
    if (!split.empty()) {
      for (Run& r : runs) r.low_bit = r.low_bit || split.contains(r.module);
    }
  }
  for (const Run& r : runs) {
    if (!r.low_bit) continue;
    for (size_t i = r.begin; i < r.end; ++i) {
      const Tensor& t = model.tensors[i];
      if (!t.tied_to.empty() || t.name.ends_with(".bias") || t.name.ends_with("_bias")) continue;
      if (t.kind == TensorKind::kNonPersistentBuffer) continue;
      // Only tensors of a module that holds low-bit data: its scales, zeros and indices.
      out.quantized[i] = true;
      ++out.tensors;
      if (t.loaded) out.quantized_bytes += t.bytes;
    }
  }
  if (out.tensors == 0) return out;
  out.format = model.quantization_config ? FormatFromConfig(model) : StoredFormat::kOther;
  if (out.format == StoredFormat::kOther && MlxLayout(model)) out.format = StoredFormat::kMlx;
  if (out.format == StoredFormat::kOther) {
    for (const auto& t : model.tensors) {
      if (t.dtype == Dtype::kF8E4M3 || t.dtype == Dtype::kF8E5M2) out.format = StoredFormat::kFp8;
    }
  }
  return out;
}

Result<StoredHandling> HandleStoredFormat(StoredFormat format, Engine engine, uint32_t cc,
                                          std::vector<std::string>& assumptions) {
  if (format == StoredFormat::kNone) return StoredHandling::kKeep;
  const std::string name(StoredFormatName(format));
  if (format == StoredFormat::kMlx) {
    // transformers, vLLM and SGLang have no MLX loader: mlx-lm / mlx-vlm run these (Apple
    // silicon, unified memory). On a CUDA GPU (a compute capability) nothing loads them, so a
    // verdict there would be false; elsewhere (Apple, a bare size) the stored bytes stand in.
    if (cc != 0) {
      return MakeError(
          "{}: an MLX checkpoint (mlx-lm's format, for Apple silicon) does not load "
          "on a CUDA GPU (compute capability {}.{}): --quant none counts the model "
          "dequantized to --dtype, or give the original (non-MLX) repository",
          EngineName(engine), cc / 10, cc % 10);
    }
    assumptions.push_back(fmt::format(
        "weights as stored (mlx): an MLX checkpoint is run by mlx-lm / mlx-vlm; {} has no MLX "
        "loader, so its figures count the stored bytes as if it loaded them",
        EngineName(engine)));
    return StoredHandling::kKeep;
  }
  const std::string gpu = cc ? fmt::format("compute capability {}.{}", cc / 10, cc % 10)
                             : std::string("an unknown compute capability");
  const bool fp8 = format == StoredFormat::kFp8 || format == StoredFormat::kFp8Block;
  if (cc == 0) {
    assumptions.push_back(
        fmt::format("weights as stored ({}): the GPU's compute capability is "
                    "unknown, so the engine is assumed to run {} natively",
                    name, name));
    return StoredHandling::kKeep;
  }
  if (engine == Engine::kTransformers) {
    if (fp8 && cc < 89) {
      assumptions.push_back(fmt::format(
          "transformers runs FP8 only at compute capability >= 8.9 (quantizer_finegrained_fp8.py); "
          "on {} the {} weights are dequantized to the compute dtype (older releases refuse)",
          gpu, name));
      return StoredHandling::kDequantize;
    }
    if (format == StoredFormat::kMxfp4 && cc < 75) {
      assumptions.push_back(fmt::format(
          "transformers runs MXFP4 only at compute capability >= 7.5 (quantizer_mxfp4.py); on {} "
          "the experts are dequantized to bfloat16",
          gpu));
      return StoredHandling::kDequantize;
    }
    assumptions.push_back(
        fmt::format("weights as stored ({}): transformers runs it on {}", name, gpu));
    return StoredHandling::kKeep;
  }
  // vLLM and SGLang: Fp8Config, Mxfp4Config and ModelOptNvFp4Config need compute capability 8.0;
  // below the native one (8.9 FP8, 9.0 MXFP4, 10.0 NVFP4) Marlin weight-only kernels keep the
  // stored bytes.
  const std::string eng(EngineName(engine));
  if ((fp8 || format == StoredFormat::kMxfp4 || format == StoredFormat::kNvfp4) && cc < 80) {
    return MakeError(
        "{}: {} checkpoints need compute capability 8.0 (get_min_capability), the GPU "
        "has {}.{}: use --quant none (dequantized) or another GPU",
        eng, name, cc / 10, cc % 10);
  }
  const uint32_t native = fp8                              ? 89
                          : format == StoredFormat::kMxfp4 ? 90
                          : format == StoredFormat::kNvfp4 ? 100
                                                           : 0;
  if (native && cc < native) {
    assumptions.push_back(
        fmt::format("weights as stored ({}): {} on {} uses Marlin weight-only "
                    "kernels (the weights stay {}; activations in 16-bit)",
                    name, eng, gpu, name));
  } else {
    assumptions.push_back(
        fmt::format("weights as stored ({}): {} runs it natively on {}", name, eng, gpu));
  }
  return StoredHandling::kKeep;
}

}  // namespace memfit
