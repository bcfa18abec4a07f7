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
// GPT-style decoders (one file each: gpt2.cc, gpt_neox.cc, gptj.cc, gpt_bigcode.cc, opt.cc,
// bloom.cc, falcon.cc, mpt.cc).
Result<Model> BuildGpt2(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGptNeox(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGptj(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGptBigcode(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildOpt(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildBloom(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildFalcon(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildMpt(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
