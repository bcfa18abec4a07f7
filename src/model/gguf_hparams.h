#pragma once
// Hyperparameters from GGUF metadata (private to src/model).

#include <string>
#include <vector>

#include "memfit/gguf.h"
#include "memfit/model.h"

namespace memfit {

// Fills model.hp (and hp.layers) from the `{arch}.*` keys; `layer_has_moe[il]` says whether layer
// il holds routed-expert tensors (empty: decide from expert_count and leading_dense_block_count).
Status ReadGgufHyperparameters(const GgufFile& file, const std::string& arch,
                               const std::vector<bool>& layer_has_moe, Model& model);

}  // namespace memfit
