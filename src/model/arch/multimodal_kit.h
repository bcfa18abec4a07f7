#pragma once
// Shared pieces of vision-language builders whose language model is an existing decoder family
// (gemma3, paligemma, mistral3, llava_next, ...): the text sub-config with its config class's
// defaults, and the language model's tensors moved under the composite model's prefix.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"
#include "memfit/hf_config.h"
#include "memfit/model.h"
#include "model/arch/vision_tower.h"

namespace memfit::arch {

// Where a composite checkpoint keeps the language model a text builder builds as "model.*" and
// "lm_head": every name a quantization_config's exclusion list may use for it. Releases name
// modules as their quantizer saw them, which is the stored layout ("language_model.model.",
// "language_model.lm_head") for checkpoints saved before transformers 4.52 and the loaded one
// ("model.language_model.", "lm_head") after it.
struct LanguageModelNames {
  std::vector<std::string> model_prefixes;  // each ends with '.'
  std::vector<std::string> head_names;
};
// The two layouts of a "language_model" child: stored `model_prefix` + "." / `head_name`, and
// transformers >= 4.52's "model.language_model." / "lm_head".
LanguageModelNames StoredAndLoadedNames(const std::string& model_prefix,
                                        const std::string& head_name);

// Gives a text sub-config (`text`, its JSON) the composite's quantization: text_config's own
// "quantization_config" where a release nests it there, else the top level's, with
// kModuleAliasesKey (quantization.h) mapping the text builder's "model." and "lm_head" to `names`,
// so that its linears are quantized and excluded exactly as the checkpoint stores them. Nothing
// when neither level has one.
void CarryQuantization(const HfConfig& top, nlohmann::json& text, const LanguageModelNames& names);

// The composite config's `key` sub-config ("text_config") as a standalone config for the text
// builder: an absent sub-config is {} (transformers builds the class default); model_type
// defaults to `default_type`; fields absent take that config class's defaults
// (hparams::ConfigClassDefaults), tie_word_embeddings the top level's first; torch_dtype/dtype come from the top level when the
// sub-config has none; architectures is set to `causal_lm_class` so the text builder emits an
// LM head. The defaulted fields are named in `assumptions` (one line, none when nothing was
// absent).
Result<HfConfig> TextSubConfig(const HfConfig& top, std::string_view key,
                               std::string_view default_type, std::string_view causal_lm_class,
                               std::vector<std::string>& assumptions);
// TextSubConfig, and CarryQuantization with `names`.
Result<HfConfig> TextSubConfig(const HfConfig& top, std::string_view key,
                               std::string_view default_type, std::string_view causal_lm_class,
                               std::vector<std::string>& assumptions,
                               const LanguageModelNames& names);

// A note when `top` has a "quantization_config": the composite builders build unquantized
// tensors (the safetensors headers give a quantized checkpoint's).
void NoteQuantizationNotApplied(const HfConfig& top, Model& model);

// When `model` was built with a quantization_config (`quantization`, as the composite config
// holds it) that does not exclude some weight matrices of the towers built unquantized (tensors
// outside `language_component` named "*.weight" with two dimensions, embeddings aside): an
// assumption line naming how many and the first, since a loader that quantizes every nn.Linear
// not excluded would store them quantized. Nothing when the list excludes them all.
void NoteUnquantizedTowers(const nlohmann::json* quantization, const std::string& language_component,
                           Model& model);

// The sub-config at `key`, or an empty one (the config class's defaults) when absent.
Result<HfConfig> SubOrEmpty(const HfConfig& top, std::string_view key);

// Moves `language`'s tensors into `into` (after what it holds): names (and tied_to targets)
// starting with "model." become `model_prefix` + the rest, "lm_head" becomes `head_name`; the
// component is `component` where unset. Copies hp (text_config_key = "text_config"), assumptions
// and notes (prefixed "text_config: "); then adds `defaulted` (TextSubConfig's line) and, where
// `top` has a quantization_config: NoteUnquantizedTowers when the language model applied it
// (TextSubConfig with names), else NoteQuantizationNotApplied's note. What every composite
// builder does once its towers are built.
void AppendLanguageModel(Model& into, Model&& language, const HfConfig& top,
                         std::vector<std::string>&& defaulted, const std::string& model_prefix,
                         const std::string& head_name, const std::string& component);

// Puts `language`'s tensors before those `into` holds, as Kimi-K2.5 and Kimi-K3 checkpoints order
// them: every name and tied_to target under "language_model.", component "language_model".
// Copies hp, assumptions (prefixed "text_config: ") and notes.
void PrependLanguageModel(Model& into, Model&& language);

// A vision-language composite as a table row (VlmSpec, rows in vlm_families.cc): a text model
// built from "text_config" by a text builder, a vision tower row (vision_tower.h) and a
// connector listed item by item; BuildVlm builds any row.
//
// A connector size: V the tower's width, T the text model's, TI its MLP's.
enum class VlmDim : uint8_t {
  kVision,          // V
  kVisionFeatures,  // V x the number of "vision_feature_layer"s (1 unless a list)
  kVisionMerged,    // V x merge^2, merge the row's merge key
  kText,            // T
  kTextIntermediate,  // TI
  kWidth,             // the row's width key
};
enum class VlmOp : uint8_t {
  kLinear,           // Linear(in, out)
  kLayerNorm,        // over in
  kRmsNorm,          // over in
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
  const char* texts_phrase = "";   // "a gemma or gemma2": the accepted text models, for errors
  bool carry_quantization = true;  // TextSubConfig with the language model's names
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

// The sizes of Kimi's MoonViT3d vision tower (vision_config: vt_hidden_size,
// vt_intermediate_size, vt_num_hidden_layers, qkv_hidden_size, patch_size,
// init_pos_emb_{height,width,time}; Kimi-K3's norm_type and bias flags).
struct MoonVitShape {
  uint64_t hidden = 0;
  uint64_t intermediate = 0;
  uint64_t depth = 0;
  uint64_t qkv = 0;  // the attention's width (Kimi-K2.5: hidden)
  uint64_t patch = 0;
  uint64_t pos_h = 0, pos_w = 0, pos_t = 0;
  bool rms = false;  // RMSNorm, else LayerNorm
  bool attn_bias = true;
  bool linear_bias = true;
  bool patch_bias = true;
};
// Reads vt_hidden_size, vt_intermediate_size, vt_num_hidden_layers, qkv_hidden_size (when
// `read_qkv`: Kimi-K3's key, default hidden; Kimi-K2.5's attention is as wide as the tower),
// patch_size (14) and init_pos_emb_height / width (64) / time (4), in that order; the norms and
// biases stay at Kimi-K2.5's (LayerNorm, biases). Errors are recorded in `b`.
MoonVitShape ReadMoonVitShape(ModelBuilder& b, const HfConfig& vision, bool read_qkv);
// The MoonViT3d tower under "vision_tower" (Kimi-K2.5, Kimi-K3): patch_embed.{proj,
// pos_emb.weight, pos_emb.time_weight (float32 buffer)}, encoder.blocks.N.{norm0, norm1,
// mlp.fc0, mlp.fc1, wqkv, wo}, encoder.final_layernorm. Errors are recorded in `b`.
void EmitMoonVit3d(ModelBuilder& b, const MoonVitShape& s);

}  // namespace memfit::arch
