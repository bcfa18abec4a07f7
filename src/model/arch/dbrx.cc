// DBRX (databricks/dbrx-base, dbrx-instruct): transformers models/dbrx/modeling_dbrx.py (4.42)
// and modular_dbrx.py (5.x). transformer.{wte, blocks.N, norm_f}; per block
// norm_attn_norm.{norm_1, attn.Wqkv [d + 2 x kv x head_dim, d], attn.out_proj, norm_2} (LayerNorms
// without bias) and experts as three 2-D parameters ffn.experts.mlp.{w1, v1, w2}
// [E x ffn_hidden_size, d]; hyperparameters partly nested in "attn_config" (kv_n_heads, default
// 1) and "ffn_config" (ffn_hidden_size 3584, moe_num_experts 4, moe_top_k 1, ffn_act_fn.name
// silu). Rotary: 4.42 one inv_freq per attention module, 5.x one transformer.rotary_emb.

#include "formats/hf_config_json.h"
#include "memfit/checked_math.h"
#include "model/arch/builder_kit.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/expert_kit.h"
#include "model/arch/issue30_families.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {

Result<Model> BuildDbrx(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  hp.hidden_size = Get(b, c.UintAny({"d_model", "hidden_size"}));
  hp.num_layers = Get(b, c.UintAny({"n_layers", "num_hidden_layers"}));
  hp.num_attention_heads = Get(b, c.UintAny({"n_heads", "num_attention_heads"}));
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.max_position_embeddings = Get(b, c.UintOr("max_seq_len", 2048));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", false));
  hp.norm = "layernorm";
  hp.gated_mlp = true;  // DbrxExpertGLU: act(x w1) * (x v1), then w2
  hp.num_kv_heads = 1;
  uint64_t ffn = 3584;
  hp.num_experts = 4;
  hp.experts_per_token = 1;
  hp.activation = "silu";
  if (b.failed()) return b.Finish();
  if (auto attn = c.OptionalSub("attn_config")) {
    hp.num_kv_heads = Get(b, attn->UintOr("kv_n_heads", 1));
  }
  if (auto f = c.OptionalSub("ffn_config")) {
    ffn = Get(b, f->UintOr("ffn_hidden_size", 3584));
    hp.num_experts = Get(b, f->UintOr("moe_num_experts", 4));
    hp.experts_per_token = Get(b, f->UintOr("moe_top_k", 1));
    if (auto act = f->OptionalSub("ffn_act_fn")) {
      hp.activation = Get(b, act->StringOr("name", "silu"));
    }
  }
  hp.moe_intermediate_size = ffn;
  if (b.failed()) return b.Finish();
  hp.head_dim = DivideExact(b, c, hp.hidden_size, "d_model", hp.num_attention_heads, "n_heads");
  if (!b.failed() && (hp.num_kv_heads == 0 || hp.num_attention_heads % hp.num_kv_heads != 0)) {
    b.Fail(MakeError("{}: \"n_heads\" = {} is not a multiple of attn_config \"kv_n_heads\" = {}",
                     c.where(), hp.num_attention_heads, hp.num_kv_heads));
  }
  const uint64_t h = hp.hidden_size;
  const uint64_t kv_width = MulDims(b, MulDims(b, 2, hp.num_kv_heads, "2 x kv_n_heads"),
                                    hp.head_dim, "2 x kv_n_heads x head_dim");
  const uint64_t qkv = CheckedAdd(h, kv_width).value_or(0);
  if (!b.failed() && qkv == 0) b.Fail(MakeError("{}: the qkv width overflows", c.where()));
  const uint64_t rows = MulDims(b, hp.num_experts, ffn, "moe_num_experts x ffn_hidden_size");
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();

  const bool per_layer_rope = o.buffers == BufferConvention::kTransformers442;
  if (!per_layer_rope) {
    b.Buffer("transformer.rotary_emb.inv_freq", {hp.head_dim / 2}, Dtype::kF32, false);
  }
  b.Embedding("transformer.wte", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("transformer.blocks", i);
    const std::string a = l + ".norm_attn_norm.";
    b.LayerNorm(a + "norm_1", h, false);
    QLinear(b, q, a + "attn.Wqkv", h, qkv, false);
    QLinear(b, q, a + "attn.out_proj", h, h, false);
    if (per_layer_rope) {
      b.Buffer(a + "attn.rotary_emb.inv_freq", {hp.head_dim / 2}, Dtype::kF32, false);
    }
    b.LayerNorm(a + "norm_2", h, false);
    b.Linear(l + ".ffn.router.layer", h, hp.num_experts, false);
    const std::string e = l + ".ffn.experts.mlp";
    if (q.method == QuantMethod::kMlx) {
      // mlx-lm's dbrx.py splits the experts into ffn.experts.<E>.{w1,v1,w2} linears (w2
      // transposed: ffn -> d_model), quantized as linears (mlx_quantization.h).
      RepeatedModules(b, q, l + ".ffn.experts", hp.num_experts, [&](const std::string& x) {
        b.Linear(x + ".w1", h, ffn, false);
        b.Linear(x + ".v1", h, ffn, false);
        b.Linear(x + ".w2", ffn, h, false);
      });
    } else if (QuantizesModule(q, e)) {
      b.Fail(
          MakeError("{}: quantized fused experts (DBRX's ffn.experts.mlp.{{w1,v1,w2}}) are not "
                    "laid out by the exact builder",
                    c.where()));
      break;
    } else {
      b.Param(e + ".w1", {rows, h});
      b.Param(e + ".v1", {rows, h});
      b.Param(e + ".w2", {rows, h});
    }
    LayerInfo info = AttentionInfo(hp, false, 0);
    info.moe = true;
    hp.layers.push_back(info);
  }
  b.LayerNorm("transformer.norm_f", h, false);
  TaskHead(b, c, o, "transformer.wte");
  NoteQuantization(b, q);
  m.no_split_patterns = {"transformer.blocks.*"};  // _no_split_modules = ["DbrxBlock"]
  m.base_model_prefix = "transformer.";
  return b.Finish();
}

}  // namespace memfit::arch
