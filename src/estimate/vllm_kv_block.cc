#include "memfit/vllm_kv_block.h"

#include <algorithm>

namespace memfit {

VllmKvBlock VllmKvBlockFor(const Model& model, uint32_t cc, uint64_t requested) {
  VllmKvBlock out{.tokens = requested};
  const Hyperparameters& hp = model.hp;
  if (hp.kv_lora_rank == 0 || requested == 0) return out;
  const bool sparse = std::any_of(hp.layers.begin(), hp.layers.end(),
                                  [](const LayerInfo& L) { return L.indexer_head_dim > 0; });
  uint64_t forced = 0;
  std::string_view backend;
  if (sparse) {
    forced = 64, backend = "FlashMLA-sparse";
  } else if (cc >= 100 && cc < 110) {
    if (hp.qk_nope_head_dim == 128) {
      forced = requested == 32 ? 32 : 64, backend = "FlashInfer-MLA";
    } else {
      forced = 128, backend = "CUTLASS-MLA";
    }
  } else if (cc == 0 || (cc >= 90 && cc < 100)) {
    forced = 64, backend = "FlashMLA";
  }
  if (forced == 0 || requested % forced == 0) return out;
  return {.tokens = forced, .backend = backend, .assumed_gpu = cc == 0};
}

}  // namespace memfit
