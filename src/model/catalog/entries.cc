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
      // Encoders (published hyperparameters of each model's config).
      {"google-bert/bert-base-cased", "bert", "BERT base, cased (110M)",
       R"({"model_type": "bert", "architectures": ["BertForMaskedLM"], "torch_dtype": "float32",
           "vocab_size": 28996, "hidden_size": 768, "num_hidden_layers": 12,
           "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 512,
           "type_vocab_size": 2, "hidden_act": "gelu"})",
       ""},
      {"google-bert/bert-base-uncased", "bert", "BERT base, uncased (110M)",
       R"({"model_type": "bert", "architectures": ["BertForMaskedLM"], "torch_dtype": "float32",
           "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
           "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 512,
           "type_vocab_size": 2, "hidden_act": "gelu"})",
       ""},
      {"google-bert/bert-large-uncased", "bert", "BERT large, uncased (335M)",
       R"({"model_type": "bert", "architectures": ["BertForMaskedLM"], "torch_dtype": "float32",
           "vocab_size": 30522, "hidden_size": 1024, "num_hidden_layers": 24,
           "num_attention_heads": 16, "intermediate_size": 4096, "max_position_embeddings": 512,
           "type_vocab_size": 2, "hidden_act": "gelu"})",
       "google-bert/bert-base-uncased"},
      {"distilbert/distilbert-base-uncased", "distilbert", "DistilBERT base, uncased (66M)",
       R"({"model_type": "distilbert", "architectures": ["DistilBertForMaskedLM"],
           "torch_dtype": "float32", "vocab_size": 30522, "dim": 768, "n_layers": 6, "n_heads": 12,
           "hidden_dim": 3072, "max_position_embeddings": 512, "activation": "gelu"})",
       ""},
      {"FacebookAI/roberta-base", "roberta", "RoBERTa base (125M)",
       R"({"model_type": "roberta", "architectures": ["RobertaForMaskedLM"], "torch_dtype": "float32",
           "vocab_size": 50265, "hidden_size": 768, "num_hidden_layers": 12,
           "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 514,
           "type_vocab_size": 1, "hidden_act": "gelu"})",
       ""},
      {"FacebookAI/roberta-large", "roberta", "RoBERTa large (355M)",
       R"({"model_type": "roberta", "architectures": ["RobertaForMaskedLM"], "torch_dtype": "float32",
           "vocab_size": 50265, "hidden_size": 1024, "num_hidden_layers": 24,
           "num_attention_heads": 16, "intermediate_size": 4096, "max_position_embeddings": 514,
           "type_vocab_size": 1, "hidden_act": "gelu"})",
       "FacebookAI/roberta-base"},
      {"google-t5/t5-small", "t5", "T5 small (60M)",
       R"({"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "vocab_size": 32128,
           "d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6, "num_heads": 8,
           "relative_attention_num_buckets": 32, "feed_forward_proj": "relu",
           "torch_dtype": "float32"})",
       ""},
      {"google-t5/t5-base", "t5", "T5 base (220M)",
       R"({"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "vocab_size": 32128,
           "d_model": 768, "d_kv": 64, "d_ff": 3072, "num_layers": 12, "num_heads": 12,
           "relative_attention_num_buckets": 32, "feed_forward_proj": "relu",
           "torch_dtype": "float32"})",
       "google-t5/t5-small"},
      {"google-t5/t5-large", "t5", "T5 large (770M)",
       R"({"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "vocab_size": 32128,
           "d_model": 1024, "d_kv": 64, "d_ff": 4096, "num_layers": 24, "num_heads": 16,
           "relative_attention_num_buckets": 32, "feed_forward_proj": "relu",
           "torch_dtype": "float32"})",
       "google-t5/t5-base"},
  };
  return kEntries;
}

}  // namespace

std::span<const CatalogEntry> Entries() { return All(); }

}  // namespace memfit::catalog
