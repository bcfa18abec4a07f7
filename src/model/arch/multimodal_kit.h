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

namespace memfit::arch {

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

// A note when `top` has a "quantization_config": the composite builders build unquantized
// tensors (the safetensors headers give a quantized checkpoint's).
void NoteQuantizationNotApplied(const HfConfig& top, Model& model);

// The sub-config at `key`, or an empty one (the config class's defaults) when absent.
Result<HfConfig> SubOrEmpty(const HfConfig& top, std::string_view key);

// Moves `language`'s tensors into `into` (after what it holds): names (and tied_to targets)
// starting with "model." become `model_prefix` + the rest, "lm_head" becomes `head_name`; the
// component is `component` where unset. Copies hp (text_config_key = "text_config"), assumptions
// and notes (prefixed "text_config: "); then adds `defaulted` (TextSubConfig's line) and, where
// `top` has a quantization_config, NoteQuantizationNotApplied's note: what every composite
// builder does once its towers are built.
void AppendLanguageModel(Model& into, Model&& language, const HfConfig& top,
                         std::vector<std::string>&& defaulted, const std::string& model_prefix,
                         const std::string& head_name, const std::string& component);

class ModelBuilder;
// The Pixtral vision encoder (pixtral.cc) under `prefix` ("vision_tower"); returns its hidden size
// (0 after recording an error in `b`).
uint64_t EmitPixtralVision(ModelBuilder& b, const HfConfig& vision_config, const std::string& prefix);

}  // namespace memfit::arch
