// IBM Granite 4.0 hybrid (granitemoehybrid: granite-4.0-h-micro/-tiny/-small). Each layer has one
// mixer, by "layer_types" (alias "layers_block_type": "mamba" or "attention"; absent: every layer
// Mamba), then granitemoeshared's feed-forward:
// - Mamba-2 (BambaMixer, mamba2_mixer.h): mamba.in_proj, conv1d, dt_bias, A_log, D, norm, out_proj.
// - attention: self_attn.q/k/v/o_proj (GQA, head_dim = H / heads, attention_bias).
// - block_sparse_moe (when num_local_experts > 0): fused input_linear [E, 2I, H], output_linear
//   [E, H, I], router.layer [E, H]; shared_mlp.input_linear [2S, H], output_linear [H, S] always
//   (S = shared_intermediate_size; the dense "micro" models are this MLP alone).
// - input_layernorm / post_attention_layernorm; model.rotary_emb only when position_embedding_type
//   is "rope" (Granite 4.0-H uses none).
// Source: transformers models/granitemoehybrid/{configuration,modular}_granitemoehybrid.py (the
// config's defaults and derived mamba_d_head), bamba/modeling_bamba.py (BambaMixer),
// granitemoeshared/modeling_granitemoeshared.py (MoE and shared MLP).

#include <algorithm>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/mamba2_mixer.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

// Per layer: true for a Mamba layer. Every layer Mamba when the config lists none.
std::vector<bool> MambaLayers(ModelBuilder& b, const HfConfig& c, uint64_t layers) {
  const char* key = c.Has("layer_types") ? "layer_types" : "layers_block_type";
  auto it = c.raw().find(key);
  if (it == c.raw().end() || it->is_null()) return std::vector<bool>(layers, true);
  if (!it->is_array() || it->size() != layers) {
    b.Fail(MakeError("{}: \"{}\" must list one type per layer ({} layers)", c.where(), key, layers));
    return {};
  }
  std::vector<bool> out;
  for (uint64_t i = 0; i < layers; ++i) {
    const auto& v = (*it)[i];
    // The string itself is compared, not a json built from the literal (json's operator== over
    // every value type, which g++ 12 at -O3 reports as -Warray-bounds).
    const std::string* type = v.is_string() ? &v.get_ref<const std::string&>() : nullptr;
    if (!type || (*type != "mamba" && *type != "attention")) {
      b.Fail(MakeError("{}: \"{}\"[{}] must be \"mamba\" or \"attention\"", c.where(), key, i));
      return {};
    }
    out.push_back(*type == "mamba");
  }
  return out;
}

}  // namespace

Result<Model> BuildGraniteMoeHybrid(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  // GraniteMoeHybridConfig's defaults: no head_dim key (H / heads), tie_word_embeddings false.
  ReadDecoderBasics(b, c, {.need_intermediate = false});
  auto& hp = m.hp;
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  const bool attn_bias = Get(b, c.BoolOr("attention_bias", false));
  const uint64_t experts = Get(b, c.UintOr("num_local_experts", 8));
  const uint64_t shared = Get(b, c.UintOr("shared_intermediate_size", 1024));
  Mamba2Dims mixer = ReadMamba2(b, c);
  auto pe = c.raw().find("position_embedding_type");  // None / "nope" / "rope"
  const bool rope = pe != c.raw().end() && pe->is_string() && *pe == "rope";
  if (experts > 0) {
    hp.num_experts = experts;
    hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", 2));
    hp.moe_intermediate_size = Get(b, c.UintOr("intermediate_size", 11008));
  }
  hp.num_shared_experts = experts > 0 && shared > 0 ? 1 : 0;
  hp.intermediate_size = experts > 0 ? hp.moe_intermediate_size : shared;
  hp.shared_expert_intermediate_size = shared;
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size;
  const std::vector<bool> mamba = MambaLayers(b, c, hp.num_layers);
  const bool any_mamba = std::find(mamba.begin(), mamba.end(), true) != mamba.end();
  if (any_mamba && !b.failed()) {
    if (auto st = ResolveMamba2(b, c, h, mixer); !st) return st.error();
  }
  if (b.failed()) return b.Finish();
  const uint64_t hd = hp.head_dim, nh = hp.num_attention_heads, nkv = hp.num_kv_heads,
                 inter = hp.moe_intermediate_size;
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    b.RmsNorm(l + ".input_layernorm", h);
    LayerInfo info;
    if (mamba[i]) {
      info = EmitMamba2(b, q, l + ".mamba", h, mixer);
    } else {
      QLinear(b, q, l + ".self_attn.q_proj", h, nh * hd, attn_bias);
      QLinear(b, q, l + ".self_attn.k_proj", h, nkv * hd, attn_bias);
      QLinear(b, q, l + ".self_attn.v_proj", h, nkv * hd, attn_bias);
      QLinear(b, q, l + ".self_attn.o_proj", nh * hd, h, attn_bias);
      info = AttentionInfo(hp, false, 0);
    }
    b.RmsNorm(l + ".post_attention_layernorm", h);
    if (experts > 0) {
      // GraniteMoeParallelExperts keep all experts in one 3-D weight [E, out, in].
      b.Param(l + ".block_sparse_moe.input_linear.weight", {experts, 2 * inter, h});
      b.Param(l + ".block_sparse_moe.output_linear.weight", {experts, h, inter});
      b.Linear(l + ".block_sparse_moe.router.layer", h, experts, false);
      info.moe = true;
    } else {
      info.intermediate_size = shared;
    }
    b.Linear(l + ".shared_mlp.input_linear", h, 2 * shared, false);
    b.Linear(l + ".shared_mlp.output_linear", shared, h, false);
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.norm", h);
  if (rope) b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  return FinishDecoder(b, c, o, q);
}

}  // namespace memfit::arch
