// Catalog entries: Gemma, Gemma 2 and Phi-3.
// memfit's own data: hyperparameters as published by each model's authors (model cards, papers,
// config.json on the Hub); only the fields the builders read are written. Sources: docs/catalog.md.

#include "model/catalog/entries.h"

namespace memfit::catalog {

std::span<const CatalogEntry> EntriesGemmaPhi() {
  static const CatalogEntry kEntries[] = {
      {"google/gemma-2b", "gemma", "Gemma 2B base (multi-query attention, tied embeddings)",
       R"({"model_type": "gemma", "architectures": ["GemmaForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 256000, "hidden_size": 2048, "intermediate_size": 16384, "num_hidden_layers":
         18, "num_attention_heads": 8, "num_key_value_heads": 1, "head_dim": 256,
         "max_position_embeddings": 8192, "hidden_act": "gelu", "hidden_activation":
         "gelu_pytorch_tanh", "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings":
         true})",
       ""},
      {"google/gemma-7b", "gemma", "Gemma 7B base (tied embeddings)",
       R"({"model_type": "gemma", "architectures": ["GemmaForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 256000, "hidden_size": 3072, "intermediate_size": 24576, "num_hidden_layers":
         28, "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256,
         "max_position_embeddings": 8192, "hidden_act": "gelu", "hidden_activation":
         "gelu_pytorch_tanh", "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings":
         true})",
       "google/gemma-2b"},
      {"google/gemma-2-2b", "gemma2", "Gemma 2 2B base (alternating sliding-window layers)",
       R"({"model_type": "gemma2", "architectures": ["Gemma2ForCausalLM"], "torch_dtype": "float32",
         "vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers":
         26, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
         "query_pre_attn_scalar": 256, "max_position_embeddings": 8192, "sliding_window": 4096,
         "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0, "hidden_activation":
         "gelu_pytorch_tanh", "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings":
         true})",
       ""},
      {"google/gemma-2-9b", "gemma2", "Gemma 2 9B base (alternating sliding-window layers)",
       R"({"model_type": "gemma2", "architectures": ["Gemma2ForCausalLM"], "torch_dtype": "float32",
         "vocab_size": 256000, "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers":
         42, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256,
         "query_pre_attn_scalar": 256, "max_position_embeddings": 8192, "sliding_window": 4096,
         "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0, "hidden_activation":
         "gelu_pytorch_tanh", "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings":
         true})",
       "google/gemma-2-2b"},
      {"google/gemma-2-27b", "gemma2", "Gemma 2 27B base (alternating sliding-window layers)",
       R"({"model_type": "gemma2", "architectures": ["Gemma2ForCausalLM"], "torch_dtype": "float32",
         "vocab_size": 256000, "hidden_size": 4608, "intermediate_size": 36864, "num_hidden_layers":
         46, "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
         "query_pre_attn_scalar": 144, "max_position_embeddings": 8192, "sliding_window": 4096,
         "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0, "hidden_activation":
         "gelu_pytorch_tanh", "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings":
         true})",
       "google/gemma-2-9b"},
      {"microsoft/Phi-3-mini-4k-instruct", "phi3", "Phi-3 mini 4k instruct (3.8B)",
       R"({"model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers":
         32, "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 4096,
         "original_max_position_embeddings": 4096, "sliding_window": 2047, "tie_word_embeddings":
         false, "rope_theta": 10000.0, "hidden_act": "silu", "pad_token_id": 32000})",
       ""},
      {"microsoft/Phi-3-medium-4k-instruct", "phi3", "Phi-3 medium 4k instruct (14B, grouped-query attention)",
       R"({"model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 32064, "hidden_size": 5120, "intermediate_size": 17920, "num_hidden_layers":
         40, "num_attention_heads": 40, "num_key_value_heads": 10, "max_position_embeddings": 4096,
         "original_max_position_embeddings": 4096, "sliding_window": 2047, "tie_word_embeddings":
         false, "rope_theta": 10000.0, "hidden_act": "silu", "pad_token_id": 32000})",
       "microsoft/Phi-3-mini-4k-instruct"},
  };
  return kEntries;
}

}  // namespace memfit::catalog
