// Catalog entries: BERT, DistilBERT, RoBERTa and T5 (builders: bert.cc, distilbert.cc, roberta.cc, t5.cc).
// memfit's own data: hyperparameters as published by each model's authors (model cards, papers,
// config.json on the Hub); only the fields the builders read are written. Sources: docs/catalog.md.

#include "model/catalog/entries.h"

namespace memfit::catalog {

std::span<const CatalogEntry> EntriesEncoders() {
  static const CatalogEntry kEntries[] = {
      {"google-bert/bert-base-uncased", "bert", "BERT base, uncased (110M, English, masked LM)",
       R"({"model_type": "bert", "architectures": ["BertForMaskedLM"], "torch_dtype": "float32",
         "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
         "intermediate_size": 3072, "max_position_embeddings": 512, "type_vocab_size": 2,
         "hidden_act": "gelu", "layer_norm_eps": 1e-12, "position_embedding_type": "absolute",
         "pad_token_id": 0})",
       "distilbert/distilbert-base-uncased"},
      {"google-bert/bert-base-cased", "bert", "BERT base, cased (108M base model, English, masked LM)",
       R"({"model_type": "bert", "architectures": ["BertForMaskedLM"], "torch_dtype": "float32",
         "vocab_size": 28996, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
         "intermediate_size": 3072, "max_position_embeddings": 512, "type_vocab_size": 2,
         "hidden_act": "gelu", "layer_norm_eps": 1e-12, "position_embedding_type": "absolute",
         "pad_token_id": 0})",
       "distilbert/distilbert-base-cased"},
      {"google-bert/bert-large-uncased", "bert", "BERT large, uncased (336M, masked LM)",
       R"({"model_type": "bert", "architectures": ["BertForMaskedLM"], "torch_dtype": "float32",
         "vocab_size": 30522, "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads":
         16, "intermediate_size": 4096, "max_position_embeddings": 512, "type_vocab_size": 2,
         "hidden_act": "gelu", "layer_norm_eps": 1e-12, "position_embedding_type": "absolute",
         "pad_token_id": 0})",
       "google-bert/bert-base-uncased"},
      {"google-bert/bert-large-cased", "bert", "BERT large, cased (333M, masked LM)",
       R"({"model_type": "bert", "architectures": ["BertForMaskedLM"], "torch_dtype": "float32",
         "vocab_size": 28996, "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads":
         16, "intermediate_size": 4096, "max_position_embeddings": 512, "type_vocab_size": 2,
         "hidden_act": "gelu", "layer_norm_eps": 1e-12, "position_embedding_type": "absolute",
         "pad_token_id": 0})",
       "google-bert/bert-base-cased"},
      {"distilbert/distilbert-base-uncased", "distilbert", "DistilBERT base, uncased (6 layers, 66M)",
       R"({"model_type": "distilbert", "architectures": ["DistilBertForMaskedLM"], "torch_dtype":
         "float32", "vocab_size": 30522, "dim": 768, "n_layers": 6, "n_heads": 12, "hidden_dim":
         3072, "max_position_embeddings": 512, "sinusoidal_pos_embds": false, "activation": "gelu",
         "tie_weights_": true, "pad_token_id": 0})",
       ""},
      {"distilbert/distilbert-base-cased", "distilbert", "DistilBERT base, cased (6 layers, 65M)",
       R"({"model_type": "distilbert", "architectures": ["DistilBertForMaskedLM"], "torch_dtype":
         "float32", "vocab_size": 28996, "dim": 768, "n_layers": 6, "n_heads": 12, "hidden_dim":
         3072, "max_position_embeddings": 512, "sinusoidal_pos_embds": false, "activation": "gelu",
         "tie_weights_": true, "pad_token_id": 0})",
       ""},
      {"FacebookAI/roberta-base", "roberta", "RoBERTa base (125M, masked LM)",
       R"({"model_type": "roberta", "architectures": ["RobertaForMaskedLM"], "torch_dtype": "float32",
         "vocab_size": 50265, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
         "intermediate_size": 3072, "max_position_embeddings": 514, "type_vocab_size": 1,
         "hidden_act": "gelu", "layer_norm_eps": 1e-05, "pad_token_id": 1, "bos_token_id": 0,
         "eos_token_id": 2})",
       ""},
      {"FacebookAI/roberta-large", "roberta", "RoBERTa large (355M, masked LM)",
       R"({"model_type": "roberta", "architectures": ["RobertaForMaskedLM"], "torch_dtype": "float32",
         "vocab_size": 50265, "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads":
         16, "intermediate_size": 4096, "max_position_embeddings": 514, "type_vocab_size": 1,
         "hidden_act": "gelu", "layer_norm_eps": 1e-05, "pad_token_id": 1, "bos_token_id": 0,
         "eos_token_id": 2})",
       "FacebookAI/roberta-base"},
      {"google-t5/t5-small", "t5", "T5 small encoder-decoder (60M, tied embeddings)",
       R"({"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "torch_dtype":
         "float32", "vocab_size": 32128, "d_model": 512, "d_ff": 2048, "d_kv": 64, "num_heads": 8,
         "num_layers": 6, "num_decoder_layers": 6, "relative_attention_num_buckets": 32,
         "relative_attention_max_distance": 128, "feed_forward_proj": "relu", "is_encoder_decoder":
         true, "tie_word_embeddings": true, "n_positions": 512, "layer_norm_epsilon": 1e-06})",
       ""},
      {"google-t5/t5-base", "t5", "T5 base encoder-decoder (223M, tied embeddings)",
       R"({"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "torch_dtype":
         "float32", "vocab_size": 32128, "d_model": 768, "d_ff": 3072, "d_kv": 64, "num_heads": 12,
         "num_layers": 12, "num_decoder_layers": 12, "relative_attention_num_buckets": 32,
         "relative_attention_max_distance": 128, "feed_forward_proj": "relu", "is_encoder_decoder":
         true, "tie_word_embeddings": true, "n_positions": 512, "layer_norm_epsilon": 1e-06})",
       "google-t5/t5-small"},
      {"google-t5/t5-large", "t5", "T5 large encoder-decoder (738M, tied embeddings)",
       R"({"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "torch_dtype":
         "float32", "vocab_size": 32128, "d_model": 1024, "d_ff": 4096, "d_kv": 64, "num_heads": 16,
         "num_layers": 24, "num_decoder_layers": 24, "relative_attention_num_buckets": 32,
         "relative_attention_max_distance": 128, "feed_forward_proj": "relu", "is_encoder_decoder":
         true, "tie_word_embeddings": true, "n_positions": 512, "layer_norm_epsilon": 1e-06})",
       "google-t5/t5-base"},
  };
  return kEntries;
}

}  // namespace memfit::catalog
