#pragma once
// Routed experts that transformers holds fused (3-D gate_up_proj / down_proj parameters: Qwen3.5,
// Gemma 4) as checkpoints store them: fused when unquantized, one quantized nn.Linear per expert
// and projection when a quantization covers them. NVIDIA ModelOpt's export writes quantized
// fused experts per expert: <experts>.<e>.{gate,up,down}_proj.{weight, weight_scale,
// weight_scale_2, input_scale} (vLLM PR #41683: nvidia/Gemma-4-26B-A4B-NVFP4 fails on
// "layers.0.experts.0.down_proj.input_scale"; the modelopt layout "per-expert, un-fused" of
// nvidia/Qwen3.5 NVFP4 checkpoints that SGLang and vLLM load through their per-expert mapping).

#include <cstdint>
#include <string>

#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

struct FusedExpertsSpec {
  std::string path;            // the experts module: "model.layers.3.mlp.experts"
  uint64_t experts = 0;        // E
  uint64_t hidden = 0;         // H
  uint64_t width = 0;          // I, one expert's intermediate width
  bool in_first = false;       // Qwen3-VL: gate_up_proj [E, H, 2I], down_proj [E, I, H]
};

// The quantization that applies to the module `module`: `q` itself, except under ModelOpt's
// MIXED_PRECISION, where it is the method "quantized_layers" names for `module` (none when it is
// not listed), so that the linears under it (per-expert projections) take the parent's method.
Quantization QuantizationFor(const Quantization& q, const std::string& module);

// True when `q` quantizes the module `module` (not skipped; listed, under MIXED_PRECISION).
bool QuantizesModule(const Quantization& q, const std::string& module);

// The routed experts of `s`: unquantized, <path>.gate_up_proj [E, 2I, H] and <path>.down_proj
// [E, H, I] (transposed with in_first) in the builder's dtype; quantized, E x {gate,up,down}_proj
// as QLinear stores them (gate/up [I, H], down [H, I]).
void FusedExperts(ModelBuilder& b, const Quantization& q, const FusedExpertsSpec& s);

}  // namespace memfit::arch
