// Qwen (v1, model_type "qwen", QWenLMHeadModel; remote code modeling_qwen.py of Qwen/Qwen-*):
// transformer.wte, per block ln_1, fused attn.c_attn with bias, attn.c_proj, ln_2, mlp.w1/w2 and
// mlp.c_proj of intermediate_size / 2, transformer.ln_f, untied lm_head; non-persistent
// transformer.rotary_emb.inv_freq [(rotary_dim + 1) / 2] and per-attention logn_tensor float32
// [1, 32767, 1, 1]. No torch_dtype: "bf16"/"fp16"/"fp32" name the dtype, bfloat16 when all are
// false ("auto"). Checked: Qwen/Qwen-72B's index total_size exactly.

#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

Result<Model> BuildQwen(const HfConfig& c, const BuildOptions& o) {
  std::vector<std::string> assumptions;
  MEMFIT_ASSIGN_OR_RETURN(bool fp32, c.BoolOr("fp32", false));
  MEMFIT_ASSIGN_OR_RETURN(bool fp16, c.BoolOr("fp16", false));
  MEMFIT_ASSIGN_OR_RETURN(bool bf16, c.BoolOr("bf16", false));
  Dtype dtype = Dtype::kBF16;
  if (auto d = c.torch_dtype()) {
    dtype = *d;
  } else if (fp32) {
    dtype = Dtype::kF32;
  } else if (fp16) {
    dtype = Dtype::kF16;
  } else if (!bf16) {
    assumptions.push_back(
        "config.json names no dtype (bf16/fp16/fp32 all false: \"auto\"): "
        "bfloat16 assumed, as Qwen's remote code picks on current GPUs");
  }
  ModelBuilder b(c, dtype);
  Model& m = b.model();
  for (auto& a : assumptions) m.assumptions.push_back(std::move(a));
  auto& hp = m.hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.Uint("num_hidden_layers"));
  hp.num_attention_heads = Get(b, c.Uint("num_attention_heads"));
  hp.num_kv_heads = hp.num_attention_heads;
  hp.head_dim = Get(b, c.Uint("kv_channels"));
  const uint64_t ffn = Get(b, c.Uint("intermediate_size"));
  hp.max_position_embeddings =
      Get(b, c.UintOr("seq_length", Get(b, c.UintOr("max_position_embeddings", 0))));
  hp.tie_word_embeddings = false;  // QWenLMHeadModel never ties
  hp.activation = "silu";
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  const bool bias = !Get(b, c.BoolOr("no_bias", true));
  const double rotary_pct = Get(b, c.NumberOr("rotary_pct", 1.0));
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  if (hp.num_attention_heads == 0 || hp.head_dim == 0) {
    return MakeError("{}: fields \"num_attention_heads\" and \"kv_channels\" must not be zero",
                     c.where());
  }
  if (ffn % 2 != 0) {
    return MakeError("{}: \"intermediate_size\" = {} must be even (the MLP is half as wide)",
                     c.where(), ffn);
  }
  if (!(rotary_pct > 0.0 && rotary_pct <= 1.0)) {
    return MakeError("{}: \"rotary_pct\" = {} must be in (0, 1]", c.where(), rotary_pct);
  }
  hp.intermediate_size = ffn / 2;
  const uint64_t h = hp.hidden_size, inter = ffn / 2;
  const uint64_t proj = MulDims(b, hp.num_attention_heads, hp.head_dim, "heads x kv_channels");
  b.Embedding("transformer.wte", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("transformer.h", i);
    b.RmsNorm(l + ".ln_1", h);
    QLinear(b, q, l + ".attn.c_attn", h, MulDims(b, proj, 3, "3 x projection size"), true);
    QLinear(b, q, l + ".attn.c_proj", proj, h, bias);
    b.Buffer(l + ".attn.logn_tensor", {1, 32767, 1, 1}, Dtype::kF32, false);
    b.RmsNorm(l + ".ln_2", h);
    QLinear(b, q, l + ".mlp.w1", h, inter, bias);
    QLinear(b, q, l + ".mlp.w2", h, inter, bias);
    QLinear(b, q, l + ".mlp.c_proj", inter, h, bias);
    hp.layers.push_back(DenseAttentionInfo(hp, inter));
  }
  b.RmsNorm("transformer.ln_f", h);
  const auto rotary = static_cast<uint64_t>(static_cast<double>(hp.head_dim) * rotary_pct);
  b.Buffer("transformer.rotary_emb.inv_freq", {(rotary + 1) / 2}, Dtype::kF32, false);
  LmHead(b, "transformer.wte");
  NoteQuantization(b, q);
  m.no_split_patterns = {"transformer.h.*"};
  m.base_model_prefix = "transformer.";
  return b.Finish();
}

}  // namespace memfit::arch
