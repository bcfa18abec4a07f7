#pragma once
// Every architecture builder, one function per family; registry.cc maps model_type to them.

#include "memfit/architecture.h"

namespace memfit::arch {

Result<Model> BuildLlama(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildMistral(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen2(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen3(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildMixtral(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen3Moe(const HfConfig& config, const BuildOptions& options);

// dec1 families (decoder_kit.h helpers, quantization.h for quantization_config).
Result<Model> BuildGemma(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGemma2(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGemma3Text(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildPhi3(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildPhiMoe(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildPhi(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildStableLm(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildStarcoder2(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGranite(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGraniteMoe(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGraniteMoeShared(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildOlmo(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildOlmo2(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildCohere(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildCohere2(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildInternLm2(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen2Moe(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildDeepseekV2(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildDeepseekV3(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGptOss(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
