#pragma once
// The Qwen vision towers (Tensor::component "vision_tower"): Qwen2-VL, Qwen2.5-VL, Qwen3-VL /
// Qwen3.5, Qwen2.5-Omni and Qwen3-Omni, one VisionTowerSpec row each, and the Qwen-VL composites
// (qwen_vision.cc, whose comments name their transformers modules).

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

// A Qwen-VL composite (qwen_vision.cc), registered with the VlmSpec rows (vlm_families.cc): the
// text model built by `text_builder` from "text_config" (or the top level for configs without
// one) as model.language_model.* (model.* in `top_level_layout` without text_config), lm_head at
// the top, then the tower under model.visual (visual).
struct QwenVlSpec {
  ArchitectureBuilderFn text_builder = nullptr;
  const char* text_class = "";  // the causal-LM class the text builder builds
  QwenVision vision = QwenVision::kQwen3Vl;
  bool top_level_layout = false;
};
Result<Model> BuildQwenVl(const HfConfig& config, const BuildOptions& options,
                          const QwenVlSpec& spec);
extern const QwenVlSpec kQwen2Vl, kQwen25Vl, kQwen3Vl, kQwen3VlMoe;

}  // namespace memfit::arch
