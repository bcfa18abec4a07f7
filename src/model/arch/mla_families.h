#pragma once
// The MLA families of issue 30 outside families.h, so that declaring them rebuilds only the
// registry: GLM-4.7-Flash and MiniCPM3 (MlaFamilySpec rows) and LongCat-Flash (mla_families.cc).

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"

namespace memfit::arch {

Result<Model> BuildGlm4MoeLite(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildMiniCpm3(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildLongcatFlash(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
