#pragma once
// Every hand-written architecture builder, one function per family; registry.cc maps model_type
// to them. Decoder families that are a DecoderSpec row live in decoder_families.cc instead; the
// ones other builders compose are named here as BuildSpec<...> functions.

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"
#include "model/arch/classic_decoder.h"
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

// GPT-style decoders: ClassicDecoderSpec rows (classic_families.cc).
inline constexpr ArchitectureBuilderFn BuildGpt2 = BuildClassicSpec<kGpt2Spec>;
inline constexpr ArchitectureBuilderFn BuildGptNeox = BuildClassicSpec<kGptNeoxSpec>;
inline constexpr ArchitectureBuilderFn BuildGptj = BuildClassicSpec<kGptjSpec>;
inline constexpr ArchitectureBuilderFn BuildGptBigcode = BuildClassicSpec<kGptBigcodeSpec>;
inline constexpr ArchitectureBuilderFn BuildOpt = BuildClassicSpec<kOptSpec>;
inline constexpr ArchitectureBuilderFn BuildBloom = BuildClassicSpec<kBloomSpec>;
inline constexpr ArchitectureBuilderFn BuildFalcon = BuildClassicSpec<kFalconSpec>;
inline constexpr ArchitectureBuilderFn BuildMpt = BuildClassicSpec<kMptSpec>;

// Encoders, encoder-decoders, vision and multimodal (bert.cc, distilbert.cc, t5.cc, bart.cc,
// whisper.cc, vit.cc, clip.cc, resnet.cc, llava.cc, timm.cc).
Result<Model> BuildBert(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildRoberta(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildXlmRoberta(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildElectra(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildDistilBert(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildDebertaV2(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildT5(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildMt5(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildUmt5(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildBart(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildMbart(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildWhisper(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildVit(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildClip(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildSiglip(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildResnet(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildLlava(const HfConfig& config, const BuildOptions& options);
// IDEFICS v1 (idefics.cc): Llama decoder + gated cross-attention, CLIP vision, perceiver.
Result<Model> BuildIdefics(const HfConfig& config, const BuildOptions& options);
// Idefics3 (idefics3.cc): SigLIP-style vision + pixel-shuffle connector + llama text model.
Result<Model> BuildIdefics3(const HfConfig& config, const BuildOptions& options);
// timm models: config.json has no model_type, only "architecture" (e.g. "resnet50.a1_in1k").
Result<Model> BuildTimm(const HfConfig& config, const BuildOptions& options);

// Decoder families with layouts a DecoderSpec does not say (decoder_kit.h helpers).
Result<Model> BuildPhi3(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildPhiMoe(const HfConfig& config, const BuildOptions& options);
inline constexpr ArchitectureBuilderFn BuildPhi = BuildClassicSpec<kPhiSpec>;
inline constexpr ArchitectureBuilderFn BuildStableLm = BuildClassicSpec<kStableLmSpec>;
inline constexpr ArchitectureBuilderFn BuildStarcoder2 = BuildClassicSpec<kStarcoder2Spec>;
Result<Model> BuildGraniteMoeHybrid(const HfConfig& config, const BuildOptions& options);
inline constexpr ArchitectureBuilderFn BuildInternLm2 = BuildClassicSpec<kInternLm2Spec>;
Result<Model> BuildDeepseekV2(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildDeepseekV3(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGptOss(const HfConfig& config, const BuildOptions& options);

// Issue 15 families (nemotron_h.cc, lfm2.cc, deepseek.cc, gemma4.cc, llama4.cc).
Result<Model> BuildNemotronH(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildLfm2(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildDeepseekV32(const HfConfig& config, const BuildOptions& options);
// ChatGLM2/3 and GLM-4 (chatglm remote code); the v1 layout goes to the generic builder.
Result<Model> BuildChatGlm(const HfConfig& config, const BuildOptions& options);
// MiniMax-M3 (minimax_m3.cc): MiniMax-M2's experts with dense first layers, a shared expert and
// block-sparse attention layers; minimax_m3_vl adds its vision tower.
Result<Model> BuildMiniMaxM3(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildMiniMaxM3Vl(const HfConfig& config, const BuildOptions& options);
// Step-3.5-Flash / Step-3.7-Flash text model (step3p7.cc).
Result<Model> BuildStep3p7(const HfConfig& config, const BuildOptions& options);
// Llama-Nemotron Super/Ultra (nemotron_nas.cc): DeciLM per-layer block_configs.
Result<Model> BuildNemotronNas(const HfConfig& config, const BuildOptions& options);
// Kimi-K2.5/K2.7: DeepSeek-V3 text + MoonViT3d vision tower + patch-merger projector.
Result<Model> BuildKimiK25(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGlmMoeDsa(const HfConfig& config, const BuildOptions& options);
// MiMo-V2-Flash (mimo_v2_flash.cc): sliding-window/global attention MoE with stored MTP layers.
Result<Model> BuildMiMoV2Flash(const HfConfig& config, const BuildOptions& options);
// Kimi Linear (kimi_linear.cc): KDA linear attention between MLA layers, DeepSeek-style MoE;
// Kimi-K3 (kimi_k3.cc): its K3 layout + MoonViT3d tower + patchmergerv2 projector.
Result<Model> BuildKimiLinear(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildKimiK3(const HfConfig& config, const BuildOptions& options);
// GLM-4.5/4.6 (deepseek.cc): DeepSeek-V3's MoE and MTP layers around grouped-query attention.
Result<Model> BuildGlm4Moe(const HfConfig& config, const BuildOptions& options);
// DeepSeek-V4 (deepseek_v4.cc): compressed sparse attention, hyper-connections, native names.
Result<Model> BuildDeepseekV4(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGemma4(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGemma4Text(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildLlama4(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildLlama4Text(const HfConfig& config, const BuildOptions& options);

inline constexpr ArchitectureBuilderFn BuildStableLmEpoch = BuildClassicSpec<kStableLmEpochSpec>;

// Any decoder LLM without an exact builder, from ReadTextHyperparameters (generic_decoder.cc):
// approximate, and labelled so in the model's assumptions.
Result<Model> BuildGenericDecoder(const HfConfig& config, const BuildOptions& options);
// A model with no text part but a "vision_config" (SAM): its vision encoder, approximate.
Result<Model> BuildGenericVision(const HfConfig& config, const BuildOptions& options);
// Qwen hybrid and vision-language families (qwen3_next.cc, qwen3_5.cc, qwen3_vl.cc,
// qwen2_vl.cc; shared pieces in qwen_hybrid.h and qwen_vision.h).
Result<Model> BuildQwen3Next(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen35(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen35Moe(const HfConfig& config, const BuildOptions& options);
// qwen3_5_text / qwen3_5_moe_text: the Qwen3.5 language model alone (Qwen3_5[Moe]ForCausalLM).
Result<Model> BuildQwen35Text(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen3Vl(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen3VlMoe(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen2Vl(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen25Vl(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen(const HfConfig& config, const BuildOptions& options);  // qwen.cc (v1)

}  // namespace memfit::arch
