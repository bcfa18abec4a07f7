#pragma once
// The MLA families of issue 30 outside families.h, so that declaring them rebuilds only the
// registry: GLM-4.7-Flash (deepseek.cc), MiniCPM3 and LongCat-Flash (mla_families.cc).

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"

namespace memfit::arch {

// glm4_moe_lite: DeepSeek-V3's MLA, MoE and MTP layout (deepseek.cc).
Result<Model> BuildGlm4MoeLite(const HfConfig& config, const BuildOptions& options);
// minicpm3 and longcat_flash: MLA decoders of their own shape (mla_families.cc, mla_kit.h).
Result<Model> BuildMiniCpm3(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildLongcatFlash(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
