#pragma once
// Shared pieces of the Qwen omni builders (qwen2_5_omni.cc, qwen3_omni_moe.cc): sub-configs with
// their config classes' defaults, parts built by a registered decoder builder and moved under the
// composite's prefixes, list-valued config fields, SnakeBeta activations.

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
