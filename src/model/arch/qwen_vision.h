#pragma once
// The Qwen vision towers as their checkpoints store them (Tensor::component "vision_tower").
// - Qwen2-VL (Qwen2VisionTransformerPretrainedModel): patch_embed.proj Conv3d without bias,
//   LayerNorm blocks with attn.qkv/proj and mlp.fc1/fc2, merger.ln_q + merger.mlp.{0,2}.
// - Qwen2.5-VL: RMSNorm blocks with a gated mlp.{gate,up,down}_proj (biases), merger.ln_q RMSNorm.
// - Qwen3-VL / Qwen3.5 (Qwen3VLVisionModel): patch_embed.proj Conv3d with bias, a learned
//   pos_embed, LayerNorm blocks with mlp.linear_fc1/fc2, merger.{norm,linear_fc1,linear_fc2} and
//   one deepstack merger per "deepstack_visual_indexes" entry (Qwen3.5 has none).
// - Qwen2.5-Omni (Qwen2_5OmniVisionEncoder): Qwen2.5-VL's tower with separate attn.q/k/v
//   projections (biased) in place of attn.qkv.
// - Qwen3-Omni (Qwen3OmniMoeVisionEncoder): Qwen3-VL's blocks, patch bias and pos_embed, with
//   Qwen2-style mergers (ln_q LayerNorm, mlp.0, mlp.2); the deepstack mergers are merger_list.N.
// Sources: transformers/models/qwen2_vl/modeling_qwen2_vl.py, qwen2_5_vl/modeling_qwen2_5_vl.py,
// qwen3_vl/modeling_qwen3_vl.py, qwen2_5_omni/modeling_qwen2_5_omni.py,
// qwen3_omni_moe/modeling_qwen3_omni_moe.py.

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
// "vision_tower"; hp from the text model. Shared by qwen2_vl.cc and qwen3_vl.cc.
Result<Model> BuildQwenVl(const HfConfig& c, const BuildOptions& o, const QwenVlSpec& spec);

}  // namespace memfit::arch
