// MPT (mosaicml/mpt-7b, mpt-30b and their instruct/chat variants): transformers' modeling_mpt.py.
// transformer.{wte, blocks.N.{norm_1, attn.{Wqkv, out_proj}, norm_2, ffn.{up_proj, down_proj}},
// norm_f}, lm_head tied to wte. No biases anywhere (norms included: transformers sets
// norm.bias = None "for backward compatibility with weights on the Hub"). ALiBi positions, no
// positional embedding and no buffers. transformers' MPT is multi-head only: attn_config's
// kv_n_heads is not read, and the config's hyperparameters are d_model, n_heads, n_layers,
// expansion_ratio (transformers hard-codes 4; memfit follows the config, as the checkpoint does),
// max_seq_len.

#include "model/arch/builder_kit.h"
#include "model/arch/decoder_heads.h"
#include "model/arch/families.h"

namespace memfit::arch {

Result<Model> BuildMpt(const HfConfig& c, const BuildOptions& options) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadMosaicHyperparameters(b, c, /*tie=*/true);
  hp.activation = "gelu";
  const uint64_t expansion = Get(b, c.UintOr("expansion_ratio", 4));
  const HeadKind head = ResolveHead(b, c, options, "mpt");
  const uint64_t labels = NumLabels(b, c);
  if (b.failed()) return b.Finish();
  MultiHeadDims(b, c, "d_model", "n_heads");
  hp.intermediate_size = expansion * hp.hidden_size;
  if (expansion == 0 || hp.intermediate_size / expansion != hp.hidden_size) {
    b.Fail(MakeError("{}: \"expansion_ratio\" = {} is zero or too large", c.where(), expansion));
  }
  if (b.failed()) return b.Finish();
  if (expansion != 4) {
    m.assumptions.push_back(fmt::format(
        "expansion_ratio {} taken from the config as MosaicML's code does; transformers' MptMLP "
        "hard-codes 4 and cannot load such a checkpoint", expansion));
  }

  const uint64_t h = hp.hidden_size;
  b.Embedding("transformer.wte", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("transformer.blocks", i);
    b.LayerNorm(l + ".norm_1", h, false);
    b.Linear(l + ".attn.Wqkv", h, 3 * h, false);
    b.Linear(l + ".attn.out_proj", h, h, false);
    b.LayerNorm(l + ".norm_2", h, false);
    b.Linear(l + ".ffn.up_proj", h, hp.intermediate_size, false);
    b.Linear(l + ".ffn.down_proj", hp.intermediate_size, h, false);
    hp.layers.push_back(DenseLayer(AttentionKind::kFull, hp.num_attention_heads, hp.head_dim,
                                   hp.intermediate_size));
  }
  b.LayerNorm("transformer.norm_f", h, false);
  GptFamilyHead(b, c, head, {.family = "mpt", .embed = "transformer.wte"}, labels);
  m.no_split_patterns = {"transformer.blocks.*"};  // _no_split_modules = ["MptBlock"]
  m.base_model_prefix = "transformer.";
  return b.Finish();
}

}  // namespace memfit::arch
