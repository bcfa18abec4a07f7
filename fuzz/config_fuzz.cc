// Fuzz target: config.json (HfConfig::Parse), every architecture builder it reaches, DescribeModel
// from the config alone and merged with valid headers, the estimators and the renderers: a fuzzed
// config goes all the way to an estimate.

#include "fuzz/fixtures.h"
#include "fuzz/fuzz_support.h"
#include "memfit/architecture.h"
#include "memfit/catalog.h"

namespace memfit::fuzz {

std::vector<std::string> Seeds() {
  std::vector<std::string> seeds = {std::string(kTinyLlamaConfig)};
  for (const auto& entry : Catalog()) seeds.emplace_back(entry.config_json);
  // One small config per registered builder, so new builders get seeds without edits here. The
  // keys are the union of what the llama-style builders read; others ignore what they do not use.
  for (const auto& builder : ArchitectureBuilders()) {
    seeds.push_back(fmt::format(
        R"({{"model_type": "{}", "architectures": ["{}"], "torch_dtype": "float16",)"
        R"( "vocab_size": 64, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 3,)"
        R"( "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 4,)"
        R"( "max_position_embeddings": 32, "sliding_window": 8, "num_local_experts": 3,)"
        R"( "num_experts": 3, "num_experts_per_tok": 2, "moe_intermediate_size": 8,)"
        R"( "decoder_sparse_step": 2, "mlp_only_layers": [0], "rope_scaling": {{"type": "linear",)"
        R"( "factor": 2.0}}, "tie_word_embeddings": true, "attention_bias": true,)"
        R"( "auto_map": {{"AutoConfig": "c.C", "AutoModelForCausalLM": "m.M"}},)"
        R"( "quantization_config": {{"quant_method": "bitsandbytes", "load_in_4bit": true}}}})",
        builder.model_type, builder.architecture.empty() ? "X" : builder.architecture));
  }
  // Hostile seeds: products that overflow, counts that would build millions of tensors.
  seeds.push_back(R"({"model_type": "llama", "vocab_size": 1099511627776, "hidden_size": 1099511627776, "num_hidden_layers": 1, "num_attention_heads": 1})");
  seeds.push_back(R"({"model_type": "mixtral", "vocab_size": 8, "hidden_size": 8, "num_hidden_layers": 1099511627776, "num_attention_heads": 1, "num_local_experts": 1099511627776, "num_experts_per_tok": 1})");
  seeds.push_back(R"({"model_type": "llama", "vocab_size": 18446744073709551615, "hidden_size": -1, "num_hidden_layers": 1e300, "num_attention_heads": [[[[]]]]})");
  return seeds;
}

void Run(std::string_view input) {
  auto config = HfConfig::Parse(input, "fuzz/config.json");
  CheckResult(config);
  if (!config) return;
  static const SafetensorsHeader header = TinyLlamaHeader();
  ModelInputs inputs;
  inputs.name = "fuzz";
  inputs.location = "fuzz";
  inputs.config = std::move(*config);
  // The config alone (choice / 2 even), or merged with the tiny llama's headers.
  const uint32_t choice = Choice(input);
  if (choice / 2 % 2 == 1) inputs.safetensors.emplace_back("model.safetensors", header);
  DescribeAndExercise(inputs, input.substr(0, 16), choice);
}

}  // namespace memfit::fuzz
