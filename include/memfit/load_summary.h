#pragma once
// What every load estimate of one model computes first, gathered in one pass over its tensors. A
// model kept for many requests (the server's model cache, memfit/resolve.h) keeps its summary, so
// each request's load table costs O(blocks), not O(tensors): a per-expert checkpoint has ~10^5
// tensors (issue 18's uncached load; docs/benchmarks.md).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "memfit/estimate_load.h"
#include "memfit/model.h"

namespace memfit {

struct LoadSummary {
  // Resident tensors (parameters once, ties shared, buffers), in model order. Consecutive tensors
  // of one block and kind are merged where the merge changes no view's figure: a castable run is
  // extended only while its element count is even, so ceil(numel x bits / 8) of the sum equals
  // the sum of the per-tensor ceilings for every TargetBits (4, 8, 16, 32); empty tensors stay
  // alone (their parameters count in no block).
  struct Entry {
    uint64_t bytes = 0;           // as stored
    uint64_t numel = 0;           // stored elements
    uint64_t logical_params = 0;  // LogicalParams
    int32_t block = -1;           // index into block_names, -1 if in no block
    bool parameter = false;
    bool castable = false;  // a floating, not block-quantized parameter: cast to a row's dtype
    // The entry stands for this many equal tensors of the sizes above (a compact run,
    // Tensor::copies, whose per-tensor rounding at 4 bits cannot be merged away); else 1.
    uint64_t copies = 1;
  };
  ModelTotals totals;
  std::vector<std::pair<std::string, uint64_t>> stored_by_label;  // bytes per dtype label, largest first
  std::vector<std::pair<std::string, ModelTotals>> components;    // ComponentTotals
  std::vector<std::string> block_names;
  std::vector<Entry> entries;
  std::optional<Dtype> config_dtype;
  uint64_t tensors = 0;  // the model's tensor count, every copy of a compact run included
                         // (entries.size() is usually far smaller)
};

// `resident_blocks`: AssignBlocks(model, TensorFilter{}).
LoadSummary SummarizeLoad(const Model& model, const BlockAssignment& resident_blocks);
// The same answer as EstimateLoad(model, options, resident_blocks) for the summarized model.
LoadEstimate EstimateLoad(const LoadSummary& summary, const LoadOptions& options);

}  // namespace memfit
