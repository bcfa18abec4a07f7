#pragma once
// The Qwen omni models, one OmniFamily row each of BuildOmni (omni_kit.cc): a thinker (a text
// decoder with vision and audio towers), then a talker and a speech decoder, each part a
// sub-config with its transformers config class's defaults.

#include <array>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memfit/architecture.h"
#include "memfit/hf_config.h"
#include "memfit/model.h"
#include "model/arch/builder_kit.h"
#include "model/arch/qwen_vision.h"

namespace memfit::arch {

// qwen2_5_omni.cc: Qwen2.5-Omni (Qwen2_5OmniForConditionalGeneration / Qwen2_5OmniModel).
Result<Model> BuildQwen25Omni(const HfConfig& config, const BuildOptions& options);
// qwen3_omni_moe.cc: Qwen3-Omni (Qwen3OmniMoeForConditionalGeneration).
Result<Model> BuildQwen3OmniMoe(const HfConfig& config, const BuildOptions& options);

// A sub-config's JSON and config (its where: the top config's, then its label).
struct OmniPart {
  nlohmann::json json;
  HfConfig config;
};

// One omni config.json being built: the top config, the options, the family's class defaults
// by sub-config label ("thinker_config.text_config") and the assumption lines gathered.
struct OmniContext {
  const HfConfig& top;
  const BuildOptions& options;
  const nlohmann::json& defaults;
  std::vector<std::string> assumptions = {};

  // The sub-config `key` of `parent`, labelled `label` ({} when absent: transformers builds the
  // class default), with the fields of defaults[label] it lacks (or holds null) filled in, named
  // in one assumption line; a field absent under its name takes the value of an alias
  // ({alias, field}: an attribute_map, as transformers 5 serializes it) first.
  Result<OmniPart> Sub(
      const HfConfig& parent, std::string_view key, std::string_view label,
      std::initializer_list<std::pair<std::string_view, std::string_view>> aliases = {});
  // A decoder part: `part` given "model_type" `type`, "architectures" [`cls`] and, when it names
  // no dtype, the first dtype of `dtypes`; built by `builder` under current transformers' buffers
  // (the omni classes postdate 4.48) and no head_class.
  Result<Model> Decoder(OmniPart& part, std::string_view type, std::string_view cls,
                        ArchitectureBuilderFn builder,
                        std::initializer_list<const HfConfig*> dtypes);
  // The tie of a head: `sub`'s tie_word_embeddings, else `parent`'s, else false (the config
  // classes' default), recording `untied_assumption` when neither names it.
  bool Tie(const nlohmann::json& sub, const HfConfig& parent, std::string_view untied_assumption);
};

// Appends `part`'s tensors to `into`: a name (or tied_to) starting with "model." takes
// `model_prefix` + the rest, "lm_head" becomes `head_name`; tensors named in `skip` are dropped.
// Sets Tensor::component; copies assumptions and notes prefixed "`label`: ".
void AppendOmniPart(Model& into, Model&& part, const std::string& model_prefix,
                    const std::string& head_name, const std::string& component,
                    std::string_view label, std::initializer_list<std::string_view> skip = {});

// SnakeBeta(channels): alpha and beta [channels] under `prefix`.
void SnakeBeta(ModelBuilder& b, const std::string& prefix, uint64_t channels);

// nn.ConvTranspose1d(in, out, kernel): weight [in, out, kernel] and bias [out].
void ConvTranspose1d(ModelBuilder& b, const std::string& prefix, uint64_t in, uint64_t out,
                     uint64_t kernel);

// The thinker's audio encoder: Qwen2_5OmniAudioEncoder or Qwen3OmniMoeAudioEncoder.
enum class OmniAudio : uint8_t { kQwen25, kQwen3 };

// What distinguishes one Qwen omni model from the other; BuildOmni assembles the thinker
// (thinker.model / thinker.lm_head, thinker.visual, thinker.audio_tower) and, with
// "enable_audio_output" (default true), the talker and speech decoder.
struct OmniFamily {
  std::string_view architecture = "";                // the class when the config names none
  const nlohmann::json& (*defaults)() = nullptr;     // the config classes' defaults, by label
  std::string_view text_type = "", text_class = "";  // the thinker text model's row and class
  ArchitectureBuilderFn text_builder = nullptr;
  std::string_view tie_assumption = "";  // said when no config names the thinker's tie
  QwenVision vision = QwenVision::kQwen25Omni;
  OmniAudio audio = OmniAudio::kQwen25;
  // With enable_audio_output: the talker, the speech decoder, then these lines when not empty.
  std::array<Status (*)(ModelBuilder&, OmniContext&), 2> append_output = {};
  std::string_view output_assumption = "", output_note = "";
  std::string_view no_output_note = "";  // the note when enable_audio_output is false
  std::array<std::string_view, 5> no_split = {};
};
Result<Model> BuildOmni(const HfConfig& config, const BuildOptions& options, const OmniFamily& f);

// Qwen2.5-Omni's token2wav (qwen2_5_omni_token2wav.cc), in `b`'s dtype (float32): the DiT and
// BigVGAN under `prefix`, each with the buffers Qwen's release stores (the DiT's
// rotary_embed.inv_freq [head_dim / 2], each BigVGAN activation's up/downsample filter [1, 1, 12]).
void EmitQwen25OmniDit(ModelBuilder& b, const HfConfig& dit, const std::string& prefix);
void EmitQwen25OmniBigVgan(ModelBuilder& b, const HfConfig& bigvgan, const std::string& prefix);

}  // namespace memfit::arch
