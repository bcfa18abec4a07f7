#pragma once
// The Qwen vision towers as their checkpoints store them (Tensor::component "vision_tower"):
// Qwen2-VL, Qwen2.5-VL, Qwen3-VL / Qwen3.5, Qwen2.5-Omni and Qwen3-Omni, one row each in
// vision_tower.cc (whose comments name their transformers modules), and the Qwen-VL assembly.

#include <string>

#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

enum class QwenVision : uint8_t { kQwen2Vl, kQwen25Vl, kQwen3Vl, kQwen25Omni, kQwen3Omni };

// Emits the tower under `prefix` ("visual" or "model.visual") from the "vision_config" `v`,
// whose merger projects to `text_hidden` when the config names no out_hidden_size/hidden_size.
// With `q`, its linears (blocks, mergers) are nn.Linear modules as the quantized checkpoint
// stores them (QLinear: unquantized where the list excludes them, as Qwen's and NVIDIA's
// releases do).
void EmitQwenVision(ModelBuilder& b, const HfConfig& v, QwenVision kind, const std::string& prefix,
                    uint64_t text_hidden, const Quantization* q = nullptr);

struct QwenVlSpec {
  ArchitectureBuilderFn text_builder = nullptr;  // BuildQwen2, BuildQwen3, BuildQwen3Moe, ...
  std::string text_class;   // the causal-LM class the text builder builds ("Qwen3ForCausalLM")
  std::string text_prefix;  // where the checkpoint keeps the text model ("model.language_model")
  QwenVision vision = QwenVision::kQwen3Vl;
  std::string vision_prefix;  // "model.visual" or "visual"
};

// A Qwen vision-language model: the text model built by spec.text_builder from "text_config" (or
// from the top level for configs without one), its "model." tensors renamed to
// spec.text_prefix (lm_head kept), then the vision tower. Components "language_model" and
// "vision_tower"; hp from the text model. Shared by qwen_vision.cc (Qwen2-VL) and qwen3_vl.cc.
Result<Model> BuildQwenVl(const HfConfig& c, const BuildOptions& o, const QwenVlSpec& spec);

}  // namespace memfit::arch
