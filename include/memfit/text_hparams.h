#pragma once
// The text model's hyperparameters from any config.json: wherever the family nests them
// ("text_config", "llm_config", "language_config", "thinker_config", ...), under any of the usual
// aliases ("n_layer", "num_layers", "n_head", "n_embd", "d_model", "multi_query", "kv_channels",
// ...), with the per-layer pattern of attention kinds and non-attention mixers (sliding windows,
// chunked attention, MLA, DSA indexers, Mamba/Mamba2, gated delta-net, Kimi delta attention,
// short convolutions, linear attention) and of dense and MoE layers. docs/architectures.md,
// "Hyperparameters from any config", lists every key and the file it was read from.

#include <string>
#include <vector>

#include "memfit/hf_config.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit {

struct TextHyperparameters {
  Hyperparameters hp;  // hp.layers has one LayerInfo per decoder layer
  // Guesses made (a nesting found by the generic rule, defaults for absent fields): print them.
  std::vector<std::string> assumptions;
  // The part of the config the text model was read from ("config.json: text_config").
  std::string where;
};

// Reads the text (decoder) model of `config`. Fails with one line naming the field when a
// dimension is malformed or absurd, or when the config has no number of layers or hidden size at
// all. Fields an estimate needs but the config lacks (heads for the KV cache) are left 0: the
// estimate that needs them fails naming the field (RequireAttentionHeads).
Result<TextHyperparameters> ReadTextHyperparameters(const HfConfig& config);

// The training dropout probabilities `config` names, into the fields of `hp` that are still 0
// (the exact builders read none but GPT-2's, BERT's and T5's): hidden_dropout from
// "residual_dropout" (StarCoder2: after o_proj and after c_proj), "hidden_dropout", "resid_pdrop"
// or "hidden_dropout_prob"; attention_dropout from "attention_dropout" (the attention
// probabilities in eager attention: Llama, Qwen2, Mistral, StarCoder2, ... at transformers
// 4.48.3), "attn_pdrop" or "attention_probs_dropout_prob". The text section first, then the top
// level. (StarCoder2's "embedding_dropout" is not read apart: the embedding's mask follows
// hidden_dropout, as in every released StarCoder2 config, where the two are equal.)
void FillTrainingDropout(const HfConfig& config, Hyperparameters& hp);

// An error naming what an estimate needs and that `load` still answers, when `hp` has attention
// layers without heads (e.g. "inference needs \"num_key_value_heads\""). Ok otherwise.
Status RequireAttentionHeads(const Model& model, std::string_view estimate);

}  // namespace memfit
