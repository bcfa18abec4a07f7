// BLOOM (bigscience/bloom-560m .. bloom 176B, bloomz): transformers' modeling_bloom.py.
// transformer.{word_embeddings, word_embeddings_layernorm, h.N.{input_layernorm,
// self_attention.{query_key_value, dense}, post_attention_layernorm, mlp.{dense_h_to_4h,
// dense_4h_to_h}}, ln_f}, lm_head tied to word_embeddings. ALiBi positions, computed in forward:
// no buffers at all. The 176B checkpoint was saved from BloomModel, so its tensor names lack the
// "transformer." prefix; sizes are the same.

#include "model/arch/builder_kit.h"
#include "model/arch/decoder_heads.h"
#include "model/arch/families.h"

namespace memfit::arch {

Result<Model> BuildBloom(const HfConfig& c, const BuildOptions& options) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  // BloomConfig: "n_embed" (old configs) overrides "hidden_size"; "n_layer"/"n_head" are
  // attribute-mapped to num_hidden_layers/num_attention_heads.
  hp.hidden_size = Get(b, c.UintAny({"n_embed", "hidden_size"}));
  hp.num_layers = Get(b, c.UintAny({"n_layer", "num_hidden_layers"}));
  hp.num_attention_heads = Get(b, c.UintAny({"num_attention_heads", "n_head"}));
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", true));
  hp.activation = "gelu";
  hp.norm = "layernorm";
  const HeadKind head = ResolveHead(b, c, options, "bloom");
  const uint64_t labels = NumLabels(b, c);
  if (b.failed()) return b.Finish();
  hp.intermediate_size = 4 * hp.hidden_size;  // BloomMLP: fixed 4 * hidden
  MultiHeadDims(b, c, "n_embed", "n_head");
  if (b.failed()) return b.Finish();

  const uint64_t h = hp.hidden_size;
  b.Embedding("transformer.word_embeddings", hp.vocab_size, h);
  b.LayerNorm("transformer.word_embeddings_layernorm", h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("transformer.h", i);
    b.LayerNorm(l + ".input_layernorm", h);
    b.Linear(l + ".self_attention.query_key_value", h, 3 * h, true);
    b.Linear(l + ".self_attention.dense", h, h, true);
    b.LayerNorm(l + ".post_attention_layernorm", h);
    b.Linear(l + ".mlp.dense_h_to_4h", h, 4 * h, true);
    b.Linear(l + ".mlp.dense_4h_to_h", 4 * h, h, true);
    hp.layers.push_back(
        DenseLayer(AttentionKind::kFull, hp.num_attention_heads, hp.head_dim, 4 * h));
  }
  b.LayerNorm("transformer.ln_f", h);
  GptFamilyHead(b, c, head, {.family = "bloom", .embed = "transformer.word_embeddings"}, labels);
  m.no_split_patterns = {"transformer.h.*"};  // _no_split_modules = ["BloomBlock"]
  m.base_model_prefix = "transformer.";
  return b.Finish();
}

}  // namespace memfit::arch
