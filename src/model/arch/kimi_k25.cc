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
// - mm_projector (PatchMergerMLP): pre_norm LayerNorm(mm_hidden), proj.0 Linear(mm_hidden x k,
//   same), proj.2 Linear(mm_hidden x k, text_hidden) with biases, k = merge_kernel_size[0] x [1].
// _no_split_modules: MoonViT3dPretrainedModel, MoonViTEncoderLayer, DeepseekDecoderLayer,
// PatchMergerMLP. Quantized releases (NVIDIA's NVFP4) keep the tower and projector unquantized
// ("ignore": vision_tower*, mm_projector*) and name language-model modules with the
// "language_model." prefix, which is taken off for the text builder.
//
// Kimi-K3 (model_type "kimi_k3", KimiK3ForConditionalGeneration, remote code modeling_kimi_k3.py):
// the Kimi Linear language model of "text_config" (kimi_linear.cc, K3's stored layout) under
// language_model.* (language_model.model.*, language_model.lm_head), a MoonViT3d vision tower and
// the PatchMergerMLPV2 projector:
// - vision_tower.patch_embed.proj: Conv2d(3, vt_hidden, patch x patch), biased with
//   "patch_embed_proj_bias"; patch_embed.pos_emb.weight [init_pos_emb_height,
//   init_pos_emb_width, vt_hidden] and the non-persistent float32 time_weight
//   [init_pos_emb_time, 1, vt_hidden] (divided_fixed position embedding);
// - vision_tower.encoder.blocks.{i} (vt_num_hidden_layers): norm0, norm1 (RMSNorm with
//   norm_type "rmsnorm", else LayerNorm), wqkv [3 x qkv_hidden_size, vt_hidden] and wo
//   [vt_hidden, qkv_hidden_size] (biased with "attn_bias"), mlp.fc0 [vt_intermediate, vt_hidden]
//   and mlp.fc1 [vt_hidden, vt_intermediate] (mlp2, biased with "linear_bias");
//   encoder.final_layernorm; the 2-D rope table is computed per image, not resident;
// - mm_projector (patchmergerv2): proj.0 [k x mm_hidden, k x mm_hidden], proj.2 [text_hidden,
//   k x mm_hidden] without biases, post_norm RMSNorm [text_hidden], k = merge_kernel_size[0] x [1].
// Sources: the K3 vision stack as ported from modeling_kimi_k3.py with the checkpoint's names
// (public ports: "Module and parameter names mirror the checkpoint exactly"), the tower's ~0.45B
// parameters; Kimi-K2.5 above for the shared MoonViT layout.

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/families.h"
#include "model/arch/kimi_linear.h"
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

Result<Model> BuildKimiK3Text(const HfConfig& c, const BuildOptions& o) {
  return BuildKimiLinearText(c, o, KimiCheckpoint::kKimiK3);
}

// What differs between the two releases' language models, one row each.
struct KimiVlmText {
  std::string_view release;       // "Kimi-K2.5"
  std::string_view text_model;    // "a DeepSeek-V3"
  std::string_view types[2];      // text_config.model_type accepted; the first is the default
  ArchitectureBuilderFn build;    // the text model's builder
  bool inherit_tie = false;       // "tie_word_embeddings" also inherited from the top level
  bool top_quantization = false;  // the top-level quantization_config, via TextQuantization
};
const KimiVlmText kKimiK25Text{.release = "Kimi-K2.5", .text_model = "a DeepSeek-V3",
                               .types = {"deepseek_v3", "kimi_k2"}, .build = BuildDeepseekV3,
                               .top_quantization = true};
const KimiVlmText kKimiK3Text{.release = "Kimi-K3", .text_model = "a Kimi Linear",
                              .types = {"kimi_linear", "kimi_linear"}, .build = BuildKimiK3Text,
                              .inherit_tie = true};

// The language model of "text_config", given the top-level dtype (and the row's other keys) where
// it lacks them, once checked to be a model the release is built with.
Result<Model> KimiLanguageModel(const HfConfig& c, const BuildOptions& o, const KimiVlmText& t) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text_sub, c.Sub("text_config"));
  nlohmann::json text_json = text_sub.raw();
  for (const std::string key : {"torch_dtype", "dtype", "tie_word_embeddings"}) {
    if (key == "tie_word_embeddings" && !t.inherit_tie) continue;
    if (!text_json.contains(key) && c.Has(key)) text_json[key] = c.raw()[key];
  }
  const auto* q = t.top_quantization ? QuantizationConfigJson(c) : nullptr;
  if (q && !text_json.contains("quantization_config")) {
    text_json["quantization_config"] = TextQuantization(*q);
  }
  const std::string type = text_json.value("model_type", std::string(t.types[0]));
  if (type != t.types[0] && type != t.types[1]) {
    return MakeError("{}: text_config.model_type \"{}\": memfit builds {} with {} language model "
                     "only; reading the safetensors headers gives an exact answer",
                     c.where(), type, t.release, t.text_model);
  }
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text,
                          HfConfig::FromJson(text_json, c.where() + ": text_config"));
  return t.build(text, o);
}

// merge_kernel_size: two integers in 1..16 (JSON built in code holds signed integers, parsed
// text unsigned ones); 2 x 2 when absent.
Result<uint64_t> MergeKernel(const HfConfig& vision) {
  auto mk = vision.raw().find("merge_kernel_size");
  if (mk == vision.raw().end()) return uint64_t{4};
  const auto side = [](const nlohmann::json& v) -> uint64_t {
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 16) return 0;
    return static_cast<uint64_t>(v.get<int64_t>());
  };
  if (!mk->is_array() || mk->size() != 2 || side((*mk)[0]) == 0 || side((*mk)[1]) == 0) {
    return MakeError("{}: merge_kernel_size must be two integers in 1..16", vision.where());
  }
  return side((*mk)[0]) * side((*mk)[1]);
}

// The language model first, then the tower and projector, as the checkpoints order them.
void AttachLanguageModel(Model& m, Model&& language) {
  PrependLanguageModel(m, std::move(language));
  m.no_split_patterns = {"vision_tower", "mm_projector", "language_model.model.layers.*"};
  m.base_model_prefix = "";
}

}  // namespace

Result<Model> BuildKimiK25(const HfConfig& c, const BuildOptions& options) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, c.Sub("vision_config"));
  MEMFIT_ASSIGN_OR_RETURN(Model language, KimiLanguageModel(c, options, kKimiK25Text));
  ModelBuilder b(c);
  // Kimi-K2.5's tower: LayerNorm, biases everywhere, attention as wide as the tower.
  const MoonVitShape tower = ReadMoonVitShape(b, vision, /*read_qkv=*/false);
  const uint64_t mm_hidden = Get(b, vision.UintOr("mm_hidden_size", tower.hidden));
  const uint64_t text_hidden = Get(b, vision.UintOr("text_hidden_size", language.hp.hidden_size));
  const std::string projector = Get(b, vision.StringOr("mm_projector_type", "patchmerger"));
  MEMFIT_ASSIGN_OR_RETURN(uint64_t kernel, MergeKernel(vision));
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
  AttachLanguageModel(b.model(), std::move(language));
  return b.Finish();
}

Result<Model> BuildKimiK3(const HfConfig& c, const BuildOptions& options) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, c.Sub("vision_config"));
  MEMFIT_ASSIGN_OR_RETURN(Model language, KimiLanguageModel(c, options, kKimiK3Text));
  MEMFIT_ASSIGN_OR_RETURN(uint64_t kernel, MergeKernel(vision));
  ModelBuilder b(c);
  Model& m = b.model();
  MoonVitShape tower = ReadMoonVitShape(b, vision, /*read_qkv=*/true);
  const uint64_t mm_hidden = Get(b, vision.UintOr("mm_hidden_size", tower.hidden));
  const uint64_t text_hidden = Get(b, vision.UintOr("text_hidden_size", language.hp.hidden_size));
  tower.rms = Get(b, vision.StringOr("norm_type", "rmsnorm")) == "rmsnorm";
  tower.attn_bias = Get(b, vision.BoolOr("attn_bias", false));
  tower.linear_bias = Get(b, vision.BoolOr("linear_bias", false));
  tower.patch_bias = Get(b, vision.BoolOr("patch_embed_proj_bias", false));
  const std::string projector = Get(b, vision.StringOr("mm_projector_type", "patchmergerv2"));
  const std::string mlp = Get(b, vision.StringOr("mlp_type", "mlp2"));
  const std::string pos = Get(b, vision.StringOr("pos_emb_type", "divided_fixed"));
  if (b.failed()) return b.Finish();
  if (projector != "patchmergerv2" || mlp != "mlp2" || pos != "divided_fixed") {
    return MakeError("{}: vision_config (mm_projector_type \"{}\", mlp_type \"{}\", pos_emb_type "
                     "\"{}\") is not Kimi-K3's patchmergerv2 / mlp2 / divided_fixed; reading the "
                     "safetensors headers gives an exact answer", c.where(), projector, mlp, pos);
  }
  if (tower.hidden == 0 || tower.depth == 0 || tower.intermediate == 0 || tower.qkv == 0 ||
      tower.patch == 0 || tower.patch > 1024) {
    return MakeError("{}: vision_config needs positive vt_hidden_size, vt_intermediate_size, "
                     "vt_num_hidden_layers, qkv_hidden_size and patch_size (1..1024)", c.where());
  }
  b.SetComponent("vision_tower");
  EmitMoonVit3d(b, tower);
  b.SetComponent("mm_projector");
  const uint64_t merged = MulDims(b, mm_hidden, kernel, "mm_hidden_size x merge kernel");
  b.Linear("mm_projector.proj.0", merged, merged, false);
  b.Linear("mm_projector.proj.2", merged, text_hidden, false);
  b.RmsNorm("mm_projector.post_norm", text_hidden);
  if (b.failed()) return b.Finish();
  if (language.quantization_config) m.quantization_config = language.quantization_config;
  AttachLanguageModel(m, std::move(language));
  m.hp.text_config_key = "text_config";
  m.assumptions.push_back(
      "Kimi-K3's stored layout (attention-residual and latent-MoE tensors, MLA g_proj, float32 "
      "A_log [head_dim], KDA conv1d and o_norm, bf16 latent projections, MXFP4 experts only) is "
      "taken from public third-party loaders of the checkpoint; no weight index was available");
  return b.Finish();
}

}  // namespace memfit::arch
