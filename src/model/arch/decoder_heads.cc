#include "model/arch/decoder_heads.h"

#include <cstdio>
#include <string>

#include "formats/hf_config_json.h"

namespace memfit::arch {

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
