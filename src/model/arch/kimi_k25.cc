// Kimi-K2.5 / K2.7 (model_type "kimi_k25", KimiK25ForConditionalGeneration, remote code
// modeling_kimi_k25.py): a DeepSeek-V3 language model from "text_config" under language_model.*
// (language_model.model.*, language_model.lm_head), a MoonViT3d vision tower and a patch-merger
// projector:
// - vision_tower.patch_embed.proj: Conv2d(3, vt_hidden, patch x patch) with bias;
//   patch_embed.pos_emb.weight [init_pos_emb_height, init_pos_emb_width, vt_hidden] and a
//   non-persistent float32 buffer time_weight [init_pos_emb_time, 1, vt_hidden] (1-D sin-cos
//   table, Learnable2DInterpPosEmbDivided_fixed);
// - vision_tower.encoder.blocks.{i} (vt_num_hidden_layers, MoonViTEncoderLayer, attn_bias=True):
//   norm0, norm1 (LayerNorm with bias), wqkv Linear(h, 3h), wo Linear(h, h), mlp.fc0 Linear(h, vt_
//   intermediate), mlp.fc1 Linear(vt_intermediate, h), all with biases; encoder.final_layernorm;
//   the 2-D rope table is created on first forward (not resident after loading);
// - mm_projector (PatchMergerMLP): pre_norm LayerNorm(mm_hidden), proj.0 Linear(mm_hidden x k, same),
//   proj.2 Linear(mm_hidden x k, text_hidden) with biases, k = merge_kernel_size[0] x [1].
// _no_split_modules: MoonViT3dPretrainedModel, MoonViTEncoderLayer, DeepseekDecoderLayer,
// PatchMergerMLP. Quantized releases (NVIDIA's NVFP4) keep the tower and projector unquantized
// ("ignore": vision_tower*, mm_projector*) and name language-model modules with the
// "language_model." prefix, which is taken off for the text builder.

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"

namespace memfit::arch {
namespace {

// The top-level quantization_config as the language model sees it: module patterns under
// language_model. lose that prefix; patterns of the vision tower and projector are dropped.
nlohmann::json TextQuantization(const nlohmann::json& q) {
  nlohmann::json out = q;
  for (const char* key : {"ignore", "exclude_modules", "modules_to_not_convert"}) {
    auto it = q.find(key);
    if (it == q.end() || !it->is_array()) continue;
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& p : *it) {
      if (!p.is_string()) continue;
      std::string s = p.get<std::string>();
      if (s.starts_with("vision_tower") || s.starts_with("mm_projector")) continue;
      if (s.starts_with("language_model.")) s = s.substr(std::string("language_model.").size());
      kept.push_back(s);
    }
    out[key] = std::move(kept);
  }
  return out;
}

}  // namespace

Result<Model> BuildKimiK25(const HfConfig& c, const BuildOptions& options) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text_sub, c.Sub("text_config"));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, c.Sub("vision_config"));
  nlohmann::json text_json = text_sub.raw();
  for (const char* key : {"torch_dtype", "dtype"}) {
    if (!text_json.contains(key) && c.Has(key)) text_json[key] = c.raw()[key];
  }
  if (const auto* q = QuantizationConfigJson(c); q && !text_json.contains("quantization_config")) {
    text_json["quantization_config"] = TextQuantization(*q);
  }
  const std::string text_type = text_json.value("model_type", "deepseek_v3");
  if (text_type != "deepseek_v3" && text_type != "kimi_k2") {
    return MakeError("{}: text_config.model_type \"{}\": memfit builds Kimi-K2.5 with a DeepSeek-V3 "
                     "language model only; reading the safetensors headers gives an exact answer",
                     c.where(), text_type);
  }
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, HfConfig::FromJson(text_json, c.where() + ": text_config"));
  MEMFIT_ASSIGN_OR_RETURN(Model language, BuildDeepseekV3(text, options));

  ModelBuilder b(c);
  Model& m = b.model();
  // Kimi-K2.5's tower: LayerNorm, biases everywhere, attention as wide as the tower.
  const MoonVitShape tower = ReadMoonVitShape(b, vision, /*read_qkv=*/false);
  const uint64_t mm_hidden = Get(b, vision.UintOr("mm_hidden_size", tower.hidden));
  const uint64_t text_hidden = Get(b, vision.UintOr("text_hidden_size", language.hp.hidden_size));
  const std::string projector = Get(b, vision.StringOr("mm_projector_type", "patchmerger"));
  uint64_t kernel = 4;
  if (auto mk = vision.raw().find("merge_kernel_size"); mk != vision.raw().end()) {
    // Integers in 1..16 (JSON built in code holds signed integers, parsed text unsigned ones).
    const auto side = [](const nlohmann::json& v) -> uint64_t {
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 16) return 0;
      return static_cast<uint64_t>(v.get<int64_t>());
    };
    if (!mk->is_array() || mk->size() != 2 || side((*mk)[0]) == 0 || side((*mk)[1]) == 0) {
      return MakeError("{}: vision_config.merge_kernel_size must be two integers in 1..16",
                       c.where());
    }
    kernel = side((*mk)[0]) * side((*mk)[1]);
  }
  if (b.failed()) return b.Finish();
  if (projector != "patchmerger") {
    return MakeError("{}: vision_config.mm_projector_type \"{}\" is not \"patchmerger\"; reading "
                     "the safetensors headers gives an exact answer", c.where(), projector);
  }
  if (tower.hidden == 0 || tower.depth == 0 || tower.intermediate == 0 || tower.patch == 0 ||
      tower.patch > 1024) {
    return MakeError("{}: vision_config needs vt_hidden_size, vt_intermediate_size, "
                     "vt_num_hidden_layers and patch_size (1..1024)", c.where());
  }
  b.SetComponent("vision_tower");
  EmitMoonVit3d(b, tower);
  b.SetComponent("mm_projector");
  const uint64_t merged = mm_hidden * kernel;
  b.LayerNorm("mm_projector.pre_norm", mm_hidden);
  b.Linear("mm_projector.proj.0", merged, merged, true);
  b.Linear("mm_projector.proj.2", merged, text_hidden, true);
  if (b.failed()) return b.Finish();
  // The language model first, then the tower and projector, as the checkpoint orders them.
  PrependLanguageModel(m, std::move(language));
  m.no_split_patterns = {"vision_tower", "mm_projector", "language_model.model.layers.*"};
  m.base_model_prefix = "";
  return b.Finish();
}

}  // namespace memfit::arch
