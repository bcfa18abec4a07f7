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
  const BartEncoderSizes enc = ReadBartLayerSizes(b, c);
  hp.encoder_max_positions = Get(b, c.UintOr("max_source_positions", 1500));
  hp.max_position_embeddings = Get(b, c.UintOr("max_target_positions", 448));
  ReadBartTail(b, c, enc.heads);
  if (b.failed()) return b.Finish();

  const std::string p = generation ? "model." : "";
  const uint64_t d = hp.hidden_size;
  b.Conv(p + "encoder.conv1", mels, d, {3}, true);
  b.Conv(p + "encoder.conv2", d, d, {3}, true);
  b.Embedding(p + "encoder.embed_positions", hp.encoder_max_positions, d);
  for (uint64_t i = 0; i < hp.num_encoder_layers && !b.failed(); ++i) {
    EmitBartLayer(b, Layer(p + "encoder.layers", i), d, enc.ffn, false, /*k_bias=*/false);
  }
  b.LayerNorm(p + "encoder.layer_norm", d);
  const std::string embed = p + "decoder.embed_tokens.weight";
  b.Embedding(p + "decoder.embed_tokens", hp.vocab_size, d);
  b.Embedding(p + "decoder.embed_positions", hp.max_position_embeddings, d);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    EmitBartLayer(b, Layer(p + "decoder.layers", i), d, hp.intermediate_size, true,
                  /*k_bias=*/false);
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
