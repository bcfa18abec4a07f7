// Catalog entries: GPT-style decoders: GPT-2, GPT-J, GPT-NeoX (Pythia), OPT, BLOOM, Falcon, MPT.
// memfit's own data: hyperparameters as published by each model's authors (model cards, papers,
// config.json on the Hub); only the fields the builders read are written. Sources: docs/catalog.md.

#include "model/catalog/entries.h"

namespace memfit::catalog {

std::span<const CatalogEntry> EntriesGpt() {
  static const CatalogEntry kEntries[] = {
      {"openai-community/gpt2", "gpt2", "GPT-2 small (124M)",
       R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "torch_dtype": "float32",
         "vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024,
         "n_ctx": 1024, "n_inner": null, "activation_function": "gelu_new", "layer_norm_epsilon":
         1e-05})",
       ""},
      {"openai-community/gpt2-medium", "gpt2", "GPT-2 medium (355M)",
       R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "torch_dtype": "float32",
         "vocab_size": 50257, "n_embd": 1024, "n_layer": 24, "n_head": 16, "n_positions": 1024,
         "n_ctx": 1024, "n_inner": null, "activation_function": "gelu_new", "layer_norm_epsilon":
         1e-05})",
       "openai-community/gpt2"},
      {"openai-community/gpt2-large", "gpt2", "GPT-2 large (774M)",
       R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "torch_dtype": "float32",
         "vocab_size": 50257, "n_embd": 1280, "n_layer": 36, "n_head": 20, "n_positions": 1024,
         "n_ctx": 1024, "n_inner": null, "activation_function": "gelu_new", "layer_norm_epsilon":
         1e-05})",
       "openai-community/gpt2-medium"},
      {"openai-community/gpt2-xl", "gpt2", "GPT-2 XL (1.5B)",
       R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "torch_dtype": "float32",
         "vocab_size": 50257, "n_embd": 1600, "n_layer": 48, "n_head": 25, "n_positions": 1024,
         "n_ctx": 1024, "n_inner": null, "activation_function": "gelu_new", "layer_norm_epsilon":
         1e-05})",
       "openai-community/gpt2-large"},
      {"EleutherAI/gpt-j-6b", "gptj", "GPT-J 6B (float32 weights on the main branch)",
       R"({"model_type": "gptj", "architectures": ["GPTJForCausalLM"], "torch_dtype": "float32",
         "vocab_size": 50400, "n_embd": 4096, "n_layer": 28, "n_head": 16, "n_positions": 2048,
         "rotary_dim": 64, "n_inner": null, "activation_function": "gelu_new", "tie_word_embeddings":
         false})",
       ""},
      {"EleutherAI/pythia-1.4b", "gpt_neox", "Pythia 1.4B (GPT-NeoX, untied output embedding)",
       R"({"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"], "torch_dtype":
         "float16", "vocab_size": 50304, "hidden_size": 2048, "num_hidden_layers": 24,
         "num_attention_heads": 16, "intermediate_size": 8192, "max_position_embeddings": 2048,
         "rotary_pct": 0.25, "rotary_emb_base": 10000, "use_parallel_residual": true, "hidden_act":
         "gelu", "tie_word_embeddings": false})",
       ""},
      {"facebook/opt-1.3b", "opt", "OPT 1.3B (float16)",
       R"({"model_type": "opt", "architectures": ["OPTForCausalLM"], "torch_dtype": "float16",
         "vocab_size": 50272, "hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads":
         32, "ffn_dim": 8192, "max_position_embeddings": 2048, "word_embed_proj_dim": 2048,
         "do_layer_norm_before": true, "activation_function": "relu"})",
       ""},
      {"bigscience/bloom-560m", "bloom", "BLOOM 560M (ALiBi, 250k vocabulary)",
       R"({"model_type": "bloom", "architectures": ["BloomForCausalLM"], "torch_dtype": "float16",
         "vocab_size": 250880, "n_embed": 1024, "n_layer": 24, "num_attention_heads": 16})",
       ""},
      {"tiiuae/falcon-7b", "falcon", "Falcon 7B (multi-query attention, parallel attention/MLP)",
       R"({"model_type": "falcon", "architectures": ["FalconForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 65024, "hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads":
         71, "multi_query": true, "new_decoder_architecture": false, "parallel_attn": true, "bias":
         false, "alibi": false})",
       ""},
      {"mosaicml/mpt-7b", "mpt", "MPT 7B (ALiBi, no biases)",
       R"({"model_type": "mpt", "architectures": ["MptForCausalLM"], "torch_dtype": "bfloat16",
         "vocab_size": 50432, "d_model": 4096, "n_layers": 32, "n_heads": 32, "expansion_ratio": 4,
         "max_seq_len": 2048})",
       ""},
  };
  return kEntries;
}

}  // namespace memfit::catalog
