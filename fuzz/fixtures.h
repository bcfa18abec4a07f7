#pragma once
// Fixed inputs that fuzz targets combine with the fuzzed one (a fuzzed index with a valid config,
// a fuzzed config with valid headers). Built from the tests' fixture builders.

#include <cstdlib>
#include <string>

#include "memfit/hf_config.h"
#include "memfit/safetensors.h"
#include "test_support.h"

namespace memfit::fuzz {

// A two-layer llama config small enough to read by eye.
inline constexpr std::string_view kTinyLlamaConfig = R"({
  "model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16",
  "vocab_size": 32, "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 2,
  "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 64,
  "tie_word_embeddings": false})";

// The safetensors header of kTinyLlamaConfig's checkpoint, plus a tensor no builder knows.
inline SafetensorsHeader TinyLlamaHeader() {
  std::vector<testing::FakeTensor> tensors = {{"model.embed_tokens.weight", "BF16", {32, 8}}};
  for (int i = 0; i < 2; ++i) {
    const std::string l = "model.layers." + std::to_string(i);
    tensors.push_back({l + ".input_layernorm.weight", "BF16", {8}});
    tensors.push_back({l + ".self_attn.q_proj.weight", "BF16", {8, 8}});
    tensors.push_back({l + ".self_attn.k_proj.weight", "BF16", {4, 8}});
    tensors.push_back({l + ".self_attn.v_proj.weight", "BF16", {4, 8}});
    tensors.push_back({l + ".self_attn.o_proj.weight", "BF16", {8, 8}});
    tensors.push_back({l + ".mlp.gate_proj.weight", "BF16", {12, 8}});
    tensors.push_back({l + ".mlp.up_proj.weight", "BF16", {12, 8}});
    tensors.push_back({l + ".mlp.down_proj.weight", "BF16", {8, 12}});
    tensors.push_back({l + ".post_attention_layernorm.weight", "BF16", {8}});
  }
  tensors.push_back({"model.norm.weight", "BF16", {8}});
  tensors.push_back({"lm_head.weight", "BF16", {32, 8}});
  tensors.push_back({"extra.scale", "F32", {1}});
  std::string file = testing::MakeSafetensors(tensors, {{"format", "pt"}});
  MemoryByteSource source(std::move(file), "tiny.safetensors");
  auto header = ReadSafetensorsHeader(source);
  if (!header) std::abort();  // the fixture itself is wrong
  return std::move(*header);
}

}  // namespace memfit::fuzz
