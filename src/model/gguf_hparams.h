#pragma once
// Hyperparameters from GGUF metadata (private to src/model).

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/gguf.h"
#include "memfit/model.h"

namespace memfit {

// Layers memfit reads from a GGUF file (llama.cpp itself stops at LLAMA_MAX_LAYERS = 512).
inline constexpr uint64_t kMaxGgufLayers = 1 << 16;
// llama.cpp holds every hyperparameter memfit reads in a uint32_t (llama_hparams): larger values
// are errors, which also keeps products of two of them within 64 bits.
inline constexpr uint64_t kMaxGgufHparam = UINT32_MAX;

// Fills model.hp (and hp.layers) from the `{arch}.*` keys; `layer_has_moe[il]` says whether layer
// il holds routed-expert tensors (empty: decide from expert_count and leading_dense_block_count).
Status ReadGgufHyperparameters(const GgufFile& file, const std::string& arch,
                               const std::vector<bool>& layer_has_moe, Model& model);

}  // namespace memfit
