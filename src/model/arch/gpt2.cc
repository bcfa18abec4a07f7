// GPT-2 (gpt2, DialoGPT, distilgpt2, gpt2-xl): transformers' modeling_gpt2.py.
// transformer.{wte, wpe, h.N.{ln_1, attn.{c_attn, c_proj}, ln_2, [crossattention, ln_cross_attn],
// mlp.{c_fc, c_proj}}, ln_f}, lm_head tied to wte. GPT-2 uses Conv1D, whose weight is [in, out]
// (the transpose of nn.Linear). Every attention module registers two non-persistent buffers: the
// causal mask `bias` (bool [1, 1, n_positions, n_positions]) and `masked_bias` (a float32 scalar);
// transformers 4.42 has them (accelerate counts the bool mask at 1/8 byte per element) and so do
// the 4.4x releases memfit calls current. Positions are learned (wpe), not rotary.

#include "model/arch/builder_kit.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/decoder_heads.h"
#include "model/arch/families.h"

namespace memfit::arch {
namespace {

// transformers.pytorch_utils.Conv1D(nf=out, nx=in): weight [in, out], bias [out].
void Conv1D(ModelBuilder& b, const std::string& prefix, uint64_t in, uint64_t out) {
  b.Param(prefix + ".weight", {in, out});
  b.Param(prefix + ".bias", {out});
}

void AttentionBuffers(ModelBuilder& b, const std::string& prefix, uint64_t positions) {
  b.Buffer(prefix + ".bias", {1, 1, positions, positions}, Dtype::kBool, false);
  b.Buffer(prefix + ".masked_bias", {}, Dtype::kF32, false);
}

}  // namespace

Result<Model> BuildGpt2(const HfConfig& c, const BuildOptions& options) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadGptStyleHyperparameters(b, c, /*tie=*/true, "gelu_new", /*dropout=*/0.1);
  const bool cross = Get(b, c.BoolOr("add_cross_attention", false));
  const HeadKind head = ResolveHead(b, c, options, "gpt2");
  const uint64_t labels = NumLabels(b, c);
  if (b.failed()) return b.Finish();
  hp.intermediate_size = Get(b, c.UintOr("n_inner", 4 * hp.hidden_size));
  MultiHeadDims(b, c, "n_embd", "n_head");
  if (b.failed()) return b.Finish();

  const uint64_t h = hp.hidden_size, inner = hp.intermediate_size, pos = hp.max_position_embeddings;
  b.Embedding("transformer.wte", hp.vocab_size, h);
  b.Embedding("transformer.wpe", pos, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("transformer.h", i);
    b.LayerNorm(l + ".ln_1", h);
    Conv1D(b, l + ".attn.c_attn", h, 3 * h);
    Conv1D(b, l + ".attn.c_proj", h, h);
    AttentionBuffers(b, l + ".attn", pos);
    b.LayerNorm(l + ".ln_2", h);
    if (cross) {
      Conv1D(b, l + ".crossattention.c_attn", h, 2 * h);
      Conv1D(b, l + ".crossattention.q_attn", h, h);
      Conv1D(b, l + ".crossattention.c_proj", h, h);
      AttentionBuffers(b, l + ".crossattention", pos);
      b.LayerNorm(l + ".ln_cross_attn", h);
    }
    Conv1D(b, l + ".mlp.c_fc", h, inner);
    Conv1D(b, l + ".mlp.c_proj", inner, h);
    hp.layers.push_back(
        DenseLayer(AttentionKind::kFull, hp.num_attention_heads, hp.head_dim, inner));
  }
  b.LayerNorm("transformer.ln_f", h);
  if (head == HeadKind::kDoubleHeads) {
    LmHead(b, "transformer.wte");
    // GPT2DoubleHeadsModel's SequenceSummary: a projection to num_labels
    // (summary_proj_to_labels) or to hidden.
    if (Get(b, c.BoolOr("summary_use_proj", true))) {
      const bool to_labels = Get(b, c.BoolOr("summary_proj_to_labels", true)) && labels > 0;
      b.SetHead(true);
      b.Linear("multiple_choice_head.summary", h, to_labels ? labels : h, true);
      b.SetHead(false);
    }
  } else {
    GptFamilyHead(b, c, head, {.family = "gpt2", .embed = "transformer.wte"}, labels);
  }
  m.no_split_patterns = {"transformer.h.*"};  // _no_split_modules = ["GPT2Block"]
  m.base_model_prefix = "transformer.";
  return b.Finish();
}

}  // namespace memfit::arch
