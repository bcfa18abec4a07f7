#pragma once
// Shared pieces of the Qwen omni builders (qwen2_5_omni.cc, qwen3_omni_moe.cc): sub-configs with
// their config classes' defaults, parts built by a registered decoder builder and moved under the
// composite's prefixes, list-valued config fields, SnakeBeta activations.

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

// The sub-config `key` of `parent` as JSON ({} when absent: transformers builds the class
// default), with every field of `defaults` (the transformers config class's defaults) that it
// lacks filled in; a field absent under its name but present under an alias of `aliases`
// ({alias, field}: a class's attribute_map, as transformers 5 serializes it) takes the alias's
// value first. One assumption line names the defaulted fields, prefixed `label`. Errors when `key`
// is present but not an object.
Result<nlohmann::json> OmniSubConfig(
    const HfConfig& parent, std::string_view key, const nlohmann::json& defaults,
    std::string_view label, std::vector<std::string>& assumptions,
    std::initializer_list<std::pair<std::string_view, std::string_view>> aliases = {});

// Builds `json` (a decoder config the caller gave its "model_type" and "architectures") with
// `builder` under the rotary-buffer convention of current transformers (the omni classes postdate
// 4.48) and no head_class; `where` names the sub-config in errors.
Result<Model> BuildOmniPart(ArchitectureBuilderFn builder, nlohmann::json json,
                            const std::string& where, const BuildOptions& options);

// Appends `part`'s tensors to `into`: a name (or tied_to) starting with "model." takes
// `model_prefix` + the rest ("thinker.model."), "lm_head" becomes `head_name`; tensors whose
// original name is in `skip` are dropped. Sets Tensor::component; copies assumptions and notes
// prefixed "`label`: ".
void AppendOmniPart(Model& into, Model&& part, const std::string& model_prefix,
                    const std::string& head_name, const std::string& component,
                    std::string_view label, std::initializer_list<std::string_view> skip = {});

// A config field that lists non-negative integers ("upsample_rates"): at most `max_entries`,
// each at most kMaxConfigDimension; `fallback` when absent. Records an error naming the field
// otherwise and returns {}.
std::vector<uint64_t> UintList(ModelBuilder& b, const HfConfig& c, std::string_view key,
                               std::vector<uint64_t> fallback, size_t max_entries = 64);

// SnakeBeta(channels) (transformers' Qwen2.5-Omni BigVGAN and Qwen3-Omni code2wav): alpha and
// beta [channels] under `prefix`.
void SnakeBeta(ModelBuilder& b, const std::string& prefix, uint64_t channels);

// nn.ConvTranspose1d(in, out, kernel): weight [in, out, kernel] and bias [out].
void ConvTranspose1d(ModelBuilder& b, const std::string& prefix, uint64_t in, uint64_t out,
                     uint64_t kernel);

// A sub-config's JSON as a decoder builder reads it: "model_type" `type`, "architectures" [`cls`],
// and, when it names no dtype, the dtype of the first of `dtypes` that names one.
void PrepareDecoder(nlohmann::json& j, std::string_view type, std::string_view cls,
                    std::initializer_list<const HfConfig*> dtypes);

// The tie of a head: `sub`'s tie_word_embeddings, else `parent`'s, else false (the config
// classes' default), recording `untied_assumption` when neither names it.
bool OmniTie(const nlohmann::json& sub, const HfConfig& parent, std::string_view untied_assumption,
             std::vector<std::string>& assumptions);

// The thinker's Whisper-style audio encoder under `prefix`:
// - kQwen25 (Qwen2_5OmniAudioEncoder): conv1, conv2, the sinusoidal positional_embedding buffer
//   in the model dtype (the release stores it; transformers does not load it),
//   audio_bos_eos_token [2, output_dim], layers with k_proj unbiased, ln_post, proj;
// - kQwen3 (Qwen3OmniMoeAudioEncoder): the float32 positional buffer (not persistent), layers
//   with every projection biased, ln_post, conv2d1..3 (3x3, stride 2), conv_out
//   Linear(downsample_hidden_size x mel/8, d_model) without bias, proj1, proj2.
enum class OmniAudio : uint8_t { kQwen25, kQwen3 };
void EmitOmniAudio(ModelBuilder& b, const HfConfig& a, OmniAudio kind, const std::string& prefix);

// What distinguishes one Qwen omni model from the other; BuildOmni assembles the thinker
// (thinker.model / thinker.lm_head, thinker.visual, thinker.audio_tower) and, with
// "enable_audio_output" (default true), calls append_output for the talker and speech decoder.
struct OmniFamily {
  std::string_view architecture = "";  // the class when the config names none
  const nlohmann::json& (*text_defaults)() = nullptr;    // the thinker text config class's
  const nlohmann::json& (*vision_defaults)() = nullptr;  // ... vision encoder config class's
  const nlohmann::json& (*audio_defaults)() = nullptr;   // ... audio encoder config class's
  std::string_view text_type = "", text_class = "";      // the text model's row and class
  ArchitectureBuilderFn text_builder = nullptr;
  std::string_view tie_assumption = "";  // said when no config names the thinker's tie
  QwenVision vision = QwenVision::kQwen25Omni;
  OmniAudio audio = OmniAudio::kQwen25;
  Status (*append_output)(ModelBuilder&, const HfConfig&, const BuildOptions&,
                          std::vector<std::string>& assumptions) = nullptr;
  std::string_view no_output_note = "";  // the note when enable_audio_output is false
  std::array<std::string_view, 5> no_split = {};
};
Result<Model> BuildOmni(const HfConfig& config, const BuildOptions& options, const OmniFamily& f);

}  // namespace memfit::arch

namespace memfit::arch {

// Qwen2.5-Omni's token2wav (qwen2_5_omni_token2wav.cc), emitted by `b` (float32 tensors: the
// model keeps token2wav in float32) from the sub-configs with their class defaults applied:
// the DiT under `dit_prefix` ("token2wav.code2wav_dit_model") and BigVGAN under `bigvgan_prefix`.
// Both emit the buffers Qwen's release stores as persistent ones (the DiT's rotary_embed.inv_freq
// [head_dim / 2], each BigVGAN TorchActivation1d's upsample.filter and downsample.filter
// [1, 1, 12]): Qwen/Qwen2.5-Omni-7B's index total_size counts them (qwen2_5_omni.cc).
void EmitQwen25OmniDit(ModelBuilder& b, const HfConfig& dit, const std::string& prefix);
void EmitQwen25OmniBigVgan(ModelBuilder& b, const HfConfig& bigvgan, const std::string& prefix);

}  // namespace memfit::arch
