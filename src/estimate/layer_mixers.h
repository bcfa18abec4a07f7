#pragma once
// Which token mixers a model's layers use. Private to src/estimate.

#include <algorithm>

#include "memfit/model.h"

namespace memfit::estimate {

// Whether any layer of the model mixes its tokens with `mixer` (a Mamba-1 or a Mamba-2 scan, ...).
inline bool HasMixer(const Model& model, LayerMixer mixer) {
  return std::any_of(model.hp.layers.begin(), model.hp.layers.end(),
                     [mixer](const LayerInfo& L) { return L.mixer == mixer; });
}

}  // namespace memfit::estimate
