// Idefics2 (model_type "idefics2": Idefics2ForConditionalGeneration), transformers
// models/idefics2/modeling_idefics2.py: model.vision_model is a SigLIP-style vision transformer
// without the pooling head and without a position_ids buffer (Idefics2VisionTransformer, as in
// idefics3.cc); model.connector.modality_projection is Idefics2MLP(vision H -> text intermediate
// -> text H: gate_proj, up_proj [text I, vision H], down_proj [text H, text I], no biases);
// model.connector.perceiver_resampler: latents [resampler_n_latents, text H], layers.N.
// {input_latents_norm, input_context_norm (RMSNorm over text H), self_attn.{q_proj
// [n_heads x head_dim, text H], k_proj and v_proj [num_key_value_heads x head_dim, text H], o_proj},
// post_attention_layernorm, mlp.{gate,up}_proj [4 x text H, text H] and down_proj}, norm;
// model.text_model is the mistral decoder of text_config (the mistral spec row's tensors); lm_head
// [vocab, text H], tied only with "tie_word_embeddings" (Idefics2Config defaults it to false).
// Absent fields: Idefics2VisionConfig, Idefics2PerceiverConfig and MistralConfig defaults.

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/vlm_families.h"

namespace memfit::arch {

Result<Model> BuildIdefics2(const HfConfig& c, const BuildOptions& o) {
  std::vector<std::string> defaulted;
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, TextSubConfig(c, "text_config", "mistral",
                                                       "MistralForCausalLM", defaulted));
  if (text.model_type() != "mistral") {
    return MakeError("{}: text_config.model_type \"{}\": memfit builds Idefics2 with a mistral "
                     "language model only; reading the safetensors headers gives an exact answer",
                     c.where(), text.model_type());
  }
  BuildOptions text_options = o;
  text_options.head_class.clear();
  MEMFIT_ASSIGN_OR_RETURN(Model language, BuildMistral(text, text_options));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision_sub, SubOrEmpty(c, "vision_config"));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig perceiver, SubOrEmpty(c, "perceiver_config"));
  // Idefics2VisionConfig defaults, where they differ from SiglipVisionConfig's (patch 32).
  nlohmann::json vision_json = vision_sub.raw();
  if (!vision_json.contains("patch_size")) vision_json["patch_size"] = 32;
  vision_json["vision_use_head"] = false;
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, HfConfig::FromJson(vision_json, vision_sub.where()));

  ModelBuilder b(c);
  Model& m = b.model();
  // Idefics2PerceiverConfig defaults.
  const uint64_t latents = Get(b, perceiver.UintOr("resampler_n_latents", 64));
  const uint64_t depth = Get(b, perceiver.UintOr("resampler_depth", 3));
  const uint64_t heads = Get(b, perceiver.UintOr("resampler_n_heads", 16));
  const uint64_t head_dim = Get(b, perceiver.UintOr("resampler_head_dim", 96));
  const uint64_t kv_heads = Get(b, perceiver.UintOr("num_key_value_heads", 4));
  if (b.failed()) return b.Finish();
  const uint64_t th = language.hp.hidden_size;
  const uint64_t ti = language.hp.intermediate_size;
  b.SetComponent("vision_model");
  const uint64_t vh =
      EmitClipVision(b, vision, "model.vision_model", /*siglip=*/true, /*position_ids=*/false);
  if (b.failed()) return b.Finish();
  b.SetComponent("connector");
  const std::string mp = "model.connector.modality_projection";
  GatedMlp(b, mp, vh, ti, th);
  const std::string pr = "model.connector.perceiver_resampler";
  b.Param(pr + ".latents", {latents, th});
  const uint64_t q_width = MulDims(b, heads, head_dim, "resampler_n_heads x resampler_head_dim");
  const uint64_t kv_width =
      MulDims(b, kv_heads, head_dim, "num_key_value_heads x resampler_head_dim");
  const uint64_t mlp = MulDims(b, th, 4, "4 x text hidden_size");
  for (uint64_t i = 0; i < depth && !b.failed(); ++i) {
    const std::string l = Layer(pr + ".layers", i);
    b.RmsNorm(l + ".input_latents_norm", th);
    b.RmsNorm(l + ".input_context_norm", th);
    b.Linear(l + ".self_attn.q_proj", th, q_width, false);
    b.Linear(l + ".self_attn.k_proj", th, kv_width, false);
    b.Linear(l + ".self_attn.v_proj", th, kv_width, false);
    b.Linear(l + ".self_attn.o_proj", q_width, th, false);
    b.RmsNorm(l + ".post_attention_layernorm", th);
    GatedMlp(b, l + ".mlp", th, mlp, th);
  }
  b.RmsNorm(pr + ".norm", th);
  if (b.failed()) return b.Finish();
  AppendLanguageModel(m, std::move(language), c, std::move(defaulted), "model.text_model",
                      "lm_head", "text_model");
  m.no_split_patterns = {"model.vision_model.encoder.layers.*",
                         "model.connector.perceiver_resampler.layers.*",
                         "model.text_model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
