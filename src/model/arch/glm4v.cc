// The GLM vision-language family (transformers models/glm4v/modeling_glm4v.py,
// configuration_glm4v.py, models/glm4v_moe/modular_glm4v_moe.py):
// - glm4v (Glm4vForConditionalGeneration: GLM-4.1V-9B-Thinking/Base, GLM-4.6V-Flash): the glm4
//   spec row's text model under model.language_model, lm_head at the top;
// - glm4v_moe (Glm4vMoeForConditionalGeneration: GLM-4.5V, GLM-4.6V): the glm4_moe MLA row's text
//   model (mla_families.cc) under the same names, without q/k norms or MTP layers
//   (Glm4vMoeTextConfig removes use_qk_norm and num_nextn_predict_layers; GLM-4.5V stores layers
//   0-45 only);
// - the vision tower of both, model.visual: the kGlm4vVisionTower row below.
// A quantization_config (the FP8 releases) applies to the language model under the checkpoint's
// names (CarryQuantization); the tower is built unquantized, as those releases store it (SGLang's
// glm4v_moe.py: "VLM is not quantized"), with an assumption line when the list does not exclude it.

#include <fmt/format.h>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/qwen_hybrid.h"
#include "model/arch/vision_tower.h"
#include "model/arch/vlm_families.h"

namespace memfit::arch {
namespace {

using enum VisionOp;

// Glm4vVisionModel after its blocks: merger.{proj [out, out], post_projection_norm (LayerNorm),
// gate_proj/up_proj [intermediate_size, out], down_proj} without biases, post_conv_layernorm
// (RMSNorm), downsample Conv2d(H, out, spatial_merge_size) with bias. Its blocks' MLP is
// out_hidden_size wide (the row's intermediate); the merger's is intermediate_size.
void Glm4vMerger(ModelBuilder& b, const HfConfig& v, const VisionTowerSpec&, const VisionDims& d,
                 const std::string& p, const Quantization&) {
  const uint64_t inter = Get(b, v.UintOr("intermediate_size", 13696));
  b.Linear(p + ".merger.proj", d.out, d.out, false);
  b.LayerNorm(p + ".merger.post_projection_norm", d.out);
  GatedMlp(b, p + ".merger", d.out, inter, d.out);
  b.RmsNorm(p + ".post_conv_layernorm", d.hidden);
  b.Conv(p + ".downsample", d.hidden, d.out, {d.merge, d.merge}, true);
}

// Glm4vVisionModel (models/glm4v/modeling_glm4v.py), Glm4vVisionConfig's defaults (GLM-4.1V-9B):
// RMSNorms, a Conv3d patch with bias, qkv biased with "attention_bias", the blocks' gated MLP
// out_hidden_size wide, no other biases; Glm4vMerger.
const VisionTowerSpec kGlm4vVisionTower = {
    .hidden = {"hidden_size", 1536},
    .depth = {"depth", 24},
    .heads = {"num_heads", 12},
    .intermediate = {"out_hidden_size", 4096},
    .channels = {"in_channels", 3},
    .patch = {"patch_size", 14},
    .image = {"image_size", 336},
    .temporal = {"temporal_patch_size", 2},
    .merge = {"spatial_merge_size", 2},
    .out = {"out_hidden_size", 4096},
    .positions = VisionPositions::kGrid,
    .bias_key = "attention_bias",
    .rms_norm = true,
    .embeddings = {{kPositionTable, "embeddings.position_embedding"},
                   {kPositionIds, "embeddings.position_ids"},
                   {kPatchConv, "patch_embed.proj", VisionBias::kBias},
                   {kRotary, "rotary_pos_emb.inv_freq"}},
    .layers = "blocks",
    .layer = {{kNorm, "norm1"},
              {kNorm, "norm2"},
              {kQkv, "attn.qkv", VisionBias::kConfig},
              {kOut, "attn.proj"},
              {kGatedMlp, "mlp"}},
    .tail = {{kExtra}, {kNorm, "post_layernorm"}},
    .extra = Glm4vMerger};

// The text model's config as the glm4 / glm4_moe builder reads it: text_config (or, for configs
// without one, the top level: Glm4vConfig builds its text config from the top-level fields then),
// with the top level's dtype, tie and quantization_config (QwenTextConfig), the causal-LM class
// of the text builder, and partial_rotary_factor from rope_parameters where transformers 5 keeps
// it.
Result<nlohmann::json> Glm4vTextJson(const HfConfig& c, std::string_view causal_lm_class) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, QwenTextConfig(c));
  nlohmann::json j = text.raw();
  j.erase("vision_config");
  j["architectures"] = {std::string(causal_lm_class)};
  if (!j.contains("partial_rotary_factor")) {
    if (auto it = j.find("rope_parameters"); it != j.end() && it->is_object()) {
      if (auto f = it->find("partial_rotary_factor"); f != it->end() && f->is_number()) {
        j["partial_rotary_factor"] = *f;
      }
    }
  }
  // The quantization_config names the language model's modules as the checkpoint stores them.
  CarryQuantization(c, j, {.model_prefixes = {"model.language_model."}, .head_names = {"lm_head"}});
  return j;
}

Result<Model> BuildGlm4vFamily(const HfConfig& c, const BuildOptions& o, bool moe) {
  MEMFIT_ASSIGN_OR_RETURN(nlohmann::json text_json,
                          Glm4vTextJson(c, moe ? "Glm4MoeForCausalLM" : "Glm4ForCausalLM"));
  std::vector<std::string> notes, assumptions;
  if (moe) {
    // Glm4vMoeTextConfig removes use_qk_norm and the MTP layers (transformers' modular_glm4v_moe.py
    // sets both attributes to AttributeError()); Glm4vMoeTextAttention is Glm4Attention.
    if (auto it = text_json.find("use_qk_norm");
        it != text_json.end() && it->is_boolean() && it->get<bool>()) {
      notes.push_back(
          "text_config: \"use_qk_norm\" is not read: Glm4vMoeTextAttention has no q/k "
          "norms");
    }
    if (auto it = text_json.find("num_nextn_predict_layers");
        it != text_json.end() && it->is_number_integer() && it->get<int64_t>() > 0) {
      assumptions.push_back(fmt::format(
          "text_config: {} multi-token-prediction layer(s) (num_nextn_predict_layers) not counted: "
          "Glm4vMoeTextModel builds none, and the GLM-4.5V / GLM-4.6V checkpoints store none",
          it->get<int64_t>()));
    }
    text_json["use_qk_norm"] = false;
    text_json["num_nextn_predict_layers"] = 0;
  } else if (!text_json.contains("head_dim")) {
    // Glm4vTextAttention: head_dim = hidden_size / num_attention_heads (Glm4Config's default is
    // 128, which GLM-4.1V's 4096 / 32 equals).
    const auto hidden = text_json.find("hidden_size");
    const auto heads = text_json.find("num_attention_heads");
    if (hidden != text_json.end() && heads != text_json.end() && hidden->is_number_integer() &&
        heads->is_number_integer() && hidden->get<int64_t>() > 0 && heads->get<int64_t>() > 0 &&
        hidden->get<int64_t>() % heads->get<int64_t>() == 0) {
      text_json["head_dim"] = hidden->get<int64_t>() / heads->get<int64_t>();
    }
  }
  const std::string where = c.Has("text_config") ? c.where() + ": text_config" : c.where();
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, HfConfig::FromJson(std::move(text_json), where));
  BuildOptions text_options = o;
  text_options.head_class.clear();
  MEMFIT_ASSIGN_OR_RETURN(Model language,
                          moe ? BuildGlm4Moe(text, text_options) : BuildGlm4(text, text_options));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, SubOrEmpty(c, "vision_config"));

  // The tower in the text model's dtype (text_config's "dtype" where transformers 5 configs keep
  // it, else the top level's); the default float32 with its assumption when neither names one.
  auto dtype = text.torch_dtype();
  ModelBuilder b = dtype ? ModelBuilder(c, *dtype) : ModelBuilder(c);
  Model& m = b.model();
  if (m.architecture.empty()) {
    m.architecture = moe ? "Glm4vMoeForConditionalGeneration" : "Glm4vForConditionalGeneration";
  }
  std::vector<std::string> defaulted;
  if (!c.Has("vision_config")) {
    defaulted.push_back(
        "vision_config absent: Glm4vVisionConfig's defaults are used (as "
        "transformers does): GLM-4.1V-9B's 24-block tower of width 1536");
  }
  b.SetComponent("vision_tower");
  EmitVisionTower(b, vision, kGlm4vVisionTower, "model.visual");
  if (b.failed()) return b.Finish();
  AppendLanguageModel(m, std::move(language), c, std::move(defaulted), "model.language_model",
                      "lm_head", "language_model");
  if (!c.Has("text_config")) m.hp.text_config_key.clear();
  for (auto& n : notes) m.notes.push_back(std::move(n));
  for (auto& a : assumptions) m.assumptions.push_back(std::move(a));
  // _no_split_modules: Glm4v[Moe]TextDecoderLayer, Glm4v[Moe]VisionBlock.
  m.no_split_patterns = {"model.language_model.layers.*", "model.visual.blocks.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace

Result<Model> BuildGlm4v(const HfConfig& c, const BuildOptions& o) {
  return BuildGlm4vFamily(c, o, /*moe=*/false);
}

Result<Model> BuildGlm4vMoe(const HfConfig& c, const BuildOptions& o) {
  return BuildGlm4vFamily(c, o, /*moe=*/true);
}

}  // namespace memfit::arch
