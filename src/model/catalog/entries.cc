// Catalog entries. Hyperparameters as published by each model's authors; only the fields the
// builders read are written (plus torch_dtype and architectures).

#include "model/catalog/entries.h"

#include <vector>

namespace memfit::catalog {
namespace {

const std::vector<CatalogEntry>& All() {
  static const std::vector<CatalogEntry> kEntries = {
      {"meta-llama/Llama-3.2-1B", "llama", "Llama 3.2 1B base (tied embeddings)",
       R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16",
           "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 8192,
           "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
           "head_dim": 64, "max_position_embeddings": 131072, "tie_word_embeddings": true,
           "rope_theta": 500000.0, "hidden_act": "silu"})",
       ""},
      {"meta-llama/Llama-3.1-8B", "llama", "Llama 3.1 8B base",
       R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16",
           "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336,
           "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "max_position_embeddings": 131072, "tie_word_embeddings": false,
           "rope_theta": 500000.0, "hidden_act": "silu"})",
       "meta-llama/Llama-3.2-3B"},
  };
  return kEntries;
}

}  // namespace

std::span<const CatalogEntry> Entries() { return All(); }

}  // namespace memfit::catalog
