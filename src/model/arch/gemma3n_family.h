#pragma once
// Gemma 3n (google/gemma-3n-E2B, -E4B and their -it variants): the builders registry.cc maps
// model_type "gemma3n" and "gemma3n_text" to, and the two towers they compose. Kept out of
// families.h and vlm_families.h so that adding them does not rebuild every builder.

#include <cstdint>
#include <string>
#include <string_view>

#include "memfit/architecture.h"

namespace memfit::arch {

class ModelBuilder;
struct Quantization;

// gemma3n.cc: Gemma3nForConditionalGeneration ("gemma3n"): model.language_model (the text model
// below), model.vision_tower.timm_model (MobileNetV5), model.audio_tower (the USM conformer),
// model.embed_vision and model.embed_audio, each a component; lm_head tied.
Result<Model> BuildGemma3n(const HfConfig& config, const BuildOptions& options);
// gemma3n.cc: Gemma3nForCausalLM ("gemma3n_text"): per-layer embeddings, AltUp, LAuReL,
// KV-shared layers and per-layer MLP widths (MatFormer); model.* and lm_head.
Result<Model> BuildGemma3nText(const HfConfig& config, const BuildOptions& options);

// mobilenetv5.cc: timm's MobileNetV5 encoder named `architecture` (only "mobilenetv5_300m_enc",
// the one timm registers as an encoder) under `prefix`, every tensor as timm's state_dict holds
// it. Returns its output channels (2048), or 0 after recording an error in `b`.
uint64_t EmitMobileNetV5Encoder(ModelBuilder& b, std::string_view architecture,
                                const std::string& prefix);

// gemma3n_audio.cc: `key` of `c` (`fallback` when absent, then named "key = fallback" in the
// comma-separated `defaulted`); errors are recorded in `b`.
uint64_t DefaultedUint(ModelBuilder& b, const HfConfig& c, const char* key, uint64_t fallback,
                       std::string& defaulted);

// gemma3n_audio.cc: Gemma3nAudioEncoder under `prefix` from an audio_config (absent fields take
// Gemma3nAudioConfig's defaults, listed in `defaulted`); its nn.Linear modules through QLinear
// under `q`. Errors are recorded in `b`.
void EmitGemma3nAudioEncoder(ModelBuilder& b, const Quantization& q, const HfConfig& audio,
                             const std::string& prefix, std::string& defaulted);

}  // namespace memfit::arch
