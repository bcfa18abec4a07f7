// Kimi-K2.5 / K2.7 (model_type "kimi_k25", KimiK25ForConditionalGeneration, remote code
// modeling_kimi_k25.py) and Kimi-K3 (model_type "kimi_k3", KimiK3ForConditionalGeneration, remote
// code modeling_kimi_k3.py; ported with the checkpoint's names by public ports, "Module and
// parameter names mirror the checkpoint exactly"): the language model of "text_config" (K2.5: a
// DeepSeek-V3; K3: Kimi Linear, kimi_linear.cc) under language_model.*, a MoonViT3d tower
// (multimodal_kit.h EmitMoonVit3d: patch_embed, encoder.blocks.N, final_layernorm; K2.5's with
// LayerNorms and biases, K3's with "norm_type", "attn_bias", "linear_bias",
// "patch_embed_proj_bias" and "qkv_hidden_size") and a projector of k = merge_kernel_size[0] x
// [1] merged tokens: K2.5's patchmerger (PatchMergerMLP) pre_norm LayerNorm(mm_hidden), proj.0
// Linear(k x mm_hidden, same), proj.2 Linear(k x mm_hidden, text_hidden), biased; K3's
// patchmergerv2 the same projections unbiased and post_norm RMSNorm(text_hidden). Quantized K2.5
// releases (NVIDIA's NVFP4) keep the tower and projector unquantized and name the language
// model's modules with "language_model.", which is taken off for the text builder.

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

// What differs between the releases, one row each.
struct KimiVlm {
  std::string_view release;     // "Kimi-K2.5"
  std::string_view text_model;  // "a DeepSeek-V3"
  std::string_view types[2];    // text_config.model_type accepted; the first is the default
  ArchitectureBuilderFn build;  // the text model's builder
  bool inherit_tie = false;     // "tie_word_embeddings" also inherited from the top level
  // quantization_config at the top level, handed to the text model (TextQuantization); else the
  // text model's is the model's.
  bool top_quantization = false;
  std::string_view projector;    // the "mm_projector_type" built (and its default)
  bool tower_keys = false;       // K3's tower keys; else K2.5's fixed tower
  bool text_config_key = false;  // hp.text_config_key = "text_config"
  std::string_view assumption = "";
};
// The language model of "text_config", given the top-level dtype (and the row's other keys) where
// it lacks them, once checked to be a model the release is built with.
Result<Model> KimiLanguageModel(const HfConfig& c, const BuildOptions& o, const KimiVlm& t) {
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
    return MakeError(
        "{}: text_config.model_type \"{}\": memfit builds {} with {} language model "
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

Result<Model> BuildKimiVlm(const HfConfig& c, const BuildOptions& options, const KimiVlm& t) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, c.Sub("vision_config"));
  MEMFIT_ASSIGN_OR_RETURN(Model language, KimiLanguageModel(c, options, t));
  MEMFIT_ASSIGN_OR_RETURN(uint64_t kernel, MergeKernel(vision));
  ModelBuilder b(c);
  Model& m = b.model();
  MoonVitShape tower = ReadMoonVitShape(b, vision, /*read_qkv=*/t.tower_keys);
  const uint64_t mm_hidden = Get(b, vision.UintOr("mm_hidden_size", tower.hidden));
  const uint64_t text_hidden = Get(b, vision.UintOr("text_hidden_size", language.hp.hidden_size));
  std::string mlp = "mlp2", pos = "divided_fixed";
  if (t.tower_keys) {
    tower.rms = Get(b, vision.StringOr("norm_type", "rmsnorm")) == "rmsnorm";
    tower.attn_bias = Get(b, vision.BoolOr("attn_bias", false));
    tower.linear_bias = Get(b, vision.BoolOr("linear_bias", false));
    tower.patch_bias = Get(b, vision.BoolOr("patch_embed_proj_bias", false));
    mlp = Get(b, vision.StringOr("mlp_type", "mlp2"));
    pos = Get(b, vision.StringOr("pos_emb_type", "divided_fixed"));
  }
  const std::string projector =
      Get(b, vision.StringOr("mm_projector_type", std::string(t.projector)));
  if (b.failed()) return b.Finish();
  if (projector != t.projector || mlp != "mlp2" || pos != "divided_fixed") {
    return MakeError(
        "{}: vision_config (mm_projector_type \"{}\", mlp_type \"{}\", pos_emb_type "
        "\"{}\") is not {}'s {} / mlp2 / divided_fixed; reading the safetensors "
        "headers gives an exact answer",
        c.where(), projector, mlp, pos, t.release, t.projector);
  }
  if (tower.hidden == 0 || tower.depth == 0 || tower.intermediate == 0 || tower.qkv == 0 ||
      tower.patch == 0 || tower.patch > 1024) {
    return MakeError(
        "{}: vision_config needs positive vt_hidden_size, vt_intermediate_size, "
        "vt_num_hidden_layers, qkv_hidden_size and patch_size (1..1024)",
        c.where());
  }
  b.SetComponent("vision_tower");
  EmitMoonVit3d(b, tower);
  b.SetComponent("mm_projector");
  const uint64_t merged = MulDims(b, mm_hidden, kernel, "mm_hidden_size x merge kernel");
  const bool v1 = t.projector == "patchmerger";  // else patchmergerv2
  if (v1) b.LayerNorm("mm_projector.pre_norm", mm_hidden);
  b.Linear("mm_projector.proj.0", merged, merged, v1);
  b.Linear("mm_projector.proj.2", merged, text_hidden, v1);
  if (!v1) b.RmsNorm("mm_projector.post_norm", text_hidden);
  if (b.failed()) return b.Finish();
  if (!t.top_quantization && language.quantization_config) {
    m.quantization_config = language.quantization_config;
  }
  // The language model first, then the tower and projector, as the checkpoints order them.
  PrependLanguageModel(m, std::move(language));
  m.no_split_patterns = {"vision_tower", "mm_projector", "language_model.model.layers.*"};
  m.base_model_prefix = "";
  if (t.text_config_key) m.hp.text_config_key = "text_config";
  if (!t.assumption.empty()) m.assumptions.emplace_back(t.assumption);
  return b.Finish();
}

}  // namespace

const KimiVlm kKimiK25{.release = "Kimi-K2.5",
                       .text_model = "a DeepSeek-V3",
                       .types = {"deepseek_v3", "kimi_k2"},
                       .build = BuildDeepseekV3,
                       .top_quantization = true,
                       .projector = "patchmerger"};
const KimiVlm kKimiK3{
    .release = "Kimi-K3",
    .text_model = "a Kimi Linear",
    .types = {"kimi_linear", "kimi_linear"},
    .build = BuildKimiK3Text,
    .inherit_tie = true,
    .projector = "patchmergerv2",
    .tower_keys = true,
    .text_config_key = true,
    .assumption =
        "Kimi-K3's stored layout (attention-residual and latent-MoE tensors, MLA g_proj, "
        "float32 A_log [head_dim], KDA conv1d and o_norm, bf16 latent projections, "
        "MXFP4 experts only) is taken from public third-party loaders of the "
        "checkpoint; no weight index was available"};

Result<Model> BuildKimiK25(const HfConfig& c, const BuildOptions& o) {
  return BuildKimiVlm(c, o, kKimiK25);
}
Result<Model> BuildKimiK3(const HfConfig& c, const BuildOptions& o) {
  return BuildKimiVlm(c, o, kKimiK3);
}

}  // namespace memfit::arch
