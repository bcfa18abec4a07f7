#pragma once
// Task heads shared by the GPT-style decoder families (gpt2, gpt_neox, gptj, gpt_bigcode, opt,
// bloom, falcon, mpt; classic_decoder.h): which head a config asks for, and its tensors.

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

// The task heads a GPT-style family has (transformers' *For* classes of the family), besides the
// bare model and the causal LM.
struct GptHeads {
  std::string_view family = "";
  std::string_view embed = "";           // the input embedding a tied LM head shares
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

// MosaicML-style hyperparameters (mpt, dbrx): d_model, n_layers, n_heads (each also under its
// hidden_size-style name), vocab_size, max_seq_len (default 2048), tie_word_embeddings (default
// `tie`), LayerNorm. Errors are recorded in `b`.
void ReadMosaicHyperparameters(ModelBuilder& b, const HfConfig& c, bool tie);

// True when transformers' config string is older than major.minor ("4.27.4" < 4.28).
bool TransformersVersionBefore(const HfConfig& config, int major, int minor);

}  // namespace memfit::arch
