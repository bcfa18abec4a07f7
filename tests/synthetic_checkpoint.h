#pragma once
// Synthetic checkpoints for benchmarks and tests: a DeepSeek-V3-shaped sharded safetensors model
// (headers only; data regions are sparse holes, so 163 shards take almost no disk).

#include <string>

namespace memfit::testing {

struct SyntheticShape {
  int shards = 163;
  int layers = 61;
  int dense_layers = 3;     // first_k_dense_replace
  int experts = 256;        // routed experts per MoE layer
  int hidden = 7168;
  int moe_intermediate = 2048;
  int dense_intermediate = 18432;
  int vocab = 129280;
};

// Writes config.json, model.safetensors.index.json and the shards into `dir` (created).
// Returns the number of tensors written.
size_t WriteSyntheticDeepSeekCheckpoint(const std::string& dir, const SyntheticShape& shape = {});

}  // namespace memfit::testing
