#pragma once
// Task heads shared by the GPT-style decoder families (gpt2, gpt_neox, gptj, gpt_bigcode, opt,
// bloom, falcon, mpt): which head a config asks for, and how many labels a classifier has.

#include <string>
#include <string_view>

#include "memfit/architecture.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"

namespace memfit::arch {

enum class HeadKind : uint8_t {
  kBase,                    // the bare AutoModel (GPT2Model, FalconModel, ...)
  kCausalLm,                // *ForCausalLM / *LMHeadModel
  kSequenceClassification,  // score: Linear(hidden, num_labels, bias=False)
  kTokenClassification,     // classifier: Linear(hidden, num_labels) with bias
  kQuestionAnswering,       // qa_outputs: Linear(hidden, 2) with bias
  kDoubleHeads,             // GPT2DoubleHeadsModel: lm_head + multiple_choice_head
};

// The head to build: options.head_class (an AutoModel* class name, as accelerate takes it from
// auto_map) when set, else architectures[0] ("GPT2LMHeadModel", "FalconForSequenceClassification");
// a config without "architectures" gets the causal LM head, recorded in `b`'s assumptions. Heads
// the family does not have are an error naming the class.
HeadKind ResolveHead(ModelBuilder& b, const HfConfig& config, const BuildOptions& options,
                     std::string_view family);

// NumLabels (id2label size, else num_labels, else 2): model/arch/encoder_common.h.

// Emits the classification/QA head on `hidden` features (sequence, token, QA; nothing for the
// others), marked in_head.
void ClassifierHead(ModelBuilder& b, HeadKind head, uint64_t hidden, uint64_t num_labels);

// The head of a GPT-style family without a double-heads model (bloom, mpt) over its final
// hidden features: the causal LM's lm_head (LmHead, tied to `embed`), ClassifierHead's, or an
// error naming `family` for GPT2DoubleHeadsModel's.
void GptStyleHead(ModelBuilder& b, const HfConfig& c, HeadKind head, std::string_view family,
                  const std::string& embed, uint64_t num_labels);

// GPT-2-style hyperparameters (gpt2, gpt_bigcode, gptj): n_embd, n_layer, n_head, n_positions
// (each also under its hidden_size-style name), vocab_size, tie_word_embeddings (default `tie`),
// activation_function (default `activation`), LayerNorm. Errors are recorded in `b`.
// `dropout`: the config class's default resid_pdrop / attn_pdrop (GPT-2, BigCode 0.1; GPT-J 0).
void ReadGptStyleHyperparameters(ModelBuilder& b, const HfConfig& c, bool tie,
                                 std::string_view activation, double dropout);

// Multi-head attention: as many KV heads as heads, head_dim = hidden_size / heads, which must
// divide (the error names the config's `hidden_key` and `heads_key`).
void MultiHeadDims(ModelBuilder& b, const HfConfig& c, std::string_view hidden_key,
                   std::string_view heads_key);

// MosaicML-style hyperparameters (mpt, dbrx): d_model, n_layers, n_heads (each also under its
// hidden_size-style name), vocab_size, max_seq_len (default 2048), tie_word_embeddings (default
// `tie`), LayerNorm. Errors are recorded in `b`.
void ReadMosaicHyperparameters(ModelBuilder& b, const HfConfig& c, bool tie);

// True when transformers' config string is older than major.minor ("4.27.4" < 4.28).
bool TransformersVersionBefore(const HfConfig& config, int major, int minor);

}  // namespace memfit::arch
