// The vision-language composites as VlmSpec rows (multimodal_kit.h), one per checkpoint layout;
// each comment names the transformers module it follows. Absent text_config fields take the text
// config class's defaults (TextSubConfig), absent vision_config fields the tower row's.

#include "model/arch/vlm_families.h"

#include <fmt/format.h>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/families.h"
#include "model/arch/issue30_families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/qwen_vision.h"
#include "model/arch/table_row.h"

namespace memfit::arch {
namespace {

using enum VlmOp;
using enum VlmDim;
constexpr VisionBias kProjectorBias = VisionBias::kConfig;

// LlavaNextVideoPooler: AvgPool2d/MaxPool2d have no parameters; "spatial_pool_mode" "conv" is a
// Conv2d(V, "spatial_pool_out_channels" (default V), spatial_pool_stride) with bias.
void LlavaNextVideoResampler(ModelBuilder& b, const HfConfig& c, const VlmSpec&,
                             const VlmSizes& z) {
  const std::string pool = Get(b, c.StringOr("spatial_pool_mode", "average"));
  const uint64_t stride = Get(b, c.UintOr("spatial_pool_stride", 2));
  if (b.failed()) return;
  if (pool != "average" && pool != "max" && pool != "conv") {
    return b.Fail(
        MakeError("{}: \"spatial_pool_mode\" = \"{}\" is not \"average\", \"max\" or "
                  "\"conv\"",
                  c.where(), pool));
  }
  if (pool != "conv") return;
  if (stride == 0 || stride > 64) {
    return b.Fail(
        MakeError("{}: \"spatial_pool_stride\" = {} must be in 1..64", c.where(), stride));
  }
  const uint64_t out = Get(b, c.UintOr("spatial_pool_out_channels", z.vision));
  b.SetComponent("vision_resampler");
  b.Conv("vision_resampler.pool", z.vision, out, {stride, stride}, true);
}

// Idefics2PerceiverResampler, Idefics2PerceiverConfig's defaults: latents [resampler_n_latents,
// T], layers.N.{input_latents_norm, input_context_norm (RMSNorm over T), self_attn.{q_proj
// [n_heads x head_dim, T], k_proj and v_proj [num_key_value_heads x head_dim, T], o_proj},
// post_attention_layernorm, mlp.{gate,up}_proj [4T, T] and down_proj}, norm.
void Idefics2Perceiver(ModelBuilder& b, const HfConfig& c, const VlmSpec&, const VlmSizes& z) {
  auto perceiver = SubOrEmpty(c, "perceiver_config");
  if (!perceiver) return b.Fail(perceiver.error());
  const uint64_t latents = Get(b, perceiver->UintOr("resampler_n_latents", 64));
  const uint64_t depth = Get(b, perceiver->UintOr("resampler_depth", 3));
  const uint64_t heads = Get(b, perceiver->UintOr("resampler_n_heads", 16));
  const uint64_t head_dim = Get(b, perceiver->UintOr("resampler_head_dim", 96));
  const uint64_t kv_heads = Get(b, perceiver->UintOr("num_key_value_heads", 4));
  if (b.failed()) return;
  const uint64_t th = z.text;
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
}

// PaliGemmaConfig.__init__: the sub-configs it builds when none is given (SigLIP so400m at 224 px
// without the pooling head; an 18-layer gemma of hidden 2048), not the sub-config classes'.
Result<HfConfig> PaliGemmaDefaults(const HfConfig& c) {
  nlohmann::json top = c.raw();
  if (!top.contains("vision_config") || top["vision_config"].is_null()) {
    top["vision_config"] = {{"intermediate_size", 4096}, {"hidden_size", 1152},
                            {"patch_size", 14},          {"image_size", 224},
                            {"num_hidden_layers", 27},   {"num_attention_heads", 16},
                            {"vision_use_head", false}};
  }
  if (!top.contains("text_config") || top["text_config"].is_null()) {
    top["text_config"] = {{"model_type", "gemma"},
                          {"hidden_size", 2048},
                          {"num_hidden_layers", 18},
                          {"intermediate_size", 16384},
                          {"num_attention_heads", 8},
                          {"num_key_value_heads", 1},
                          {"vocab_size", c.raw().value("vocab_size", nlohmann::json(257152))}};
  }
  return HfConfig::FromJson(std::move(top), c.where());
}

// The text models a LLaVA-NeXT checkpoint uses, each built by its registered builder.
const std::vector<VlmText> kLlavaNextTexts = {
    {"llama", "LlamaForCausalLM"}, {"mistral", "MistralForCausalLM"},
    {"qwen2", "Qwen2ForCausalLM"}, {"qwen3", "Qwen3ForCausalLM"},
    {"gemma", "GemmaForCausalLM"}, {"mixtral", "MixtralForCausalLM"}};
constexpr const char* kLlavaNextPhrase = "a llama, mistral, qwen2, qwen3, gemma or mixtral";
const std::vector<std::pair<const char*, const VisionTowerSpec*>> kClipOrSiglip = {
    {"clip_vision_model", &kClipVisionTower}, {"siglip_vision_model", &kSiglipVisionTower}};
// LlavaNextConfig / LlavaNextVideoConfig's vision_config: CLIP ViT-L/14 at 336 px.
constexpr const char* kClipL336 =
    R"({"model_type": "clip_vision_model", "intermediate_size": 4096, "hidden_size": 1024,
        "patch_size": 14, "image_size": 336, "num_hidden_layers": 24, "num_attention_heads": 16})";
// multi_modal_projector.{linear_1 [T, V x feature layers], linear_2 [T, T]}, biased with
// "multimodal_projector_bias".
const VlmItem kLlavaLinear1 = {kLinear, "linear_1", kVisionFeatures, kText, kProjectorBias};
const VlmItem kLlavaLinear2 = {kLinear, "linear_2", kText, kText, kProjectorBias};

// LLaVA-NeXT (LlavaNextForConditionalGeneration, models/llava_next/modeling_llava_next.py; the
// 4.42 names of llava-hf checkpoints): vision_tower.vision_model.* (CLIP, or SigLIP by
// vision_config's model_type), the llava projector, image_newline [T], language_model.model.*
// and language_model.lm_head.
const VlmSpec kLlavaNext = {
    .text_default = "llama",
    .texts = kLlavaNextTexts,
    .texts_phrase = kLlavaNextPhrase,
    .vision_default = kClipL336,
    .towers = kClipOrSiglip,
    .vision_type = "clip_vision_model",
    .bias_key = "multimodal_projector_bias",
    .bias_default = true,
    .connector = {kLlavaLinear1, kLlavaLinear2, {kImageNewline}},
    .no_split = {"vision_tower.vision_model.encoder.layers.*", "language_model.model.layers.*"},
};

// LLaVA-NeXT-Video (modeling_llava_next_video.py): LLaVA-NeXT plus the vision_resampler.
const VlmSpec kLlavaNextVideo = [] {
  VlmSpec s = kLlavaNext;
  s.connector.insert(s.connector.begin(), {kHook});
  s.extra = LlavaNextVideoResampler;
  return s;
}();

// LLaVA-OneVision (modeling_llava_onevision.py): LLaVA-NeXT's layout with a SigLIP tower by
// default and a qwen2 text model by default; vision_config is required.
const VlmSpec kLlavaOnevision = [] {
  VlmSpec s = kLlavaNext;
  s.text_default = "qwen2";
  s.vision_default = nullptr;
  s.vision_type = "siglip_vision_model";
  return s;
}();

// Gemma 3 (Gemma3ForConditionalGeneration, transformers 4.50 models/gemma3/modeling_gemma3.py;
// google/gemma-3-*-it's index): SigLIP (its head per "vision_use_head"), the projector's
// Parameter and RMSNorm over V, the gemma3_text row's decoder, lm_head tied by default.
const VlmSpec kGemma3 = {
    .architecture = "Gemma3ForConditionalGeneration",
    .text_default = "gemma3_text",
    .texts = {{"gemma3_text", "Gemma3ForCausalLM", BuildGemma3Text}},
    .texts_phrase = "a gemma3_text",
    .towers = {{"siglip_vision_model", &kSiglipVisionTower}},
    .connector = {{kParam, "mm_input_projection_weight", kVision, kText},
                  {kRmsNorm, "mm_soft_emb_norm"}},
    // 4.50 Gemma3PreTrainedModel._no_split_modules: Gemma3DecoderLayer, SiglipVisionEmbeddings,
    // SiglipEncoderLayer, SiglipMultiheadAttentionPoolingHead.
    .no_split = {"vision_tower.vision_model.embeddings",
                 "vision_tower.vision_model.encoder.layers.*", "language_model.model.layers.*"},
};

// PaliGemma 1 and 2 (PaliGemmaForConditionalGeneration, models/paligemma/modeling_paligemma.py;
// google/paligemma*-*'s index): SigLIP (its head per vision_config), multi_modal_projector.linear
// [projection_dim, V] with bias (configuration_paligemma.py: top-level "projection_dim", default
// 2048), a gemma (PaliGemma 1) or gemma2 (PaliGemma 2) decoder, lm_head tied by the text config.
const VlmSpec kPaliGemma = {
    .family = "PaliGemma",
    .architecture = "PaliGemmaForConditionalGeneration",
    .text_default = "gemma",
    .texts = {{"gemma", "GemmaForCausalLM", BuildGemma},
              {"gemma2", "Gemma2ForCausalLM", BuildGemma2}},
    .texts_phrase = "a gemma or gemma2",
    .prepare = PaliGemmaDefaults,
    .towers = {{"siglip_vision_model", &kSiglipVisionTower}},
    .width = {"projection_dim", 2048},
    .connector = {{kLinear, "linear", kVision, kWidth, VisionBias::kBias}},
    // PaliGemmaPreTrainedModel._no_split_modules: ["PaliGemmaMultiModalProjector"] and the
    // children's (SigLIP embeddings and encoder layers, Gemma/Gemma2 decoder layers).
    .no_split = {"vision_tower.vision_model.embeddings",
                 "vision_tower.vision_model.encoder.layers.*", "multi_modal_projector",
                 "language_model.model.layers.*"},
};

// Mistral 3 (Mistral3ForConditionalGeneration, transformers 4.50 models/mistral3/
// modeling_mistral3.py; Mistral-Small-3.1-24B-Instruct-2503): Pixtral, the patch merger and llava
// projector (biases with "multimodal_projector_bias"), a mistral or llama decoder.
extern const VlmSpec kMistral3Converted;
const VlmSpec kMistral3 = {
    .architecture = "Mistral3ForConditionalGeneration",
    .text_default = "mistral",
    .texts = {{"mistral", "MistralForCausalLM", BuildMistral},
              {"llama", "MistralForCausalLM", BuildLlama}},
    .otherwise = &kMistral3Converted,
    .towers = {{"pixtral", &kPixtralVisionTower}},
    .vision_prefix = "vision_tower",
    .bias_key = "multimodal_projector_bias",
    .merge = {"spatial_merge_size", 2},
    .connector = {{kRmsNorm, "norm"},
                  {kLinear, "patch_merger.merging_layer", kVisionMerged, kVision},
                  kLlavaLinear1,
                  kLlavaLinear2},
    // The children's _no_split_modules: PixtralAttentionLayer, MistralDecoderLayer.
    .no_split = {"vision_tower.transformer.layers.*", "language_model.model.layers.*"},
};

// Mistral 3 with any other text model (Mistral-Small-4-119B-2603: "mistral4", issue 30), built by
// that model_type's registered builder in the layout transformers 5's converter writes
// (models/mistral4/convert_mistral4_weight_to_hf.py): model.vision_tower.*,
// model.multi_modal_projector.*, model.language_model.* and lm_head.
const VlmSpec kMistral3Converted = [] {
  VlmSpec s = kMistral3;
  s.texts = {{"mistral4", "Mistral4ForCausalLM"}, {nullptr, "MistralForCausalLM"}};
  s.otherwise = nullptr;
  s.vision_prefix = "model.vision_tower";
  s.projector = "model.multi_modal_projector";
  s.language_prefix = "model.language_model";
  s.head = "lm_head";
  s.no_split = {"model.vision_tower.transformer.layers.*", "model.language_model.layers.*"};
  return s;
}();

// Idefics2 (Idefics2ForConditionalGeneration, models/idefics2/modeling_idefics2.py):
// model.vision_model (Idefics2VisionTransformer: SigLIP's without the head and position_ids, patch
// 32 by default), model.connector.modality_projection (Idefics2MLP: V -> TI -> T, no biases) and
// perceiver_resampler, model.text_model (mistral), lm_head tied only with "tie_word_embeddings".
const VlmSpec kIdefics2 = {
    .family = "Idefics2",
    .text_default = "mistral",
    .texts = {{"mistral", "MistralForCausalLM", BuildMistral}},
    .texts_phrase = "a mistral",
    .carry_quantization = false,
    .towers = {{"idefics2_vision", &kIdefics2VisionTower}},
    .vision_prefix = "model.vision_model",
    .vision_component = "vision_model",
    .projector = "model.connector",
    .projector_component = "connector",
    .connector = {{kGatedProjection, "modality_projection"}, {kHook}},
    .extra = Idefics2Perceiver,
    .language_prefix = "model.text_model",
    .head = "lm_head",
    .language_component = "text_model",
    .no_split = {"model.vision_model.encoder.layers.*",
                 "model.connector.perceiver_resampler.layers.*", "model.text_model.layers.*"},
    .base_model_prefix = "model.",
};

// Idefics3's text_config as Idefics3ForConditionalGeneration reads it: required, with the top
// level's torch_dtype / dtype where it has none and the top level's tie (tie_weights reads the
// top config).
Result<HfConfig> Idefics3Text(const HfConfig& c) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, c.Sub("text_config"));
  nlohmann::json top = c.raw();
  nlohmann::json& t = top["text_config"];
  for (const char* key : {"torch_dtype", "dtype"}) {
    if (!t.contains(key) && c.Has(key)) t[key] = c.raw()[key];
  }
  if (c.Has("tie_word_embeddings")) t["tie_word_embeddings"] = c.raw()["tie_word_embeddings"];
  return HfConfig::FromJson(std::move(top), c.where());
}

// Idefics3 (Idefics3ForConditionalGeneration, models/idefics3/modeling_idefics3.py; SmolVLM,
// granite-docling): the pixel-shuffle projection (Idefics3SimpleMLP), a llama text model whose
// absent fields are left to the llama builder and whose quantization_config is not carried.
const VlmSpec kIdefics3 = {
    .family = "Idefics3",
    .text_default = "llama",
    .texts = {{"llama", "LlamaForCausalLM", BuildLlama}},
    .texts_phrase = "a llama",
    .carry_quantization = false,
    .class_defaults = false,
    .quantization_notes = false,
    .prepare = Idefics3Text,
    .vision_default = nullptr,
    .towers = {{"idefics3_vision", &kIdefics3VisionTower}},
    .vision_prefix = "model.vision_model",
    .vision_component = "vision_model",
    .projector = "model.connector",
    .projector_component = "connector",
    .merge = {"scale_factor", 2},
    .connector = {{kLinear, "modality_projection.proj", kVisionMerged, kText}},
    .language_prefix = "model.text_model",
    .head = "lm_head",
    .language_component = "text_model",
    .no_split = {"model.vision_model.encoder.layers.*.self_attn", "model.text_model.layers.*"},
    .base_model_prefix = "model.",
};

// LFM2-VL (Lfm2VlForConditionalGeneration, models/lfm2_vl/modeling_lfm2_vl.py; LiquidAI/LFM2-VL-
// 450M and -1.6B, issue 30) as its Hub checkpoints (saved after transformers 4.52) store it:
// SigLIP2, a pixel-unshuffle projector (layer_norm with "projector_use_layernorm"), lfm2(_moe).
const VlmSpec kLfm2Vl = {
    .family = "LFM2-VL",
    .architecture = "Lfm2VlForConditionalGeneration",
    .text_default = "lfm2",
    .texts = {{"lfm2", "Lfm2ForCausalLM", BuildLfm2},
              {"lfm2_moe", "Lfm2ForCausalLM", BuildLfm2Moe}},
    .texts_phrase = "an lfm2 or lfm2_moe",
    .towers = {{"siglip2_vision_model", &kSiglip2VisionTower}},
    .vision_prefix = "model.vision_tower.vision_model",
    .projector = "model.multi_modal_projector",
    .bias_key = "projector_bias",
    .bias_default = true,
    .merge = {"downsample_factor", 2},
    .width = {"projector_hidden_size", 2560},
    .width_nonzero = true,
    .connector = {{kLayerNorm, "layer_norm", kVisionMerged, kVisionMerged, VisionBias::kNone,
                   "projector_use_layernorm"},
                  {kLinear, "linear_1", kVisionMerged, kWidth, kProjectorBias},
                  {kLinear, "linear_2", kWidth, kText, kProjectorBias}},
    .language_prefix = "model.language_model",
    .head = "lm_head",
    .no_split = {"model.vision_tower.vision_model.embeddings",
                 "model.vision_tower.vision_model.encoder.layers.*",
                 "model.language_model.layers.*"},
};

}  // namespace

// LLaVA with a Pixtral vision tower (mistral-community/pixtral-12b, llava.cc): vision_tower.*,
// the llava projector, a mistral text model.
const VlmSpec kLlavaPixtral = {
    .family = "a Pixtral LLaVA",
    .architecture = "LlavaForConditionalGeneration",
    .text_default = "mistral",
    .texts = {{"mistral", "MistralForCausalLM", BuildMistral}},
    .texts_phrase = "a mistral",
    .towers = {{"pixtral", &kPixtralVisionTower}},
    .vision_prefix = "vision_tower",
    .bias_key = "multimodal_projector_bias",
    .bias_default = true,
    .connector = {kLlavaLinear1, kLlavaLinear2},
    .no_split = {"vision_tower.transformer.layers.*", "language_model.model.layers.*"},
};

const std::vector<ArchitectureBuilder>& VlmFamilyBuilders() {
  static const std::vector<ArchitectureBuilder> kRows = {
      {"gemma3", "", BuildRow<BuildVlm, kGemma3>, "gemma"},
      {"paligemma", "", BuildRow<BuildVlm, kPaliGemma>, "paligemma"},
      {"mistral3", "", BuildRow<BuildVlm, kMistral3>, "mistral3"},
      {"llava_next", "", BuildRow<BuildVlm, kLlavaNext>, "llava"},
      {"llava_next_video", "", BuildRow<BuildVlm, kLlavaNextVideo>, "llava"},
      {"llava_onevision", "", BuildRow<BuildVlm, kLlavaOnevision>, "llava"},
      {"idefics2", "", BuildRow<BuildVlm, kIdefics2>, "idefics"},
      {"idefics3", "", BuildRow<BuildVlm, kIdefics3>, "idefics"},
      {"lfm2-vl", "", BuildRow<BuildVlm, kLfm2Vl>, "lfm2"},  // Lfm2VlConfig.model_type
      {"lfm2_vl", "", BuildRow<BuildVlm, kLfm2Vl>, "lfm2"},
      {"qwen3_vl", "", BuildRow<BuildQwenVl, kQwen3Vl>, "qwen3_vl"},
      {"qwen3_vl_moe", "", BuildRow<BuildQwenVl, kQwen3VlMoe>, "qwen3_vl"},
      {"qwen2_vl", "", BuildRow<BuildQwenVl, kQwen2Vl>, "qwen2_vl"},
      {"qwen2_5_vl", "", BuildRow<BuildQwenVl, kQwen25Vl>, "qwen2_vl"},
  };
  return kRows;
}

}  // namespace memfit::arch
