// Catalog entries: Llama 2, Llama 3, Llama 3.1 and Llama 3.2.
// memfit's own data: hyperparameters as published by each model's authors (model cards, papers,
// config.json on the Hub); only the fields the builders read are written. Sources: docs/catalog.md.

#include "model/catalog/entries.h"

namespace memfit::catalog {

std::span<const CatalogEntry> EntriesLlama() {
  static const CatalogEntry kEntries[] = {
      {"meta-llama/Llama-3.2-1B", "llama", "Llama 3.2 1B base (tied embeddings)",
       R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers":
         16, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
         "max_position_embeddings": 131072, "tie_word_embeddings": true, "rope_theta": 500000.0,
         "hidden_act": "silu", "rms_norm_eps": 1e-05, "rope_scaling": {"rope_type": "llama3",
         "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
         "original_max_position_embeddings": 8192}})",
       ""},
      {"meta-llama/Llama-3.1-8B", "llama", "Llama 3.1 8B base",
       R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers":
         32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
         "tie_word_embeddings": false, "rope_theta": 500000.0, "hidden_act": "silu", "rms_norm_eps":
         1e-05, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})",
       "meta-llama/Llama-3.2-3B"},
      {"meta-llama/Llama-2-7b-hf", "llama", "Llama 2 7B base",
       R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "float16",
         "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers":
         32, "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 4096,
         "tie_word_embeddings": false, "rope_theta": 10000.0, "hidden_act": "silu", "rms_norm_eps":
         1e-05})",
       ""},
      {"meta-llama/Llama-2-13b-hf", "llama", "Llama 2 13B base",
       R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "float16",
         "vocab_size": 32000, "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers":
         40, "num_attention_heads": 40, "num_key_value_heads": 40, "max_position_embeddings": 4096,
         "tie_word_embeddings": false, "rope_theta": 10000.0, "hidden_act": "silu", "rms_norm_eps":
         1e-05})",
       "meta-llama/Llama-2-7b-hf"},
      {"meta-llama/Llama-2-70b-hf", "llama", "Llama 2 70B base (grouped-query attention)",
       R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "float16",
         "vocab_size": 32000, "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers":
         80, "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 4096,
         "tie_word_embeddings": false, "rope_theta": 10000.0, "hidden_act": "silu", "rms_norm_eps":
         1e-05})",
       "meta-llama/Llama-2-13b-hf"},
      {"meta-llama/Meta-Llama-3-8B", "llama", "Llama 3 8B base",
       R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers":
         32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 8192,
         "tie_word_embeddings": false, "rope_theta": 500000.0, "hidden_act": "silu", "rms_norm_eps":
         1e-05})",
       "meta-llama/Llama-3.2-3B"},
      {"meta-llama/Meta-Llama-3-70B", "llama", "Llama 3 70B base",
       R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 128256, "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers":
         80, "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 8192,
         "tie_word_embeddings": false, "rope_theta": 500000.0, "hidden_act": "silu", "rms_norm_eps":
         1e-05})",
       "meta-llama/Meta-Llama-3-8B"},
      {"meta-llama/Llama-3.1-70B", "llama", "Llama 3.1 70B base (128k context)",
       R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 128256, "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers":
         80, "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 131072,
         "tie_word_embeddings": false, "rope_theta": 500000.0, "hidden_act": "silu", "rms_norm_eps":
         1e-05, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})",
       "meta-llama/Llama-3.1-8B"},
      {"meta-llama/Llama-3.1-405B", "llama", "Llama 3.1 405B base (128k context)",
       R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 128256, "hidden_size": 16384, "intermediate_size": 53248, "num_hidden_layers":
         126, "num_attention_heads": 128, "num_key_value_heads": 8, "max_position_embeddings":
         131072, "tie_word_embeddings": false, "rope_theta": 500000.0, "hidden_act": "silu",
         "rms_norm_eps": 1e-05, "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
         "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})",
       "meta-llama/Llama-3.1-70B"},
      {"meta-llama/Llama-3.2-3B", "llama", "Llama 3.2 3B base (tied embeddings)",
       R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 128256, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers":
         28, "num_attention_heads": 24, "num_key_value_heads": 8, "head_dim": 128,
         "max_position_embeddings": 131072, "tie_word_embeddings": true, "rope_theta": 500000.0,
         "hidden_act": "silu", "rms_norm_eps": 1e-05, "rope_scaling": {"rope_type": "llama3",
         "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
         "original_max_position_embeddings": 8192}})",
       "meta-llama/Llama-3.2-1B"},
  };
  return kEntries;
}

}  // namespace memfit::catalog
