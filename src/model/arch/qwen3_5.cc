// Qwen3.5 / Qwen3.6 (qwen3_5, qwen3_5_moe: Qwen3_5[Moe]ForConditionalGeneration): the hybrid text
// model of qwen_hybrid.h from "text_config" under model.language_model (gated delta-net layers
// with split in_proj_qkv/z/b/a, gated full attention every full_attention_interval-th layer,
// dense MLPs or routed experts stored fused as mlp.experts.gate_up_proj [E, 2I, H] and
// down_proj [E, H, I] plus a gated shared expert), lm_head at the top, the Qwen3-VL vision tower
// without deepstack mergers under model.visual, and "mtp_num_hidden_layers" MTP layers (mtp.*,
// experts stored per expert) that transformers does not load. A_log and linear_attn.norm.weight
// are float32 in the Qwen3.5 checkpoints (bfloat16 in Qwen3.6's: an assumption is recorded).
// qwen3_5_text / qwen3_5_moe_text (Qwen3_5[Moe]ForCausalLM) are the language model alone under
// model.*. Quantized (ModelOpt NVFP4 / MIXED_PRECISION) routed experts are stored per expert
// (expert_kit.h), lm_head quantized when the config lists it.
// Sources: transformers/models/qwen3_5/modular_qwen3_5.py, qwen3_5_moe/modular_qwen3_5_moe.py,
// vLLM qwen3_5.py / qwen3_5_mtp.py; vLLM PR #51836 for the float32 tensors.

#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/qwen_hybrid.h"

namespace memfit::arch {
namespace {

constexpr const char* kFloat32GdnAssumption =
    "linear_attn.A_log and linear_attn.norm.weight stored in float32, as in the Qwen3.5 "
    "checkpoints (Qwen3.6 stores them in bfloat16: a few kilobytes less)";

Result<Model> BuildQwen35Family(const HfConfig& c, const BuildOptions& o) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, QwenTextConfig(c));
  auto vision = c.Sub("vision_config");
  if (!vision) return vision.error();
  ModelBuilder b(text);
  Model& m = b.model();
  FillCommon(c, m);  // the top level's model_type, architecture and dtype
  if (!m.config_dtype) m.config_dtype = text.torch_dtype();
  Quantization q = ReadQuantization(b, text, o);
  const QwenHybridSpec spec{.prefix = "model.language_model",
                            .split_in_proj = true,
                            .layout = ExpertLayout::kFused,
                            .float32_gdn_params = true};
  b.SetComponent("language_model");
  const uint64_t mtp = EmitQwenHybridText(b, text, q, spec);
  if (b.failed()) return b.Finish();
  EmitQwenVlTowerAndHead(b, c, *vision, q);
  EmitQwenMtp(b, text, q, spec, mtp);
  NoteQuantization(b, q);
  m.assumptions.push_back(kFloat32GdnAssumption);
  m.no_split_patterns = {"model.language_model.layers.*", "model.visual.blocks.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

// qwen3_5_text / qwen3_5_moe_text (Qwen3_5[Moe]ForCausalLM): the language model alone, under
// "model." (transformers' Qwen3_5ForCausalLM), with its MTP layers.
Result<Model> BuildQwen35TextFamily(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  Quantization q = ReadQuantization(b, c, o);
  const QwenHybridSpec spec{.prefix = "model",
                            .split_in_proj = true,
                            .layout = ExpertLayout::kFused,
                            .float32_gdn_params = true};
  const uint64_t mtp = EmitQwenHybridText(b, c, q, spec);
  if (b.failed()) return b.Finish();
  QwenLmHead(b, q, "model.embed_tokens");
  EmitQwenMtp(b, c, q, spec, mtp);
  NoteQuantization(b, q);
  m.assumptions.push_back(kFloat32GdnAssumption);
  m.no_split_patterns = {"model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace

Result<Model> BuildQwen35(const HfConfig& c, const BuildOptions& o) {
  return BuildQwen35Family(c, o);
}
Result<Model> BuildQwen35Moe(const HfConfig& c, const BuildOptions& o) {
  return BuildQwen35Family(c, o);
}
Result<Model> BuildQwen35Text(const HfConfig& c, const BuildOptions& o) {
  return BuildQwen35TextFamily(c, o);
}

}  // namespace memfit::arch
