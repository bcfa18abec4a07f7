// Whisper (transformers' modeling_whisper.py). model.encoder.{conv1 Conv1d(num_mel_bins, d, 3),
// conv2 Conv1d(d, d, 3), embed_positions [max_source_positions, d] (sinusoidal values, but an
// nn.Embedding parameter), layers.N, layer_norm}; model.decoder.{embed_tokens, embed_positions
// [max_target_positions, d], layers.N (with encoder_attn), layer_norm}. Attention: k_proj has no
// bias. WhisperForConditionalGeneration adds proj_out, tied to the decoder's embed_tokens.

#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"

namespace memfit::arch {

Result<Model> BuildWhisper(const HfConfig& c, const BuildOptions& options) {
  const std::string cls = HeadClass(c, options, "Whisper", "WhisperModel");
  const bool generation = cls == "WhisperForConditionalGeneration";
  if (cls != "WhisperModel" && !generation) {
    return UnknownHead(c, cls, "WhisperModel, WhisperForConditionalGeneration");
  }
  ModelBuilder b(c);
  Model& m = b.model();
  m.architecture = cls;
  auto& hp = m.hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("d_model"));
  const uint64_t mels = Get(b, c.UintOr("num_mel_bins", 80));
  hp.num_encoder_layers = Get(b, c.Uint("encoder_layers"));
  hp.num_layers = Get(b, c.Uint("decoder_layers"));
  const uint64_t enc_heads = Get(b, c.Uint("encoder_attention_heads"));
  hp.num_attention_heads = Get(b, c.Uint("decoder_attention_heads"));
  hp.num_kv_heads = hp.num_attention_heads;
  const uint64_t enc_ffn = Get(b, c.Uint("encoder_ffn_dim"));
  hp.intermediate_size = Get(b, c.Uint("decoder_ffn_dim"));
  hp.encoder_max_positions = Get(b, c.UintOr("max_source_positions", 1500));
  hp.max_position_embeddings = Get(b, c.UintOr("max_target_positions", 448));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", true));
  hp.activation = Get(b, c.StringOr("activation_function", "gelu"));
  hp.norm = "layernorm";
  hp.is_encoder_decoder = true;
  if (b.failed()) return b.Finish();
  DivideExact(b, c, hp.hidden_size, "d_model", enc_heads, "encoder_attention_heads");
  hp.head_dim = DivideExact(b, c, hp.hidden_size, "d_model", hp.num_attention_heads,
                            "decoder_attention_heads");
  if (b.failed()) return b.Finish();

  const std::string p = generation ? "model." : "";
  const uint64_t d = hp.hidden_size;
  auto attention = [&](const std::string& prefix) {
    b.Linear(prefix + ".k_proj", d, d, false);
    b.Linear(prefix + ".v_proj", d, d, true);
    b.Linear(prefix + ".q_proj", d, d, true);
    b.Linear(prefix + ".out_proj", d, d, true);
  };
  auto layer = [&](const std::string& l, uint64_t ffn, bool decoder) {
    attention(l + ".self_attn");
    b.LayerNorm(l + ".self_attn_layer_norm", d);
    if (decoder) {
      attention(l + ".encoder_attn");
      b.LayerNorm(l + ".encoder_attn_layer_norm", d);
    }
    b.Linear(l + ".fc1", d, ffn, true);
    b.Linear(l + ".fc2", ffn, d, true);
    b.LayerNorm(l + ".final_layer_norm", d);
  };
  b.Conv(p + "encoder.conv1", mels, d, {3}, true);
  b.Conv(p + "encoder.conv2", d, d, {3}, true);
  b.Embedding(p + "encoder.embed_positions", hp.encoder_max_positions, d);
  for (uint64_t i = 0; i < hp.num_encoder_layers && !b.failed(); ++i) {
    layer(Layer(p + "encoder.layers", i), enc_ffn, false);
  }
  b.LayerNorm(p + "encoder.layer_norm", d);
  const std::string embed = p + "decoder.embed_tokens.weight";
  b.Embedding(p + "decoder.embed_tokens", hp.vocab_size, d);
  b.Embedding(p + "decoder.embed_positions", hp.max_position_embeddings, d);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    layer(Layer(p + "decoder.layers", i), hp.intermediate_size, true);
    LayerInfo info = DenseLayer(AttentionKind::kFull, hp.num_attention_heads, hp.head_dim,
                                hp.intermediate_size);
    info.cross_attention = true;
    hp.layers.push_back(info);
  }
  b.LayerNorm(p + "decoder.layer_norm", d);
  if (generation) {
    b.SetHead(true);
    if (hp.tie_word_embeddings) {
      b.Tied("proj_out.weight", {hp.vocab_size, d}, embed);
    } else {
      b.Linear("proj_out", d, hp.vocab_size, false);
    }
    b.SetHead(false);
  }
  // _no_split_modules = ["WhisperEncoderLayer", "WhisperDecoderLayer"].
  m.no_split_patterns = {p + "encoder.layers.*", p + "decoder.layers.*"};
  m.base_model_prefix = p;
  return b.Finish();
}

}  // namespace memfit::arch
