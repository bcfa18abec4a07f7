// GPTBigCode (SantaCoder, StarCoder, StarCoderBase, WizardCoder): transformers'
// modeling_gpt_bigcode.py. transformer.{wte, wpe, h.N.{ln_1, attn.{c_attn, c_proj}, ln_2,
// mlp.{c_fc, c_proj}}, ln_f}, lm_head tied to wte. Unlike GPT-2 the projections are nn.Linear
// ([out, in]). Multi-query attention by default ("multi_query": true): c_attn emits the queries of
// every head plus one shared key and value head (hidden + 2 * head_dim outputs). One buffer: the
// model-level causal mask transformer.bias (bool [n_positions, n_positions], non-persistent), in
// 4.42 and in current releases. Positions are learned (wpe).

#include "model/arch/builder_kit.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/decoder_heads.h"
#include "model/arch/families.h"

namespace memfit::arch {

Result<Model> BuildGptBigcode(const HfConfig& c, const BuildOptions& options) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadGptStyleHyperparameters(b, c, /*tie=*/true, "gelu_pytorch_tanh", /*dropout=*/0.1);
  const bool multi_query = Get(b, c.BoolOr("multi_query", true));
  const HeadKind head = ResolveHead(b, c, options, "gpt_bigcode");
  const uint64_t labels = NumLabels(b, c);
  if (b.failed()) return b.Finish();
  hp.intermediate_size = Get(b, c.UintOr("n_inner", 4 * hp.hidden_size));
  hp.head_dim = DivideExact(b, c, hp.hidden_size, "n_embd", hp.num_attention_heads, "n_head");
  hp.num_kv_heads = multi_query ? 1 : hp.num_attention_heads;
  if (b.failed()) return b.Finish();

  const uint64_t h = hp.hidden_size, pos = hp.max_position_embeddings;
  const uint64_t qkv = multi_query ? h + 2 * hp.head_dim : 3 * h;
  b.Embedding("transformer.wte", hp.vocab_size, h);
  b.Embedding("transformer.wpe", pos, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("transformer.h", i);
    b.LayerNorm(l + ".ln_1", h);
    b.Linear(l + ".attn.c_attn", h, qkv, true);
    b.Linear(l + ".attn.c_proj", h, h, true);
    b.LayerNorm(l + ".ln_2", h);
    b.Linear(l + ".mlp.c_fc", h, hp.intermediate_size, true);
    b.Linear(l + ".mlp.c_proj", hp.intermediate_size, h, true);
    hp.layers.push_back(DenseAttentionInfo(hp, hp.intermediate_size));
  }
  b.LayerNorm("transformer.ln_f", h);
  b.Buffer("transformer.bias", {pos, pos}, Dtype::kBool, false);
  GptFamilyHead(b, c, head, {.family = "gpt_bigcode", .embed = "transformer.wte", .qa = false},
                labels);
  m.no_split_patterns = {"transformer.h.*"};  // _no_split_modules = ["GPTBigCodeBlock"]
  m.base_model_prefix = "transformer.";
  return b.Finish();
}

}  // namespace memfit::arch
