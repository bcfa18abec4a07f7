#pragma once
// Config readers shared by the classic decoders (classic_decoder.h).

#include "model/arch/builder_kit.h"

namespace memfit::arch {

// True when transformers' config string is older than major.minor ("4.27.4" < 4.28).
bool TransformersVersionBefore(const HfConfig& config, int major, int minor);

}  // namespace memfit::arch
