// Qwen2-VL and Qwen2.5-VL (qwen2_vl, qwen2_5_vl: Qwen2[_5]VLForConditionalGeneration): a Qwen2
// text model (q/k/v biases) and the Qwen2-VL / Qwen2.5-VL vision tower (qwen_vision.h). Two
// checkpoint layouts: configs with the text keys at the top level (transformers < 4.52, e.g.
// Qwen/Qwen2-VL-7B-Instruct, allenai/olmOCR-7B-0225-preview) store model.layers.* and visual.*;
// configs with a "text_config" (saved by transformers >= 4.52) store model.language_model.* and
// model.visual.*. lm_head at the top in both. Checked byte-exact against olmOCR-7B's index.
// Sources: transformers/models/qwen2_vl/modeling_qwen2_vl.py, qwen2_5_vl/modeling_qwen2_5_vl.py
// (and their checkpoint-conversion key mapping for the two layouts).

#include "model/arch/families.h"
#include "model/arch/qwen_vision.h"

namespace memfit::arch {
namespace {

Result<Model> BuildQwen2VlFamily(const HfConfig& c, const BuildOptions& o, QwenVision vision) {
  const bool nested = c.Has("text_config");
  return BuildQwenVl(c, o, {.text_builder = BuildQwen2, .text_class = "Qwen2ForCausalLM",
                            .text_prefix = nested ? "model.language_model" : "model",
                            .vision = vision,
                            .vision_prefix = nested ? "model.visual" : "visual"});
}

}  // namespace

Result<Model> BuildQwen2Vl(const HfConfig& c, const BuildOptions& o) {
  return BuildQwen2VlFamily(c, o, QwenVision::kQwen2Vl);
}
Result<Model> BuildQwen25Vl(const HfConfig& c, const BuildOptions& o) {
  return BuildQwen2VlFamily(c, o, QwenVision::kQwen25Vl);
}

}  // namespace memfit::arch
