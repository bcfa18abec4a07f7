#include "model/arch/decoder_heads.h"
#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"

#include <cstdio>
#include <string>
#include <vector>

namespace memfit::arch {

HeadKind ResolveHead(ModelBuilder& b, const HfConfig& c, const BuildOptions& o,
                     std::string_view family) {
  std::string cls = o.head_class;
  bool from_options = !cls.empty();
  if (!from_options) {
    auto archs = c.architectures();
    if (archs.empty()) {
      b.model().assumptions.push_back(fmt::format(
          "config.json names no \"architectures\": the {} causal language-model head assumed",
          family));
      return HeadKind::kCausalLm;
    }
    cls = archs.front();
  }
  if (cls.ends_with("ForCausalLM") || cls.ends_with("LMHeadModel")) return HeadKind::kCausalLm;
  if (cls.ends_with("ForSequenceClassification")) return HeadKind::kSequenceClassification;
  if (cls.ends_with("ForTokenClassification")) return HeadKind::kTokenClassification;
  if (cls.ends_with("ForQuestionAnswering")) return HeadKind::kQuestionAnswering;
  if (cls.ends_with("DoubleHeadsModel")) return HeadKind::kDoubleHeads;
  if (cls == "AutoModel" || (cls.ends_with("Model") && cls.find("For") == std::string::npos)) {
    return HeadKind::kBase;
  }
  b.Fail(MakeError("{}: {} \"{}\" is a head the {} builder does not know (it builds the base model, "
                   "causal LM, sequence/token classification and question answering heads)",
                   c.where(), from_options ? "head class" : "architectures[0]", cls, family));
  return HeadKind::kBase;
}

namespace {

bool HasHead(const GptHeads& heads, HeadKind head) {
  switch (head) {
    case HeadKind::kBase:
    case HeadKind::kCausalLm:
      return true;
    case HeadKind::kSequenceClassification:
      return heads.sequence;
    case HeadKind::kTokenClassification:
      return heads.token;
    case HeadKind::kQuestionAnswering:
      return heads.qa;
    case HeadKind::kDoubleHeads:
      return false;
  }
  return false;
}

// "has no double-heads model" when that is all it lacks, else the heads it has.
std::string MissingHeadMessage(const HfConfig& c, const GptHeads& heads) {
  if (heads.sequence && heads.token && heads.qa) {
    return fmt::format("{}: {} has no double-heads model", c.where(), heads.family);
  }
  std::vector<std::string_view> has = {"causal LM"};
  if (heads.sequence) has.push_back("sequence classification");
  if (heads.token) has.push_back("token classification");
  if (heads.qa) has.push_back("question answering");
  std::string list(has.front());
  for (size_t i = 1; i < has.size(); ++i) {
    list += i + 1 == has.size() ? " and " : ", ";
    list += has[i];
  }
  return fmt::format("{}: {} has {} heads only", c.where(), heads.family, list);
}

}  // namespace

void GptFamilyHead(ModelBuilder& b, const HfConfig& c, HeadKind head, const GptHeads& heads,
                   uint64_t num_labels) {
  const uint64_t features = heads.features != 0 ? heads.features : b.model().hp.hidden_size;
  if (!HasHead(heads, head)) {
    b.Fail(MakeError("{}", MissingHeadMessage(c, heads)));
    return;
  }
  if (head == HeadKind::kCausalLm) {
    LmHead(b, std::string(heads.embed), heads.lm_bias, heads.lm_head, features);
    return;
  }
  b.SetHead(true);
  if (head == HeadKind::kSequenceClassification) {
    b.Linear("score", features, num_labels, false);
  } else if (head == HeadKind::kTokenClassification) {
    b.Linear("classifier", features, num_labels, true);
  } else if (head == HeadKind::kQuestionAnswering) {
    b.Linear("qa_outputs", features, heads.qa_num_labels ? num_labels : 2, true);
  }
  b.SetHead(false);
}

bool TransformersVersionBefore(const HfConfig& c, int major, int minor) {
  const auto it = c.raw().find("transformers_version");
  if (it == c.raw().end() || !it->is_string()) return false;
  int got_major = 0, got_minor = 0;
  if (std::sscanf(it->get_ref<const std::string&>().c_str(), "%d.%d", &got_major, &got_minor) != 2) {
    return false;
  }
  return got_major < major || (got_major == major && got_minor < minor);
}

void ReadMosaicHyperparameters(ModelBuilder& b, const HfConfig& c, bool tie) {
  auto& hp = b.model().hp;
  hp.hidden_size = Get(b, c.UintAny({"d_model", "hidden_size"}));
  hp.num_layers = Get(b, c.UintAny({"n_layers", "num_hidden_layers"}));
  hp.num_attention_heads = Get(b, c.UintAny({"n_heads", "num_attention_heads"}));
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.max_position_embeddings = Get(b, c.UintOr("max_seq_len", 2048));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", tie));
  hp.norm = "layernorm";
}

}  // namespace memfit::arch
