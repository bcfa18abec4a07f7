// Fuzz target: the safetensors header reader, from raw file bytes (ReadSafetensorsHeader) and from
// a bare JSON header (ParseSafetensorsHeaderJson), then every header it accepts through
// DescribeModel, the estimators and the renderers.

#include "fuzz/fuzz_support.h"
#include "memfit/safetensors.h"
#include "test_support.h"

namespace memfit::fuzz {

using testing::MakeSafetensors;
using testing::MakeSafetensorsRaw;

std::vector<std::string> Seeds() {
  std::vector<std::string> files = {
      MakeSafetensors({{"a.weight", "F32", {2, 3}}, {"b", "BF16", {4}}, {"c", "I64", {}}},
                      {{"format", "pt"}}),
      MakeSafetensors({{"empty", "F32", {0, 5}}, {"x", "F16", {2}}}),
      MakeSafetensors({{"model.embed_tokens.weight", "BF16", {16, 8}},
                       {"model.layers.0.self_attn.q_proj.weight", "BF16", {8, 8}},
                       {"model.layers.0.mlp.up_proj.weight", "F8_E4M3", {12, 8}},
                       {"model.layers.1.self_attn.q_proj.weight", "BF16", {8, 8}},
                       {"model.norm.weight", "F32", {8}},
                       {"lm_head.weight", "BF16", {16, 8}}}),
      MakeSafetensors({{"t", "F4", {4, 8}}, {"u", "F6_E2M3", {4, 8}}, {"v", "BOOL", {3}},
                       {"w", "C64", {2}}, {"x", "U8", {1, 1, 1, 1, 1}}}),
      MakeSafetensorsRaw("{}", 0),
      MakeSafetensorsRaw(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})", 12),
      MakeSafetensorsRaw(R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]}})", 8),
      MakeSafetensorsRaw(R"({"__metadata__": {"k": 3}})", 0),
  };
  std::vector<std::string> seeds = files;
  // The same headers without the 8-byte length and the data: the ParseSafetensorsHeaderJson path.
  for (const auto& file : files) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(file[i]);
    seeds.push_back(file.substr(8, n));
  }
  return seeds;
}

namespace {

void CheckHeader(const SafetensorsHeader& header) {
  uint64_t expected = 0;
  for (const auto& t : header.tensors) {
    Require(t.begin == expected, "tensors not contiguous after a successful parse");
    Require(t.end >= t.begin, "tensor ends before it begins");
    uint64_t numel = 1;
    for (uint64_t d : t.shape) numel *= d;  // validated: cannot overflow
    Require(numel * DtypeBits(t.dtype) / 8 == t.bytes(), "tensor bytes differ from shape x dtype");
    expected = t.end;
  }
  Require(header.data_bytes == expected, "data_bytes differs from the last tensor's end");
}

// `label`: raw input bytes used as the model's name, so renderers see arbitrary bytes too.
void Describe(SafetensorsHeader header, std::string_view label, uint32_t choice) {
  ModelInputs inputs;
  inputs.name = "fuzz";
  inputs.location = "fuzz.safetensors";
  inputs.safetensors.emplace_back("model.safetensors", std::move(header));
  DescribeAndExercise(inputs, label, choice);
}

}  // namespace

void Run(std::string_view input) {
  MemoryByteSource source{std::string(input), "fuzz.safetensors"};
  auto file = ReadSafetensorsHeader(source);
  CheckResult(file);
  if (file) {
    CheckHeader(*file);
    Require(8 + file->header_bytes + file->data_bytes == input.size(),
            "header and data do not account for the whole file");
    Describe(std::move(*file), input.substr(0, 16), Choice(input));
  }
  auto json = ParseSafetensorsHeaderJson(input, std::nullopt);
  CheckResult(json);
  if (json) {
    CheckHeader(*json);
    Describe(std::move(*json), input.substr(0, 16), Choice(input));
  }
}

}  // namespace memfit::fuzz
