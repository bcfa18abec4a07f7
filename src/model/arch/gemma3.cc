// Gemma 3 vision-language (model_type "gemma3": Gemma3ForConditionalGeneration), as
// transformers 4.50 (models/gemma3/modeling_gemma3.py) stores it and google/gemma-3-*-it's
// model.safetensors.index.json names it: vision_tower.vision_model.* (a SiglipVisionModel from
// vision_config, without the pooling head: "vision_use_head" false), multi_modal_projector.
// {mm_input_projection_weight [vision H, text H] (an nn.Parameter, no bias), mm_soft_emb_norm
// (Gemma3RMSNorm over vision H)}, language_model.model.* (the gemma3_text DecoderSpec row) and
// language_model.lm_head, tied to the text embeddings (Gemma3TextConfig "tie_word_embeddings"
// defaults to true). transformers >= 4.52 loads the same files under model.language_model.* and
// lm_head (its checkpoint conversion mapping); memfit keeps the stored names. text_config fields
// absent from config.json take Gemma3TextConfig's defaults (gemma-3-4b-it's gives no vocab_size,
// heads or head_dim); vision_config's take SiglipVisionConfig's (Gemma3Config.sub_configs).

#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/vlm_families.h"

namespace memfit::arch {

Result<Model> BuildGemma3(const HfConfig& c, const BuildOptions& o) {
  std::vector<std::string> defaulted;
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, TextSubConfig(c, "text_config", "gemma3_text",
                                                       "Gemma3ForCausalLM", defaulted,
                                                       StoredAndLoadedNames("language_model.model", "language_model.lm_head")));
  MEMFIT_ASSIGN_OR_RETURN(Model language,
                          BuildTextOfType(c, text, "gemma3_text", BuildGemma3Text, o));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, SubOrEmpty(c, "vision_config"));

  ModelBuilder b(c);
  Model& m = b.model();
  if (m.architecture.empty()) m.architecture = "Gemma3ForConditionalGeneration";
  b.SetComponent("vision_tower");
  const uint64_t vision_hidden = EmitClipVision(b, vision, "vision_tower.vision_model",
                                                /*siglip=*/true);
  if (b.failed()) return b.Finish();
  b.SetComponent("multi_modal_projector");
  b.Param("multi_modal_projector.mm_input_projection_weight",
          {vision_hidden, language.hp.hidden_size});
  b.RmsNorm("multi_modal_projector.mm_soft_emb_norm", vision_hidden);
  if (b.failed()) return b.Finish();
  AppendLanguageModel(m, std::move(language), c, std::move(defaulted), "language_model.model",
                      "language_model.lm_head", "language_model");
  // 4.50 Gemma3PreTrainedModel._no_split_modules: ["Gemma3DecoderLayer", "SiglipVisionEmbeddings",
  // "SiglipEncoderLayer", "SiglipMultiheadAttentionPoolingHead"].
  m.no_split_patterns = {"vision_tower.vision_model.embeddings",
                         "vision_tower.vision_model.encoder.layers.*",
                         "language_model.model.layers.*"};
  return b.Finish();
}

}  // namespace memfit::arch
