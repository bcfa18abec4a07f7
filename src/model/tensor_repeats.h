#pragma once
// The compact form's one step that only builders take (memfit/model.h, Tensor::copies).

#include "memfit/model.h"

namespace memfit {

// Writes out the runs that do not lie in one no-split block (RepeatsStayInBlocks), and only those.
void ExpandRepeatsOutsideBlocks(Model& model);

}  // namespace memfit
