#pragma once
// Which role a tensor plays, read from its name, shape and flags (not from the family name):
// linear weights inside blocks (what quantizers and LoRA touch), embeddings, the task head,
// norms/biases and everything else. Private to src/estimate.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/model.h"

namespace memfit::estimate {

enum class Role : uint8_t {
  kLinear,     // 2-D ".weight" in a block, or a 3-D expert stack
  kEmbedding,  // token / position embeddings
  kHead,       // task head weights (lm_head, classifier), untied
  kSmall,      // 1-D parameters: norms, biases, scalars
  kOther,      // convolutions and other >= 3-D parameters
  kBuffer,     // buffers (never trained, never quantized)
  kTied,       // shares storage with another tensor: counted there
};

struct RoleTensor {
  const Tensor* tensor = nullptr;
  Role role = Role::kOther;
  std::string_view module{};  // tensor->name without the trailing ".weight"/".bias"
  uint64_t out = 0;    // linear: rows (times experts for stacks)
  uint64_t in = 0;     // linear: columns
};

std::vector<RoleTensor> ClassifyTensors(const Model& model);

// PEFT's matching: the module path equals the target or ends with "." + target.
bool MatchesTarget(std::string_view module, std::string_view target);

// The module a stored tensor belongs to: "a.b.weight" -> "a.b"; "a.b.weight.absmax" -> "a.b"
// (bitsandbytes' quant state hangs off the weight); "a.experts.gate_up_proj_blocks" -> "a.experts".
std::string_view WeightModule(std::string_view tensor_name);

// Decoder layer index from a name such as "model.layers.12.mlp.up_proj.weight", or -1.
int64_t LayerIndex(std::string_view name);

}  // namespace memfit::estimate
