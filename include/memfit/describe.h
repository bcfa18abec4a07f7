#pragma once
// DescribeModel: config and/or headers -> one Model. Headers give exact stored tensors for any
// architecture; the config (through an architecture builder) adds hyperparameters, the head,
// ties, buffers and the indivisible blocks. Pure: the caller reads the bytes.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "memfit/architecture.h"
#include "memfit/gguf_model.h"
#include "memfit/hf_config.h"
#include "memfit/model.h"
#include "memfit/result.h"
#include "memfit/safetensors.h"

namespace memfit {

struct ModelInputs {
  std::string name;                  // for reports
  std::string location{};            // where it was found: a path, "cache", "catalog", a URL
  std::optional<HfConfig> config;
  // Safetensors headers, one per file, with the file name (relative to the model root).
  std::vector<std::pair<std::string, SafetensorsHeader>> safetensors{};
  // model.safetensors.index.json or pytorch_model.bin.index.json
  std::optional<WeightIndex> index{};
  std::string index_name{};
  std::vector<std::string> assumptions{};  // made while resolving (e.g. "revision main")
  // A GGUF model: its files in split order (one unless gguf-split was used). When present,
  // DescribeModel builds the model from these headers alone.
  std::vector<GgufShard> gguf{};
};

struct DescribeOptions {
  BuildOptions build{};
  // Build from config even when headers exist (accelerate mode, what-if configs).
  bool prefer_config = false;
};

Result<Model> DescribeModel(const ModelInputs& inputs, const DescribeOptions& options = {});

}  // namespace memfit
