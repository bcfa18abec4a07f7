// GPT-NeoX (Pythia, GPT-NeoX-20B, OpenAssistant fine-tunes): transformers' modeling_gpt_neox.py.
// gpt_neox.{embed_in, layers.N.{input_layernorm, post_attention_layernorm,
// attention.{query_key_value, dense}, mlp.{dense_h_to_4h, dense_4h_to_h}}, final_layer_norm},
// embed_out (untied by default). Rotary over the first rotary_pct of each head.
// Buffers (non-persistent), by transformers release:
// - 4.42: per attention module the causal mask `bias` (bool [1, 1, max_pos, max_pos]),
//   `masked_bias` (float32 scalar) and rotary_emb.{inv_freq [rotary_ndims / 2], cos_cached,
//   sin_cached [max_pos, rotary_ndims]} (float32);
// - 4.45-4.48: per attention module `bias`, `masked_bias` and rotary_emb.inv_freq, plus the
//   model-level gpt_neox.rotary_emb.inv_freq (read at v4.45.0, v4.47.0 and v4.48.3; measured:
//   validation/results/cpu-torch1.13-tf4.48-slopes.csv, s-nx-*);
// - 4.49 and later: the model-level gpt_neox.rotary_emb.inv_freq only (GPTNeoXAttention lost
//   `_init_bias`; the checkpoints' attention.bias keys are ignored on load).
// Checkpoints saved by transformers < 4.31 also hold bias, masked_bias and inv_freq per layer (they
// were persistent then); current transformers ignores them on load, so they are not resident and
// memfit reports them in a note rather than as tensors (see docs/architectures.md).

#include "model/arch/builder_kit.h"
#include "model/arch/decoder_heads.h"
#include "model/arch/families.h"

namespace memfit::arch {

Result<Model> BuildGptNeox(const HfConfig& c, const BuildOptions& options) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.Uint("num_hidden_layers"));
  hp.num_attention_heads = Get(b, c.Uint("num_attention_heads"));
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.intermediate_size = Get(b, c.Uint("intermediate_size"));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 2048));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", false));
  hp.activation = Get(b, c.StringOr("hidden_act", "gelu"));
  hp.norm = "layernorm";
  const double rotary_pct = Get(b, c.NumberOr("rotary_pct", Get(b, c.NumberOr("partial_rotary_factor", 0.25))));
  const bool attention_bias = Get(b, c.BoolOr("attention_bias", true));
  const HeadKind head = ResolveHead(b, c, options, "gpt_neox");
  const uint64_t labels = NumLabels(b, c);
  if (b.failed()) return b.Finish();
  MultiHeadDims(b, c, "hidden_size", "num_attention_heads");
  if (!(rotary_pct >= 0.0 && rotary_pct <= 1.0)) {
    b.Fail(MakeError("{}: \"rotary_pct\" = {} is not between 0 and 1", c.where(), rotary_pct));
  }
  if (b.failed()) return b.Finish();
  // transformers: rotary_ndims = int(head_size * rotary_pct).
  const uint64_t rotary = static_cast<uint64_t>(static_cast<double>(hp.head_dim) * rotary_pct);

  const uint64_t h = hp.hidden_size, pos = hp.max_position_embeddings;
  const bool before_4_49 = options.transformers < LibraryVersion{4, 49};
  const bool per_layer_buffers =
      options.buffers == BufferConvention::kTransformers442 || before_4_49;
  if (TransformersVersionBefore(c, 4, 31) && !per_layer_buffers) {
    m.notes.push_back(fmt::format(
        "checkpoint saved by transformers < 4.31: each of the {} layers may also store the causal "
        "mask attention.bias (bool [1, 1, {}, {}]), attention.masked_bias and "
        "attention.rotary_emb.inv_freq ([{}] float32); transformers 4.49 and later neither create "
        "nor load them, so they are not counted as resident",
        hp.num_layers, hp.max_position_embeddings, hp.max_position_embeddings, rotary / 2));
  }
  b.Embedding("gpt_neox.embed_in", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("gpt_neox.layers", i);
    b.LayerNorm(l + ".input_layernorm", h);
    b.LayerNorm(l + ".post_attention_layernorm", h);
    if (per_layer_buffers) {
      b.Buffer(l + ".attention.bias", {1, 1, pos, pos}, Dtype::kBool, false);
      b.Buffer(l + ".attention.masked_bias", {}, Dtype::kF32, false);
      b.Buffer(l + ".attention.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
    }
    if (options.buffers == BufferConvention::kTransformers442) {
      b.Buffer(l + ".attention.rotary_emb.cos_cached", {pos, rotary}, Dtype::kF32, false);
      b.Buffer(l + ".attention.rotary_emb.sin_cached", {pos, rotary}, Dtype::kF32, false);
    }
    b.Linear(l + ".attention.query_key_value", h, 3 * h, attention_bias);
    b.Linear(l + ".attention.dense", h, h, attention_bias);
    b.Linear(l + ".mlp.dense_h_to_4h", h, hp.intermediate_size, true);
    b.Linear(l + ".mlp.dense_4h_to_h", hp.intermediate_size, h, true);
    hp.layers.push_back(DenseLayer(AttentionKind::kFull, hp.num_attention_heads, hp.head_dim,
                                   hp.intermediate_size));
  }
  b.LayerNorm("gpt_neox.final_layer_norm", h);
  if (options.buffers == BufferConvention::kCurrent) {
    b.Buffer("gpt_neox.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
  }
  GptFamilyHead(b, c, head,
                {.family = "gpt_neox", .embed = "gpt_neox.embed_in", .lm_head = "embed_out"},
                labels);
  m.no_split_patterns = {"gpt_neox.layers.*"};  // _no_split_modules = ["GPTNeoXLayer"]
  m.base_model_prefix = "gpt_neox.";
  return b.Finish();
}

}  // namespace memfit::arch
