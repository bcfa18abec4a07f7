#include "model/logical_params.h"

#include <fmt/format.h>

#include <string_view>
#include <unordered_map>

#include "formats/hf_config_json.h"
#include "memfit/checked_math.h"

namespace memfit {
namespace {

bool IsPlainFloat(Dtype d) { return d == Dtype::kF32 || d == Dtype::kF16 || d == Dtype::kBF16; }

// compressed-tensors "config_groups".*."weights"."num_bits" of an integer scheme; 0 if none.
uint64_t PackedIntBits(const nlohmann::json* qc) {
  if (!qc || !qc->is_object()) return 0;
  auto groups = qc->find("config_groups");
  if (groups == qc->end() || !groups->is_object()) return 0;
  for (const auto& g : *groups) {
    if (!g.is_object()) continue;
    auto w = g.find("weights");
    if (w == g.end() || !w->is_object()) continue;
    auto bits = w->find("num_bits");
    if (bits != w->end() && bits->is_number_integer()) {
      const int64_t b = bits->get<int64_t>();
      if (b > 0 && b <= 32 && 32 % b == 0) return static_cast<uint64_t>(b);
    }
  }
  return 0;
}

}  // namespace

TensorSiblings::TensorSiblings(std::vector<Tensor>& tensors) : tensors_(tensors) {
  by_name_.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) by_name_.emplace(tensors[i].name, i);
}

Tensor* TensorSiblings::Find(std::string_view module, std::string_view leaf) {
  key_.assign(module);
  key_ += '.';
  key_ += leaf;
  auto it = by_name_.find(key_);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

LogicalParamsReport InferLogicalParams(std::vector<Tensor>& tensors,
                                       const nlohmann::json* quantization_config) {
  LogicalParamsReport report;
  TensorSiblings siblings(tensors);
  auto sibling = [&](std::string_view module, std::string_view leaf) {
    return siblings.Find(module, leaf);
  };
  const uint64_t packed_int_bits = PackedIntBits(quantization_config);
  size_t packed = 0, metadata = 0, unknown_int = 0;
  auto set = [&](Tensor& t, uint64_t logical) {
    if (logical == t.numel) return;
    t.logical_params = logical;
    ++(logical == 0 ? metadata : packed);
  };
  for (Tensor& t : tensors) {
    const size_t dot = t.name.rfind('.');
    if (dot == std::string::npos) continue;
    const std::string_view module = std::string_view(t.name).substr(0, dot);
    const std::string_view leaf = std::string_view(t.name).substr(dot + 1);
    // bitsandbytes: "<m>.weight.absmax", "<m>.weight.quant_state.bitsandbytes__nf4", "<m>.SCB".
    if (module.ends_with(".weight") && (leaf == "absmax" || leaf == "quant_map" ||
                                        leaf == "nested_absmax" || leaf == "nested_quant_map")) {
      set(t, 0);
      continue;
    }
    if (t.name.find(".weight.quant_state.") != std::string::npos) {
      set(t, 0);
      continue;
    }
    if (leaf == "SCB" || leaf == "weight_format") {
      if (const Tensor* w = sibling(module, "weight"); w && w->dtype == Dtype::kI8) set(t, 0);
      continue;
    }
    // Scales beside a quantized weight (ModelOpt, compressed-tensors, fp8 block, DeepSeek-V4).
    if (leaf == "weight_scale" || leaf == "weight_scale_2" || leaf == "input_scale" ||
        leaf == "weight_scale_inv" || leaf == "weight_zero_point" || leaf == "weight_shape" ||
        leaf == "weight_global_scale" || leaf == "input_global_scale" || leaf == "scale") {
      const Tensor* w = sibling(module, "weight");
      if (!w) w = sibling(module, "weight_packed");
      if (w && !IsPlainFloat(w->dtype)) set(t, 0);
      continue;
    }
    // KV-cache scales of FP8/NVFP4 releases: scalars on the attention module.
    if ((leaf == "k_scale" || leaf == "v_scale") && t.numel <= 1) {
      set(t, 0);
      continue;
    }
    if (leaf == "weight" && (t.dtype == Dtype::kU8 || t.dtype == Dtype::kI8) && !t.shape.empty()) {
      const uint64_t cols = t.shape.back();
      const Tensor* nv = sibling(module, "weight_scale");
      const Tensor* v4 = sibling(module, "scale");
      if (nv && nv->dtype == Dtype::kF8E4M3 && !nv->shape.empty() && nv->shape.back() * 8 == cols) {
        set(t, t.numel * 2);  // NVFP4: [out, in/2] bytes, a scale per 16 inputs
      } else if (v4 && v4->dtype == Dtype::kF8E8M0 && !v4->shape.empty() &&
                 v4->shape.back() * 16 == cols) {
        set(t, t.numel * 2);  // DeepSeek-V4 FP4: [out, in/2] bytes, a scale per 32 inputs
      } else if (t.dtype == Dtype::kU8 && sibling(t.name, "absmax")) {
        set(t, t.numel * 2);  // bitsandbytes 4-bit: [ceil(out*in/2), 1] bytes
      }
      continue;
    }
    // MXFP4 (gpt-oss): "<p>_blocks" uint8 [..., in/32, 16] with "<p>_scales" [..., in/32].
    if (leaf.ends_with("_blocks") && t.dtype == Dtype::kU8) {
      const std::string scales = std::string(leaf.substr(0, leaf.size() - 7)) + "_scales";
      if (sibling(module, scales)) set(t, t.numel * 2);
      continue;
    }
    if (leaf.ends_with("_scales") && t.dtype == Dtype::kU8) {
      const std::string blocks = std::string(leaf.substr(0, leaf.size() - 7)) + "_blocks";
      if (sibling(module, blocks)) set(t, 0);
      continue;
    }
    // GPTQ: qweight [in*bits/32, out], qzeros [groups, out*bits/32], scales [groups, out], g_idx.
    // AWQ GEMM: qweight [in, out*bits/32]. The shapes give bits and layout.
    if (leaf == "qzeros" || leaf == "scales" || leaf == "g_idx") {
      if (sibling(module, "qweight")) set(t, 0);
      continue;
    }
    if (leaf == "qweight" && t.shape.size() == 2) {
      const Tensor* zeros = sibling(module, "qzeros");
      const Tensor* scales = sibling(module, "scales");
      if (!zeros || !scales || zeros->shape.size() != 2 || scales->shape.size() != 2) continue;
      const uint64_t out = scales->shape[1];
      if (out == 0 || (zeros->shape[1] * 32) % out != 0) continue;
      const uint64_t bits = zeros->shape[1] * 32 / out;
      if (bits == 0 || 32 % bits != 0) continue;
      const uint64_t in = t.shape[1] == out ? t.shape[0] * (32 / bits) : t.shape[0];
      if (auto n = CheckedMul(in, out)) set(t, *n);
      continue;
    }
    // compressed-tensors pack-quantized: weight_packed int32 [out, in*bits/32].
    if (leaf == "weight_packed" && t.dtype == Dtype::kI32) {
      if (packed_int_bits == 0) {
        ++unknown_int;
      } else if (auto n = CheckedMul(t.numel, 32 / packed_int_bits)) {
        set(t, *n);
      }
      continue;
    }
  }
  if (packed > 0 || metadata > 0) {
    report.notes.push_back(fmt::format(
        "parameters are logical: {} packed quantized tensor(s) count the out x in parameters of "
        "their layer, {} quantization tensor(s) (scales, zero points, g_idx, quant state) count "
        "none; bytes as stored",
        packed, metadata));
  }
  if (unknown_int > 0) {
    report.assumptions.push_back(fmt::format(
        "{} int32 weight_packed tensor(s) counted as stored words: quantization_config names no "
        "integer num_bits, so their logical parameters are not known",
        unknown_int));
  }
  return report;
}

}  // namespace memfit
