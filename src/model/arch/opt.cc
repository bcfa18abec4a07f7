// OPT (facebook/opt-125m .. opt-66b, Galactica): transformers' modeling_opt.py.
// model.decoder.{embed_tokens [vocab, word_embed_proj_dim], embed_positions [max_pos + 2, hidden]
// (learned, offset by 2), [project_out, project_in when word_embed_proj_dim != hidden],
// [final_layer_norm when do_layer_norm_before and not _remove_final_layer_norm],
// layers.N.{self_attn.{k,v,q,out}_proj, self_attn_layer_norm, fc1, fc2, final_layer_norm}},
// lm_head tied to embed_tokens. No buffers.

#include "model/arch/builder_kit.h"
#include "model/arch/decoder_heads.h"
#include "model/arch/families.h"

namespace memfit::arch {

Result<Model> BuildOpt(const HfConfig& c, const BuildOptions& options) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.Uint("num_hidden_layers"));
  hp.num_attention_heads = Get(b, c.Uint("num_attention_heads"));
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.intermediate_size = Get(b, c.Uint("ffn_dim"));
  hp.max_position_embeddings = Get(b, c.Uint("max_position_embeddings"));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", true));
  hp.activation = Get(b, c.StringOr("activation_function", "relu"));
  hp.norm = "layernorm";
  const uint64_t proj = Get(b, c.UintOr("word_embed_proj_dim", hp.hidden_size));
  const bool pre_norm = Get(b, c.BoolOr("do_layer_norm_before", true));
  const bool remove_final_norm = Get(b, c.BoolOr("_remove_final_layer_norm", false));
  const bool bias = Get(b, c.BoolOr("enable_bias", true));
  const bool norm_affine = Get(b, c.BoolOr("layer_norm_elementwise_affine", true));
  const HeadKind head = ResolveHead(b, c, options, "opt");
  const uint64_t labels = NumLabels(b, c);
  if (b.failed()) return b.Finish();
  MultiHeadDims(b, c, "hidden_size", "num_attention_heads");
  if (b.failed()) return b.Finish();

  const uint64_t h = hp.hidden_size;
  auto norm = [&](const std::string& prefix) {
    if (norm_affine) b.LayerNorm(prefix, h);
  };
  b.Embedding("model.decoder.embed_tokens", hp.vocab_size, proj);
  // OPTLearnedPositionalEmbedding reserves 2 extra positions (fairseq's padding offset).
  b.Embedding("model.decoder.embed_positions", hp.max_position_embeddings + 2, h);
  if (proj != h) {
    b.Linear("model.decoder.project_out", h, proj, false);
    b.Linear("model.decoder.project_in", proj, h, false);
  }
  if (pre_norm && !remove_final_norm) norm("model.decoder.final_layer_norm");
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.decoder.layers", i);
    b.Linear(l + ".self_attn.k_proj", h, h, bias);
    b.Linear(l + ".self_attn.v_proj", h, h, bias);
    b.Linear(l + ".self_attn.q_proj", h, h, bias);
    b.Linear(l + ".self_attn.out_proj", h, h, bias);
    norm(l + ".self_attn_layer_norm");
    b.Linear(l + ".fc1", h, hp.intermediate_size, bias);
    b.Linear(l + ".fc2", hp.intermediate_size, h, bias);
    norm(l + ".final_layer_norm");
    hp.layers.push_back(DenseLayer(AttentionKind::kFull, hp.num_attention_heads, hp.head_dim,
                                   hp.intermediate_size));
  }
  // OPT's heads read word_embed_proj_dim features.
  GptFamilyHead(b, c, head,
                {.family = "opt", .embed = "model.decoder.embed_tokens", .features = proj,
                 .token = false},
                labels);
  m.no_split_patterns = {"model.decoder.layers.*"};  // _no_split_modules = ["OPTDecoderLayer"]
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
