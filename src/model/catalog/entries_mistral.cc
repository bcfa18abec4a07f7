// Catalog entries: Mistral and Mixtral.
// memfit's own data: hyperparameters as published by each model's authors (model cards, papers,
// config.json on the Hub); only the fields the builders read are written. Sources: docs/catalog.md.

#include "model/catalog/entries.h"

namespace memfit::catalog {

std::span<const CatalogEntry> EntriesMistral() {
  static const CatalogEntry kEntries[] = {
      {"mistralai/Mistral-7B-v0.1", "mistral", "Mistral 7B v0.1 base (4096-token sliding window)",
       R"({"model_type": "mistral", "architectures": ["MistralForCausalLM"], "torch_dtype":
         "bfloat16", "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
         "max_position_embeddings": 32768, "sliding_window": 4096, "tie_word_embeddings": false,
         "rope_theta": 10000.0, "hidden_act": "silu"})",
       ""},
      {"mistralai/Mistral-7B-v0.3", "mistral", "Mistral 7B v0.3 base (32768 vocabulary, full attention)",
       R"({"model_type": "mistral", "architectures": ["MistralForCausalLM"], "torch_dtype":
         "bfloat16", "vocab_size": 32768, "hidden_size": 4096, "intermediate_size": 14336,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
         "max_position_embeddings": 32768, "sliding_window": null, "tie_word_embeddings": false,
         "rope_theta": 1000000.0, "hidden_act": "silu"})",
       ""},
      {"mistralai/Mixtral-8x7B-v0.1", "mixtral", "Mixtral 8x7B base (8 experts, 2 per token)",
       R"({"model_type": "mixtral", "architectures": ["MixtralForCausalLM"], "torch_dtype":
         "bfloat16", "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
         "num_local_experts": 8, "num_experts_per_tok": 2, "max_position_embeddings": 32768,
         "sliding_window": null, "tie_word_embeddings": false, "rope_theta": 1000000.0, "hidden_act":
         "silu"})",
       "mistralai/Mistral-7B-v0.1"},
      {"mistralai/Mixtral-8x22B-v0.1", "mixtral", "Mixtral 8x22B base (8 experts, 2 per token)",
       R"({"model_type": "mixtral", "architectures": ["MixtralForCausalLM"], "torch_dtype":
         "bfloat16", "vocab_size": 32768, "hidden_size": 6144, "intermediate_size": 16384,
         "num_hidden_layers": 56, "num_attention_heads": 48, "num_key_value_heads": 8,
         "num_local_experts": 8, "num_experts_per_tok": 2, "max_position_embeddings": 65536,
         "sliding_window": null, "tie_word_embeddings": false, "rope_theta": 1000000.0, "hidden_act":
         "silu"})",
       "mistralai/Mixtral-8x7B-v0.1"},
  };
  return kEntries;
}

}  // namespace memfit::catalog
