// Fuzz target: the sharded checkpoint index (model.safetensors.index.json), then DescribeModel
// with the parsed index beside a valid config (config path) and beside valid headers (headers
// path), through the estimators and renderers.

#include <algorithm>

#include "fuzz/fixtures.h"
#include "fuzz/fuzz_support.h"
#include "memfit/safetensors.h"

namespace memfit::fuzz {

std::vector<std::string> Seeds() {
  return {
      R"({"metadata": {"total_size": 1.6e10}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors", "c": "model-00001-of-00002.safetensors"}})",
      R"({"metadata": {}, "weight_map": {}})",
      R"({"metadata": {"total_size": 1168}, "weight_map": {"model.embed_tokens.weight": "model.safetensors", "model.norm.weight": "model.safetensors", "lm_head.weight": "model.safetensors"}})",
      R"({"metadata": {"total_size": 18446744073709551615}, "weight_map": {"missing.weight": "m.safetensors"}})",
      R"({"metadata": {"total_size": -1}, "weight_map": {}})",
      R"({"metadata": {"total_size": "big"}, "weight_map": {}})",
      R"({"metadata": {}})",
      R"({"weight_map": {"a": 3}})",
      R"({"weight_map": {"a": "../../etc/passwd"}})",
      R"({"weight_map": {"a": "x", "a": "y"}})",
  };
}

void Run(std::string_view input) {
  auto index = ParseWeightIndex(input, "fuzz.index.json");
  CheckResult(index);
  if (!index) return;
  Require(std::is_sorted(index->shards().begin(), index->shards().end()), "shards not sorted");
  for (const auto& [tensor, shard] : index->weight_map) {
    Require(std::binary_search(index->shards().begin(), index->shards().end(), shard),
            "a weight_map shard missing from shards");
    Require(!shard.empty() && shard.front() != '/' && shard.find("..") == std::string::npos,
            "an unsafe shard name accepted");
  }
  static const HfConfig config = [] {
    auto parsed = HfConfig::Parse(kTinyLlamaConfig, "tiny/config.json");
    if (!parsed) std::abort();
    return std::move(*parsed);
  }();
  static const SafetensorsHeader header = TinyLlamaHeader();
  ModelInputs inputs;
  inputs.name = "fuzz";
  inputs.location = "fuzz";
  inputs.index = std::move(*index);
  inputs.index_name = "model.safetensors.index.json";
  inputs.config = config;
  // The index beside a config alone (choice / 2 even) or beside the headers too.
  const uint32_t choice = Choice(input);
  if (choice / 2 % 2 == 1) inputs.safetensors.emplace_back("model.safetensors", header);
  DescribeAndExercise(inputs, "fuzz", choice);
}

}  // namespace memfit::fuzz
