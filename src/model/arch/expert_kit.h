#pragma once
// Routed experts that transformers holds fused (3-D gate_up_proj / down_proj: Qwen3.5, Gemma 4) as
// checkpoints store them: fused when unquantized, one quantized nn.Linear per expert and
// projection when quantized, as NVIDIA ModelOpt exports them (vLLM PR #41683; the "per-expert,
// un-fused" layout of nvidia/Qwen3.5 NVFP4 checkpoints).

#include <cstdint>
#include <string>

#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

struct FusedExpertsSpec {
  std::string path;       // the experts module: "model.layers.3.mlp.experts"
  uint64_t experts = 0;   // E
  uint64_t hidden = 0;    // H
  uint64_t width = 0;     // I, one expert's intermediate width
  bool in_first = false;  // Qwen3-VL: gate_up_proj [E, H, 2I], down_proj [E, I, H]
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
