// Qwen1.5-MoE / Qwen2-MoE (qwen2_moe): the qwen2 attention (q/k/v biases) with, on sparse layers,
// a router (mlp.gate [E, H]), E experts of width moe_intermediate_size, one shared expert of
// width shared_expert_intermediate_size and its sigmoid gate mlp.shared_expert_gate [1, H].
// Sparse layers: not in mlp_only_layers and (layer + 1) % decoder_sparse_step == 0.
// Source: transformers/models/qwen2_moe/modeling_qwen2_moe.py.

#include <algorithm>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {

Result<Model> BuildQwen2Moe(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  ReadDecoderBasics(b, c, {});
  auto& hp = m.hp;
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  hp.num_experts = Get(b, c.Uint("num_experts"));
  hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
  hp.moe_intermediate_size = Get(b, c.Uint("moe_intermediate_size"));
  const uint64_t shared = Get(b, c.UintOr("shared_expert_intermediate_size", 0));
  hp.num_shared_experts = shared > 0 ? 1 : 0;
  const uint64_t step = Get(b, c.UintOr("decoder_sparse_step", 1));
  const uint64_t window = Get(b, c.BoolOr("use_sliding_window", false))
                              ? Get(b, c.UintOr("sliding_window", 0)) : 0;
  const uint64_t max_window_layers = Get(b, c.UintOr("max_window_layers", 0));
  std::vector<uint64_t> mlp_only;
  if (auto it = c.raw().find("mlp_only_layers"); it != c.raw().end() && it->is_array()) {
    for (const auto& v : *it) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0) {
        b.Fail(MakeError("{}: \"mlp_only_layers\" must hold layer indices", c.where()));
        break;
      }
      mlp_only.push_back(static_cast<uint64_t>(v.get<int64_t>()));
    }
  }
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size, hd = hp.head_dim, nh = hp.num_attention_heads,
                 nkv = hp.num_kv_heads;
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    b.RmsNorm(l + ".input_layernorm", h);
    QLinear(b, q, l + ".self_attn.q_proj", h, nh * hd, true);
    QLinear(b, q, l + ".self_attn.k_proj", h, nkv * hd, true);
    QLinear(b, q, l + ".self_attn.v_proj", h, nkv * hd, true);
    QLinear(b, q, l + ".self_attn.o_proj", nh * hd, h, false);
    if (o.buffers == BufferConvention::kTransformers442) {
      // 4.42 (as qwen2): inv_freq and float32 cos/sin caches per attention module.
      const std::string r = l + ".self_attn.rotary_emb";
      b.Buffer(r + ".inv_freq", {hd / 2}, Dtype::kF32, false);
      b.Buffer(r + ".cos_cached", {hp.max_position_embeddings, hd}, Dtype::kF32, false);
      b.Buffer(r + ".sin_cached", {hp.max_position_embeddings, hd}, Dtype::kF32, false);
    }
    const bool sparse = std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end() &&
                        hp.num_experts > 0 && step > 0 && (i + 1) % step == 0;
    LayerInfo info = AttentionInfo(hp, window > 0 && i >= max_window_layers, window);
    if (sparse) {
      b.Linear(l + ".mlp.gate", h, hp.num_experts, false);
      RepeatedModules(b, q, l + ".mlp.experts", hp.num_experts, [&](const std::string& x) {
        QLinear(b, q, x + ".gate_proj", h, hp.moe_intermediate_size, false);
        QLinear(b, q, x + ".up_proj", h, hp.moe_intermediate_size, false);
        QLinear(b, q, x + ".down_proj", hp.moe_intermediate_size, h, false);
      });
      if (shared > 0) {
        QLinear(b, q, l + ".mlp.shared_expert.gate_proj", h, shared, false);
        QLinear(b, q, l + ".mlp.shared_expert.up_proj", h, shared, false);
        QLinear(b, q, l + ".mlp.shared_expert.down_proj", shared, h, false);
        b.Linear(l + ".mlp.shared_expert_gate", h, 1, false);
      }
      info.moe = true;
    } else {
      QLinear(b, q, l + ".mlp.gate_proj", h, hp.intermediate_size, false);
      QLinear(b, q, l + ".mlp.up_proj", h, hp.intermediate_size, false);
      QLinear(b, q, l + ".mlp.down_proj", hp.intermediate_size, h, false);
      info.intermediate_size = hp.intermediate_size;
    }
    b.RmsNorm(l + ".post_attention_layernorm", h);
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.norm", h);
  if (o.buffers == BufferConvention::kCurrent) {
    b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  }
  return FinishDecoder(b, c, o, q);
}

}  // namespace memfit::arch
