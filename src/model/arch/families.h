#pragma once
// Every hand-written architecture builder, one function per family; registry.cc maps model_type
// to them. Decoder families that are a DecoderSpec row live in decoder_families.cc instead; the
// ones other builders compose are named here as BuildSpec<...> functions.

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"
#include "model/arch/decoder_spec.h"

namespace memfit::arch {

// DecoderSpec rows (decoder_families.cc) that vision-language and omni builders compose.
inline constexpr ArchitectureBuilderFn BuildLlama = BuildSpec<kLlamaSpec>;
inline constexpr ArchitectureBuilderFn BuildMistral = BuildSpec<kMistralSpec>;
inline constexpr ArchitectureBuilderFn BuildQwen2 = BuildSpec<kQwen2Spec>;
inline constexpr ArchitectureBuilderFn BuildQwen3 = BuildSpec<kQwen3Spec>;
inline constexpr ArchitectureBuilderFn BuildQwen3Moe = BuildSpec<kQwen3MoeSpec>;
inline constexpr ArchitectureBuilderFn BuildGlm4 = BuildSpec<kGlm4Spec>;
inline constexpr ArchitectureBuilderFn BuildGemma = BuildSpec<kGemmaSpec>;
inline constexpr ArchitectureBuilderFn BuildGemma2 = BuildSpec<kGemma2Spec>;
inline constexpr ArchitectureBuilderFn BuildGemma3Text = BuildSpec<kGemma3TextSpec>;

// Vision and multimodal (vit.cc, clip.cc, resnet.cc, llava.cc, timm.cc); the encoders and
// encoder-decoders are EncoderSpec rows (encoder_families.cc).
Result<Model> BuildVit(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildClip(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildSiglip(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildResnet(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildLlava(const HfConfig& config, const BuildOptions& options);
// IDEFICS v1 (idefics.cc): Llama decoder + gated cross-attention, CLIP vision, perceiver.
Result<Model> BuildIdefics(const HfConfig& config, const BuildOptions& options);
// timm models: config.json has no model_type, only "architecture" (e.g. "resnet50.a1_in1k").
Result<Model> BuildTimm(const HfConfig& config, const BuildOptions& options);

// phi3's DecoderSpec row (decoder_families.cc), the text model phi4mm.cc composes.
Result<Model> BuildPhi3(const HfConfig& config, const BuildOptions& options);
// DeepSeek-V3 (an MLA row, mla_families.cc), Kimi-K2.5's text model.
Result<Model> BuildDeepseekV3(const HfConfig& config, const BuildOptions& options);

// Issue 15 families (gemma4.cc, llama4.cc; LFM2: hybrid_families.cc).
Result<Model> BuildLfm2(const HfConfig& config, const BuildOptions& options);
// ChatGLM2/3 and GLM-4 (chatglm remote code); the v1 layout goes to the generic builder.
Result<Model> BuildChatGlm(const HfConfig& config, const BuildOptions& options);
// MiniMax-M3 (minimax_m3.cc): MiniMax-M2's experts with dense first layers, a shared expert and
// block-sparse attention layers; minimax_m3_vl adds its vision tower.
Result<Model> BuildMiniMaxM3(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildMiniMaxM3Vl(const HfConfig& config, const BuildOptions& options);
// Llama-Nemotron Super/Ultra (nemotron_nas.cc): DeciLM per-layer block_configs.
Result<Model> BuildNemotronNas(const HfConfig& config, const BuildOptions& options);
// Kimi-K2.5/K2.7: DeepSeek-V3 text + MoonViT3d vision tower + patch-merger projector.
Result<Model> BuildKimiK25(const HfConfig& config, const BuildOptions& options);
// MiMo-V2-Flash (mimo_v2_flash.cc): sliding-window/global attention MoE with stored MTP layers;
// `v2` (kMimoV2): MiMo-V2.5/V2.6 (mimo_v2), the same layout as its releases store it (a fused
// qkv_proj, the router dtype, MXFP4 experts).
Result<Model> BuildMiMo(const HfConfig& config, const BuildOptions& options, bool v2);
inline constexpr bool kMimoV2 = true;
inline constexpr bool kMimoV2Flash = false;
// Kimi Linear (kimi_linear.cc): KDA linear attention between MLA layers, DeepSeek-style MoE;
// Kimi-K3 (kimi_k25.cc): its K3 layout + MoonViT3d tower + patchmergerv2 projector.
Result<Model> BuildKimiLinear(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildKimiK3(const HfConfig& config, const BuildOptions& options);
// GLM-4.5/4.6 (an MLA row, mla_families.cc): DeepSeek-V3's MoE and MTP layers around GQA.
Result<Model> BuildGlm4Moe(const HfConfig& config, const BuildOptions& options);
// DeepSeek-V4 (deepseek_v4.cc): compressed sparse attention, hyper-connections, native names.
Result<Model> BuildDeepseekV4(const HfConfig& config, const BuildOptions& options);
// Gemma 4 and Llama 4 (gemma4.cc, llama4.cc): with `multimodal` the ForConditionalGeneration
// model and its towers, else the text model alone (gemma4_text, llama4_text); registered as
// BuildRow<..., kMultimodal> / <..., kTextOnly>.
Result<Model> BuildGemma4(const HfConfig& config, const BuildOptions& options, bool multimodal);
Result<Model> BuildLlama4(const HfConfig& config, const BuildOptions& options, bool multimodal);

// Any decoder LLM without an exact builder, from ReadTextHyperparameters (generic_decoder.cc):
// approximate, and labelled so in the model's assumptions.
Result<Model> BuildGenericDecoder(const HfConfig& config, const BuildOptions& options);
// A model with no text part but a "vision_config" (SAM): its vision encoder, approximate.
Result<Model> BuildGenericVision(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen(const HfConfig& config, const BuildOptions& options);  // qwen.cc (v1)

}  // namespace memfit::arch
