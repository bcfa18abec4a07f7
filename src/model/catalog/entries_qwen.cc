// Catalog entries: Qwen2.5 and Qwen3.
// memfit's own data: hyperparameters as published by each model's authors (model cards, papers,
// config.json on the Hub); only the fields the builders read are written. Sources: docs/catalog.md.

#include "model/catalog/entries.h"

namespace memfit::catalog {

std::span<const CatalogEntry> EntriesQwen() {
  static const CatalogEntry kEntries[] = {
      {"Qwen/Qwen2.5-0.5B", "qwen2", "Qwen2.5 0.5B base (tied embeddings)",
       R"({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 151936, "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers":
         24, "num_attention_heads": 14, "num_key_value_heads": 2, "max_position_embeddings": 32768,
         "tie_word_embeddings": true, "rope_theta": 1000000.0, "hidden_act": "silu",
         "use_sliding_window": false})",
       ""},
      {"Qwen/Qwen2.5-1.5B", "qwen2", "Qwen2.5 1.5B base (tied embeddings)",
       R"({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 151936, "hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers":
         28, "num_attention_heads": 12, "num_key_value_heads": 2, "max_position_embeddings": 131072,
         "tie_word_embeddings": true, "rope_theta": 1000000.0, "hidden_act": "silu",
         "use_sliding_window": false})",
       "Qwen/Qwen2.5-0.5B"},
      {"Qwen/Qwen2.5-3B", "qwen2", "Qwen2.5 3B base (tied embeddings)",
       R"({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers":
         36, "num_attention_heads": 16, "num_key_value_heads": 2, "max_position_embeddings": 32768,
         "tie_word_embeddings": true, "rope_theta": 1000000.0, "hidden_act": "silu",
         "use_sliding_window": false})",
       "Qwen/Qwen2.5-1.5B"},
      {"Qwen/Qwen2.5-7B", "qwen2", "Qwen2.5 7B base",
       R"({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers":
         28, "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 131072,
         "tie_word_embeddings": false, "rope_theta": 1000000.0, "hidden_act": "silu",
         "use_sliding_window": false})",
       "Qwen/Qwen2.5-3B"},
      {"Qwen/Qwen2.5-14B", "qwen2", "Qwen2.5 14B base",
       R"({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 152064, "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers":
         48, "num_attention_heads": 40, "num_key_value_heads": 8, "max_position_embeddings": 131072,
         "tie_word_embeddings": false, "rope_theta": 1000000.0, "hidden_act": "silu",
         "use_sliding_window": false})",
       "Qwen/Qwen2.5-7B"},
      {"Qwen/Qwen2.5-32B", "qwen2", "Qwen2.5 32B base",
       R"({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 152064, "hidden_size": 5120, "intermediate_size": 27648, "num_hidden_layers":
         64, "num_attention_heads": 40, "num_key_value_heads": 8, "max_position_embeddings": 131072,
         "tie_word_embeddings": false, "rope_theta": 1000000.0, "hidden_act": "silu",
         "use_sliding_window": false})",
       "Qwen/Qwen2.5-14B"},
      {"Qwen/Qwen2.5-72B", "qwen2", "Qwen2.5 72B base",
       R"({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 152064, "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers":
         80, "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 131072,
         "tie_word_embeddings": false, "rope_theta": 1000000.0, "hidden_act": "silu",
         "use_sliding_window": false})",
       "Qwen/Qwen2.5-32B"},
      {"Qwen/Qwen3-0.6B", "qwen3", "Qwen3 0.6B (tied embeddings)",
       R"({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 151936, "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers":
         28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
         "max_position_embeddings": 40960, "tie_word_embeddings": true, "rope_theta": 1000000.0,
         "hidden_act": "silu"})",
       ""},
      {"Qwen/Qwen3-1.7B", "qwen3", "Qwen3 1.7B (tied embeddings)",
       R"({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers":
         28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
         "max_position_embeddings": 40960, "tie_word_embeddings": true, "rope_theta": 1000000.0,
         "hidden_act": "silu"})",
       "Qwen/Qwen3-0.6B"},
      {"Qwen/Qwen3-4B", "qwen3", "Qwen3 4B (tied embeddings)",
       R"({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 151936, "hidden_size": 2560, "intermediate_size": 9728, "num_hidden_layers":
         36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
         "max_position_embeddings": 40960, "tie_word_embeddings": true, "rope_theta": 1000000.0,
         "hidden_act": "silu"})",
       "Qwen/Qwen3-1.7B"},
      {"Qwen/Qwen3-8B", "qwen3", "Qwen3 8B",
       R"({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers":
         36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
         "max_position_embeddings": 40960, "tie_word_embeddings": false, "rope_theta": 1000000.0,
         "hidden_act": "silu"})",
       "Qwen/Qwen3-4B"},
      {"Qwen/Qwen3-14B", "qwen3", "Qwen3 14B",
       R"({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 151936, "hidden_size": 5120, "intermediate_size": 17408, "num_hidden_layers":
         40, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
         "max_position_embeddings": 40960, "tie_word_embeddings": false, "rope_theta": 1000000.0,
         "hidden_act": "silu"})",
       "Qwen/Qwen3-8B"},
      {"Qwen/Qwen3-32B", "qwen3", "Qwen3 32B",
       R"({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 151936, "hidden_size": 5120, "intermediate_size": 25600, "num_hidden_layers":
         64, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
         "max_position_embeddings": 40960, "tie_word_embeddings": false, "rope_theta": 1000000.0,
         "hidden_act": "silu"})",
       "Qwen/Qwen3-14B"},
      {"Qwen/Qwen3-30B-A3B", "qwen3_moe", "Qwen3 30B-A3B mixture of experts (128 experts, 8 per token)",
       R"({"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"], "torch_dtype":
         "bfloat16", "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
         "moe_intermediate_size": 768, "num_hidden_layers": 48, "num_attention_heads": 32,
         "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
         "decoder_sparse_step": 1, "mlp_only_layers": [], "norm_topk_prob": true,
         "max_position_embeddings": 40960, "tie_word_embeddings": false, "rope_theta": 1000000.0,
         "hidden_act": "silu"})",
       "Qwen/Qwen3-14B"},
  };
  return kEntries;
}

}  // namespace memfit::catalog
