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

// The task heads a GPT-style family has (transformers' *For* classes of the family), besides the
// bare model and the causal LM.
struct GptHeads {
  std::string_view family;
  std::string embed;                     // the input embedding a tied LM head shares
  std::string_view lm_head = "lm_head";  // the causal LM head's module (gpt_neox: embed_out)
  bool lm_bias = false;                  // the LM head has a bias (gptj)
  uint64_t features = 0;                 // the heads' input width; 0: hidden_size
  bool sequence = true;                  // *ForSequenceClassification
  bool token = true;                     // *ForTokenClassification
  bool qa = true;                        // *ForQuestionAnswering
  bool qa_num_labels = false;            // qa_outputs has num_labels outputs (gptj), else 2
};

// Emits the head a GPT-style family builds for `head` over its final features: the causal LM's
// LmHead (tied to heads.embed), the classifier heads the family has, nothing for the bare model.
// A head the family lacks (GPT2DoubleHeadsModel's everywhere: gpt2 builds its own) is an error
// naming the family and the heads it has.
void GptFamilyHead(ModelBuilder& b, const HfConfig& c, HeadKind head, const GptHeads& heads,
                   uint64_t num_labels);

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
