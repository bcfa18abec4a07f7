// GPT-J (EleutherAI/gpt-j-6b and fine-tunes): transformers' modeling_gptj.py.
// transformer.{wte, h.N.{ln_1, attn.{k_proj, v_proj, q_proj, out_proj} (no biases),
// mlp.{fc_in, fc_out}}, ln_f}, lm_head (with a bias, untied). One LayerNorm per block: attention
// and MLP run in parallel on it. Rotary on the first rotary_dim dimensions of each head.
// Per attention module, by version (transformers' modeling_gptj.py):
// - 4.42-4.44: non-persistent buffers, the causal mask `bias` (bool [1, 1, n_positions,
//   n_positions]) and `masked_bias` (float32 scalar), which accelerate counts;
// - 4.45 and later (memfit's current): no buffers; the sinusoidal table `embed_positions`
//   (float32 [n_positions, rotary_dim or n_embd], made by create_sinusoidal_positions) is a plain
//   attribute: accelerate does not count it, but it is resident (model.to() leaves it and the
//   first forward moves it to the inputs' device, keeping it there) and stays float32 in a 16-bit
//   model. Measured with 4.48.3 (validation/results/cpu-torch1.13-tf4.48-slopes.csv, s-gj-*).

#include "model/arch/builder_kit.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/decoder_heads.h"
#include "model/arch/families.h"

namespace memfit::arch {

Result<Model> BuildGptj(const HfConfig& c, const BuildOptions& options) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadGptStyleHyperparameters(b, c, /*tie=*/false, "gelu_new", /*dropout=*/0.0);
  const HeadKind head = ResolveHead(b, c, options, "gptj");
  const uint64_t labels = NumLabels(b, c);
  if (b.failed()) return b.Finish();
  hp.intermediate_size = Get(b, c.UintOr("n_inner", 4 * hp.hidden_size));
  MultiHeadDims(b, c, "n_embd", "n_head");
  if (b.failed()) return b.Finish();

  const uint64_t h = hp.hidden_size, pos = hp.max_position_embeddings;
  // GPTJAttention: pos_embd_dim = rotary_dim or embed_dim (GPTJConfig's default 64; a null or 0
  // rotary_dim: the whole width).
  const auto rotary_key = c.raw().find("rotary_dim");
  const bool null_rotary = rotary_key != c.raw().end() && rotary_key->is_null();
  const uint64_t rotary_dim = null_rotary ? 0 : Get(b, c.UintOr("rotary_dim", 64));
  const uint64_t table_width = rotary_dim != 0 ? rotary_dim : h;
  b.Embedding("transformer.wte", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("transformer.h", i);
    b.LayerNorm(l + ".ln_1", h);
    if (options.buffers == BufferConvention::kTransformers442) {
      b.Buffer(l + ".attn.bias", {1, 1, pos, pos}, Dtype::kBool, false);
      b.Buffer(l + ".attn.masked_bias", {}, Dtype::kF32, false);
    } else {
      b.Buffer(l + ".attn.embed_positions", {pos, table_width}, Dtype::kF32, false);
    }
    b.Linear(l + ".attn.k_proj", h, h, false);
    b.Linear(l + ".attn.v_proj", h, h, false);
    b.Linear(l + ".attn.q_proj", h, h, false);
    b.Linear(l + ".attn.out_proj", h, h, false);
    b.Linear(l + ".mlp.fc_in", h, hp.intermediate_size, true);
    b.Linear(l + ".mlp.fc_out", hp.intermediate_size, h, true);
    hp.layers.push_back(DenseLayer(AttentionKind::kFull, hp.num_attention_heads, hp.head_dim,
                                   hp.intermediate_size));
  }
  b.LayerNorm("transformer.ln_f", h);
  // GPTJForQuestionAnswering: Linear(hidden, num_labels), unlike most families' fixed 2.
  GptFamilyHead(b, c, head,
                {.family = "gptj", .embed = "transformer.wte", .lm_bias = true,
                 .qa_num_labels = true},
                labels);
  m.no_split_patterns = {"transformer.h.*"};  // _no_split_modules = ["GPTJBlock"]
  m.base_model_prefix = "transformer.";
  return b.Finish();
}

}  // namespace memfit::arch
