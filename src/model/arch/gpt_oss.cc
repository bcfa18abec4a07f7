// gpt-oss (GptOssForCausalLM): biased q/k/v/o projections, per-head attention sinks, alternating
// sliding (128-token) and full attention layers, a biased router and fused experts
// (gate_up_proj [E, H, 2I], down_proj [E, I, H] with biases). The released checkpoints store the
// experts in MXFP4 ("quant_method": "mxfp4"): *_blocks uint8 [E, out, in / 32, 16] (two fp4
// values per byte, 32 per block) and *_scales uint8 [E, out, in / 32] (one E8M0 scale per block).
// Sources: transformers/models/gpt_oss/modeling_gpt_oss.py, integrations/mxfp4.py, and
// openai/gpt-oss-20b model.safetensors.index.json.

#include "memfit/checked_math.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

Result<Model> BuildGptOss(const HfConfig& c, const BuildOptions& o) {
  std::vector<std::string> assumptions;
  Dtype dtype = Dtype::kBF16;
  if (auto d = c.torch_dtype()) {
    dtype = *d;
  } else {
    assumptions.push_back("config.json names no torch_dtype: gpt-oss weights assumed bfloat16, "
                          "as OpenAI's checkpoints store them");
  }
  ModelBuilder b(c, dtype);
  Model& m = b.model();
  m.assumptions = std::move(assumptions);
  ReadDecoderBasics(b, c, {});
  auto& hp = m.hp;
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  hp.num_experts = Get(b, c.Uint("num_local_experts"));
  const uint64_t top_k = Get(b, c.UintOr("experts_per_token", 4));  // OpenAI's own key
  hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", top_k));
  hp.moe_intermediate_size = hp.intermediate_size;
  const bool bias = Get(b, c.BoolOr("attention_bias", true));
  const uint64_t window = Get(b, c.UintOr("sliding_window", 128));
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size, hd = hp.head_dim, nh = hp.num_attention_heads,
                 nkv = hp.num_kv_heads, inter = hp.intermediate_size, e = hp.num_experts;
  const bool mxfp4 =
      q.method == QuantMethod::kMxfp4 && !SkipsModule(q, "model.layers.0.mlp.experts");
  if (mxfp4 && (h % 32 != 0 || inter % 32 != 0)) {
    return MakeError("{}: mxfp4 experts need \"hidden_size\" ({}) and \"intermediate_size\" ({}) "
                     "divisible by 32", c.where(), h, inter);
  }
  std::vector<bool> sliding =
      SlidingLayers(b, c, hp.num_layers, [](uint64_t i) { return i % 2 == 0; });
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    b.RmsNorm(l + ".input_layernorm", h);
    b.Linear(l + ".self_attn.q_proj", h, nh * hd, bias);
    b.Linear(l + ".self_attn.k_proj", h, nkv * hd, bias);
    b.Linear(l + ".self_attn.v_proj", h, nkv * hd, bias);
    b.Linear(l + ".self_attn.o_proj", nh * hd, h, bias);
    b.Param(l + ".self_attn.sinks", {nh});
    b.Linear(l + ".mlp.router", h, e, true);
    const std::string x = l + ".mlp.experts";
    if (mxfp4) {
      // Two fp4 values a byte: the blocks stand for e x out x in parameters, the scales for none.
      const uint64_t gate_up = CheckedProduct(std::vector<uint64_t>{e, 2 * inter, h}).value_or(0);
      const uint64_t down = CheckedProduct(std::vector<uint64_t>{e, h, inter}).value_or(0);
      b.Packed(x + ".gate_up_proj_blocks", {e, 2 * inter, h / 32, 16}, Dtype::kU8, gate_up);
      b.Packed(x + ".gate_up_proj_scales", {e, 2 * inter, h / 32}, Dtype::kU8, 0);
      b.Packed(x + ".down_proj_blocks", {e, h, inter / 32, 16}, Dtype::kU8, down);
      b.Packed(x + ".down_proj_scales", {e, h, inter / 32}, Dtype::kU8, 0);
    } else {
      b.Param(x + ".gate_up_proj", {e, h, 2 * inter});
      b.Param(x + ".down_proj", {e, inter, h});
    }
    b.Param(x + ".gate_up_proj_bias", {e, 2 * inter});
    b.Param(x + ".down_proj_bias", {e, h});
    b.RmsNorm(l + ".post_attention_layernorm", h);
    LayerInfo info = AttentionInfo(hp, sliding[i], window);
    info.moe = true;
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.norm", h);
  b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  TaskHead(b, c, o, "model.embed_tokens");
  if (mxfp4) {
    m.notes.push_back("mxfp4: expert weights stored as uint8 blocks (two fp4 values per byte) and "
                      "uint8 E8M0 scales per 32 values; parameters are logical (the experts' "
                      "e x out x in), bytes as stored");
  }
  m.no_split_patterns = {"model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
