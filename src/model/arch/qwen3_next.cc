// The Qwen3-Next / Qwen3.5 hybrid text model of qwen_hybrid.h (not a HybridSpec row: its layers,
// MTP module and vision composite are qwen_hybrid.h's, shared with qwen4_exp.cc), one builder:
// - qwen3_next (Qwen3NextForCausalLM): under "model." (gated delta-net layers with fused
//   in_proj_qkvz/in_proj_ba, every full_attention_interval-th layer gated full attention, routed
//   experts stored per expert with a gated shared expert), lm_head, and one multi-token-prediction
//   layer (mtp.*) that the checkpoint stores and transformers does not load. Sources:
//   transformers/models/qwen3_next/modular_qwen3_next.py, vLLM qwen3_next_mtp.py
//   (num_nextn_predict_layers, default 1).
// - qwen3_5 / qwen3_5_moe (Qwen3.5 / Qwen3.6, Qwen3_5[Moe]ForConditionalGeneration): the model
//   from "text_config" under model.language_model (gated delta-net layers with split
//   in_proj_qkv/z/b/a, gated full attention every full_attention_interval-th layer, dense MLPs or
//   routed experts stored fused as mlp.experts.gate_up_proj [E, 2I, H] and down_proj [E, H, I]
//   plus a gated shared expert), lm_head at the top, the Qwen3-VL vision tower without deepstack
//   mergers under model.visual, and "mtp_num_hidden_layers" MTP layers (mtp.*, experts stored per
//   expert) that transformers does not load. A_log and linear_attn.norm.weight are float32 in the
//   Qwen3.5 checkpoints (bfloat16 in Qwen3.6's: an assumption is recorded).
// - qwen3_5_text / qwen3_5_moe_text (Qwen3_5[Moe]ForCausalLM): the language model alone under
//   model.* (transformers' Qwen3_5ForCausalLM), with its MTP layers.
// Quantized (ModelOpt NVFP4 / MIXED_PRECISION) routed experts are stored per expert
// (expert_kit.h), lm_head quantized when the config lists it.
// Sources: transformers/models/qwen3_5/modular_qwen3_5.py, qwen3_5_moe/modular_qwen3_5_moe.py,
// vLLM qwen3_5.py / qwen3_5_mtp.py; vLLM PR #51836 for the float32 tensors.

#include <optional>

#include "model/arch/decoder_kit.h"
#include "model/arch/qwen_hybrid.h"

namespace memfit::arch {

Result<Model> BuildQwenHybridModel(const HfConfig& c, const BuildOptions& o, QwenHybridModel kind) {
  const bool next = kind == QwenHybridModel::kNext;
  const bool composite = kind == QwenHybridModel::kComposite35;
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, composite ? QwenTextConfig(c) : Result<HfConfig>(c));
  std::optional<HfConfig> vision;
  if (composite) {
    auto sub = c.Sub("vision_config");
    if (!sub) return sub.error();
    vision = *sub;
  }
  ModelBuilder b(text);
  Model& m = b.model();
  if (composite) {
    FillCommon(c, m);  // the top level's model_type, architecture and dtype
    if (!m.config_dtype) m.config_dtype = text.torch_dtype();
  }
  Quantization q = ReadQuantization(b, text, o);
  const QwenHybridSpec spec{.prefix = composite ? "model.language_model" : "model",
                            .split_in_proj = !next,
                            .layout = next ? ExpertLayout::kPerExpert : ExpertLayout::kFused,
                            .float32_gdn_params = !next,
                            .default_mtp_layers = next ? 1u : 0u};
  if (composite) b.SetComponent("language_model");
  const uint64_t mtp = EmitQwenHybridText(b, text, q, spec);
  if (b.failed()) return b.Finish();
  if (composite) {
    EmitQwenVlTowerAndHead(b, c, *vision, q);
  } else if (next) {
    TaskHead(b, c, o, "model.embed_tokens");
  } else {
    QwenLmHead(b, q, "model.embed_tokens");
  }
  EmitQwenMtp(b, text, q, spec, mtp);
  NoteQuantization(b, q);
  if (!next) {
    m.assumptions.push_back(
        "linear_attn.A_log and linear_attn.norm.weight stored in float32, as in the Qwen3.5 "
        "checkpoints (Qwen3.6 stores them in bfloat16: a few kilobytes less)");
  }
  m.no_split_patterns = {spec.prefix + ".layers.*"};
  if (composite) m.no_split_patterns.push_back("model.visual.blocks.*");
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
