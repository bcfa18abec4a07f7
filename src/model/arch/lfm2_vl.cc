// LFM2-VL (model_type "lfm2-vl", also spelled "lfm2_vl": Lfm2VlForConditionalGeneration,
// LiquidAI/LFM2-VL-450M and -1.6B; issue 30), as transformers (models/lfm2_vl/
// {modeling,configuration}_lfm2_vl.py) loads it and the Hub checkpoints, saved after
// transformers 4.52, store it:
// - model.vision_tower.vision_model.*: a Siglip2VisionModel (NaFlex) from vision_config
//   (clip.cc EmitSiglip2Vision; Siglip2VisionConfig's defaults);
// - model.multi_modal_projector (Lfm2VlMultiModalProjector): pixel unshuffle by
//   "downsample_factor" (default 2), then layer_norm (LayerNorm over vision H x factor^2, with
//   "projector_use_layernorm", default true), linear_1 [projector_hidden_size (default 2560),
//   vision H x factor^2] and linear_2 [text H, projector_hidden_size], biased with
//   "projector_bias" (default true), GELU between;
// - model.language_model.* and lm_head: the lfm2 (or lfm2_moe) text model of text_config
//   (lfm2.cc), lm_head tied to the embeddings as the text config says (Lfm2Config: tied).
// A composition, not a spec row: the towers are not a decoder.

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"
#include "model/arch/issue30_families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/vlm_families.h"

namespace memfit::arch {

Result<Model> BuildLfm2Vl(const HfConfig& c, const BuildOptions& o) {
  std::vector<std::string> defaulted;
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text,
                          TextSubConfig(c, "text_config", "lfm2", "Lfm2ForCausalLM", defaulted,
                                        StoredAndLoadedNames("model.language_model", "lm_head")));
  if (text.model_type() != "lfm2" && text.model_type() != "lfm2_moe") {
    return MakeError("{}: text_config.model_type \"{}\": memfit builds LFM2-VL with an lfm2 or "
                     "lfm2_moe language model only; reading the safetensors headers gives an "
                     "exact answer", c.where(), text.model_type());
  }
  BuildOptions text_options = o;
  text_options.head_class.clear();
  MEMFIT_ASSIGN_OR_RETURN(Model language, text.model_type() == "lfm2"
                                              ? BuildLfm2(text, text_options)
                                              : BuildLfm2Moe(text, text_options));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, SubOrEmpty(c, "vision_config"));

  ModelBuilder b(c);
  Model& m = b.model();
  if (m.architecture.empty()) m.architecture = "Lfm2VlForConditionalGeneration";
  const uint64_t factor = Get(b, c.UintOr("downsample_factor", 2));
  const uint64_t projector = Get(b, c.UintOr("projector_hidden_size", 2560));
  const bool bias = Get(b, c.BoolOr("projector_bias", true));
  const bool norm = Get(b, c.BoolOr("projector_use_layernorm", true));
  if (!b.failed() && (factor == 0 || factor > 64)) {
    return MakeError("{}: \"downsample_factor\" = {} must be in 1..64", c.where(), factor);
  }
  if (!b.failed() && projector == 0) {
    return MakeError("{}: \"projector_hidden_size\" must not be zero", c.where());
  }
  b.SetComponent("vision_tower");
  const uint64_t vh = EmitSiglip2Vision(b, vision, "model.vision_tower.vision_model");
  if (b.failed()) return b.Finish();
  const uint64_t in = MulDims(b, vh, factor * factor, "vision hidden_size x downsample_factor^2");
  b.SetComponent("multi_modal_projector");
  if (norm) b.LayerNorm("model.multi_modal_projector.layer_norm", in);
  b.Linear("model.multi_modal_projector.linear_1", in, projector, bias);
  b.Linear("model.multi_modal_projector.linear_2", projector, language.hp.hidden_size, bias);
  if (b.failed()) return b.Finish();
  AppendLanguageModel(m, std::move(language), c, std::move(defaulted), "model.language_model",
                      "lm_head", "language_model");
  // The children's _no_split_modules: Siglip2EncoderLayer (and embeddings), Lfm2DecoderLayer.
  m.no_split_patterns = {"model.vision_tower.vision_model.embeddings",
                         "model.vision_tower.vision_model.encoder.layers.*",
                         "model.language_model.layers.*"};
  return b.Finish();
}

}  // namespace memfit::arch
