#pragma once
// Shared pieces of vision-language builders whose language model is an existing decoder family
// (gemma3, paligemma, mistral3, llava_next, ...): the text sub-config with its config class's
// defaults, and the language model's tensors moved under the composite model's prefix.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"
#include "memfit/hf_config.h"
#include "memfit/model.h"
#include "model/arch/vision_tower.h"

namespace memfit::arch {

// Where a composite checkpoint keeps the language model a text builder builds as "model.*" and
// "lm_head": every name a quantization_config's exclusion list may use for it (the stored layout
// before transformers 4.52, the loaded one after).
struct LanguageModelNames {
  std::vector<std::string> model_prefixes;  // each ends with '.'
  std::vector<std::string> head_names;
};
// Stored `model_prefix` + "." / `head_name`, and 4.52's "model.language_model." / "lm_head".
LanguageModelNames StoredAndLoadedNames(const std::string& model_prefix,
                                        const std::string& head_name);

// Gives a text sub-config (`text`, its JSON) text_config's own "quantization_config", else the
// top level's, with kModuleAliasesKey (quantization.h) mapping "model." and "lm_head" to `names`.
// Nothing when neither level has one.
void CarryQuantization(const HfConfig& top, nlohmann::json& text, const LanguageModelNames& names);

// The composite's `key` sub-config ({} when absent) as a standalone config for the text builder:
// model_type defaults to `default_type`; tie_word_embeddings the top level's when absent, then
// absent fields take the config class's defaults (hparams::ConfigClassDefaults), named in one
// `assumptions` line; torch_dtype/dtype the top level's when it has none; architectures
// [`causal_lm_class`]. With `names`, also CarryQuantization.
Result<HfConfig> TextSubConfig(const HfConfig& top, std::string_view key,
                               std::string_view default_type, std::string_view causal_lm_class,
                               std::vector<std::string>& assumptions);
Result<HfConfig> TextSubConfig(const HfConfig& top, std::string_view key,
                               std::string_view default_type, std::string_view causal_lm_class,
                               std::vector<std::string>& assumptions,
                               const LanguageModelNames& names);

// A note when `top` has a "quantization_config" that the builder does not apply.
void NoteQuantizationNotApplied(const HfConfig& top, Model& model);

// An assumption line when `quantization` (the composite's quantization_config) does not exclude
// some 2-D "*.weight" matrices outside `language_component` (embeddings aside), which are built
// unquantized: how many and the first.
void NoteUnquantizedTowers(const nlohmann::json* quantization,
                           const std::string& language_component, Model& model);

// The sub-config at `key`, or an empty one (the config class's defaults) when absent.
Result<HfConfig> SubOrEmpty(const HfConfig& top, std::string_view key);

// Moves `language`'s tensors after `into`'s: "model." becomes `model_prefix` + ".", "lm_head"
// `head_name` (names and tied_to), `component` where unset. Copies hp (text_config_key
// "text_config"), assumptions and notes (prefixed "text_config: "), then `defaulted`, then
// NoteUnquantizedTowers when the language model applied a quantization_config, else
// NoteQuantizationNotApplied.
void AppendLanguageModel(Model& into, Model&& language, const HfConfig& top,
                         std::vector<std::string>&& defaulted, const std::string& model_prefix,
                         const std::string& head_name, const std::string& component);

// Puts `language`'s tensors before `into`'s under "language_model." (component "language_model"),
// as Kimi-K2.5 and Kimi-K3 store them; copies hp, assumptions ("text_config: ") and notes.
void PrependLanguageModel(Model& into, Model&& language);

// A vision-language composite as a table row (VlmSpec, rows in vlm_families.cc): a text model
// built from "text_config" by a text builder, a vision tower row (vision_tower.h) and a connector
// listed item by item; BuildVlm builds any row.
// A connector size: V the tower's width, T the text model's, TI its MLP's.
enum class VlmDim : uint8_t {
  kVision,
  kVisionFeatures,  // V x the number of "vision_feature_layer"s (1 unless a list)
  kVisionMerged,    // V x merge^2, merge the row's merge key
  kText,
  kTextIntermediate,
  kWidth,  // the row's width key
};
enum class VlmOp : uint8_t {
  kLinear,           // Linear(in, out)
  kLayerNorm,        // over in
  kRmsNorm,          // over in
  kParam,            // Param [in, out]
  kGatedProjection,  // gate_proj, up_proj (in -> TI), down_proj (TI -> out), no biases
  kImageNewline,     // the top-level image_newline [T], in no component
  kHook,             // the row's `extra` hook
};
struct VlmItem {
  VlmOp op;
  const char* name = "";  // under the row's projector prefix
  VlmDim in = VlmDim::kVision, out = VlmDim::kText;
  VisionBias bias = VisionBias::kNone;  // kConfig: the row's bias key
  const char* when = nullptr;           // a boolean key (default true) the item needs
};
// An accepted text model: its model_type (nullptr: any other with a registered builder), the
// causal-LM class its sub-config names, and its builder (nullptr: the registered one).
struct VlmText {
  const char* type;
  const char* causal_lm;
  ArchitectureBuilderFn build = nullptr;
};
struct VlmSizes {
  uint64_t vision = 0, text = 0, text_intermediate = 0, features = 1, merge = 0, width = 0;
};
struct VlmSpec;
class ModelBuilder;
using VlmExtraFn = void (*)(ModelBuilder& b, const HfConfig& top, const VlmSpec& s,
                            const VlmSizes& z);
struct VlmSpec {
  const char* family = nullptr;        // for the text-type error; nullptr: the model_type
  const char* architecture = nullptr;  // the class when the config names none
  const char* text_default = "";       // text_config's model_type when it has none
  std::vector<VlmText> texts;
  const char* texts_phrase = "";       // "a gemma or gemma2": the accepted text models, for errors
  const VlmSpec* otherwise = nullptr;  // the row for a text model not in `texts`
  bool carry_quantization = true;      // TextSubConfig with the language model's names
  bool class_defaults = true;          // absent text_config fields take the class's defaults
  bool quantization_notes = true;      // AppendLanguageModel's quantization note or assumption
  // The config with what PaliGemma-style classes build for an absent sub-config (or null).
  Result<HfConfig> (*prepare)(const HfConfig& top) = nullptr;
  const char* vision_default = "{}";  // an absent vision_config (JSON); nullptr: required
  // The tower by vision_config's model_type (default `vision_type`; without one, the first entry
  // and the model_type is not read).
  std::vector<std::pair<const char*, const VisionTowerSpec*>> towers;
  const char* vision_type = nullptr;
  const char* vision_prefix = "vision_tower.vision_model";
  const char* vision_component = "vision_tower";
  const char* projector = "multi_modal_projector";  // the connector items' prefix
  const char* projector_component = "multi_modal_projector";
  const char* bias_key = nullptr;  // VisionBias::kConfig's
  bool bias_default = false;
  VisionKey merge{};  // in 1..64
  VisionKey width{};
  bool width_nonzero = false;
  std::vector<VlmItem> connector;
  VlmExtraFn extra = nullptr;
  const char* language_prefix = "language_model.model";
  const char* head = "language_model.lm_head";
  const char* language_component = "language_model";
  std::vector<std::string> no_split;
  const char* base_model_prefix = nullptr;
};
Result<Model> BuildVlm(const HfConfig& config, const BuildOptions& options, const VlmSpec& spec);

// A composite's text model: `text` (top's text_config), which must be of `model_type`, built by
// `build` without the composite's head class.
Result<Model> BuildTextOfType(const HfConfig& top, const HfConfig& text,
                              std::string_view model_type, ArchitectureBuilderFn build,
                              const BuildOptions& options);
// LLaVA with a Pixtral vision tower (vlm_families.cc; llava.cc builds the other layouts).
extern const VlmSpec kLlavaPixtral;

// Kimi's MoonViT3d tower (Kimi-K2.5, Kimi-K3): vision_config's vt_hidden_size,
// vt_intermediate_size, vt_num_hidden_layers, qkv_hidden_size, patch_size,
// init_pos_emb_{height,width,time}; Kimi-K3 sets the norm kind and bias flags.
struct MoonVitShape {
  uint64_t hidden = 0, intermediate = 0, depth = 0;
  uint64_t qkv = 0;  // the attention's width (Kimi-K2.5: hidden)
  uint64_t patch = 0;
  uint64_t pos_h = 0, pos_w = 0, pos_t = 0;
  bool rms = false;  // RMSNorm, else LayerNorm
  bool attn_bias = true, linear_bias = true, patch_bias = true;
};
// Reads the sizes in that order (qkv_hidden_size only when `read_qkv`, default hidden; patch 14,
// positions 64 x 64 x 4); errors are recorded in `b`.
MoonVitShape ReadMoonVitShape(ModelBuilder& b, const HfConfig& vision, bool read_qkv);
// vision_tower.patch_embed.{proj, pos_emb.weight, pos_emb.time_weight (float32 buffer)},
// encoder.blocks.N.{norm0, norm1, mlp.fc0, mlp.fc1, wqkv, wo}, encoder.final_layernorm.
void EmitMoonVit3d(ModelBuilder& b, const MoonVitShape& s);

}  // namespace memfit::arch
