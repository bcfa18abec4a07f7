// Fuzz target: config.json (HfConfig::Parse), every architecture builder it reaches, DescribeModel
// from the config alone and merged with valid headers, the estimators and the renderers: a fuzzed
// config goes all the way to an estimate.

#include "formats/hf_config_json.h"
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
  // Families without a builder: the generic reader and builder (hybrid patterns, MLA + DSA,
  // nested text configs, Python's Infinity).
  seeds.push_back(R"({"model_type": "nemotron_h", "architectures": ["NemotronHForCausalLM"], "hidden_size": 16, "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8, "vocab_size": 32, "intermediate_size": 24, "hybrid_override_pattern": "M*-E", "mamba_num_heads": 4, "mamba_head_dim": 8, "n_groups": 2, "ssm_state_size": 8, "conv_kernel": 4, "n_routed_experts": 2, "moe_intermediate_size": 8, "time_step_limit": [0.0, Infinity]})");
  seeds.push_back(R"({"model_type": "qwen3_5_moe", "architectures": ["Qwen3_5MoeForConditionalGeneration"], "text_config": {"hidden_size": 16, "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8, "vocab_size": 32, "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"], "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 4, "linear_value_head_dim": 4, "num_experts": 4, "moe_intermediate_size": 8, "shared_expert_intermediate_size": 8, "mtp_num_hidden_layers": 1}, "vision_config": {"depth": 2, "hidden_size": 8, "intermediate_size": 16, "out_hidden_size": 16}})");
  seeds.push_back(R"({"model_type": "glm_moe_dsa", "architectures": ["GlmMoeDsaForCausalLM"], "hidden_size": 16, "num_hidden_layers": 3, "num_attention_heads": 2, "vocab_size": 32, "intermediate_size": 24, "kv_lora_rank": 8, "q_lora_rank": 8, "qk_rope_head_dim": 4, "qk_nope_head_dim": 4, "v_head_dim": 4, "index_head_dim": 4, "index_n_heads": 2, "n_routed_experts": 2, "first_k_dense_replace": 1, "moe_layer_freq": 1, "num_nextn_predict_layers": 1, "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}})");
  seeds.push_back(R"({"model_type": "lfm2", "architectures": ["Lfm2ForCausalLM"], "hidden_size": 16, "num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 32, "block_ff_dim": 48, "block_auto_adjust_ff_dim": true, "full_attn_idxs": [1], "conv_L_cache": 3, "sliding_window": 4, "layer_types": ["conv", "full_attention", "sliding_attention"], "num_kv_shared_layers": 1, "compress_ratios": [0, 4, 128], "attention_chunk_size": 8})");
  // An MLX block (mlx_quantization.h): base spec, a per-module override and a `false` entry.
  seeds.push_back(R"({"model_type": "llama", "hidden_size": 128, "intermediate_size": 192, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 64, "torch_dtype": "bfloat16", "quantization": {"group_size": 64, "bits": 4, "mode": "affine", "model.layers.0.mlp.down_proj": {"group_size": 32, "bits": 8}, "lm_head": false}})");
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
