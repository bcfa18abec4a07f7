// The Mamba-2 / attention hybrids whose layers each hold one mixer (transformers' BambaMixer,
// mamba2_mixer.h, or GQA attention: self_attn.q/k/v/o_proj, head_dim = H / heads unless
// "head_dim", "attention_bias" false by default), then a feed-forward; one builder, two rows:
// - bamba (IBM Bamba-9B): "attn_layer_indices" lists the attention layers (absent or null: every
//   layer Mamba); pre_ff_layernorm, then BambaMLP feed_forward.{gate,up,down}_proj ("mlp_bias");
//   model.final_layernorm; one non-persistent model.rotary_emb.inv_freq
//   [int(head_dim x partial_rotary_factor) / 2] (factor 0.5 by default).
//   Source: transformers 4.48 models/bamba/{configuration,modeling}_bamba.py (BambaConfig's
//   defaults and layers_block_type, BambaModel, BambaDecoderLayer, BambaAttention, BambaMLP).
// - granitemoehybrid (IBM Granite 4.0-H micro/tiny/small): "layer_types" (alias
//   "layers_block_type": "mamba" or "attention"; absent: every layer Mamba);
//   post_attention_layernorm, then granitemoeshared's feed-forward: block_sparse_moe (when
//   num_local_experts > 0) fused input_linear [E, 2I, H], output_linear [E, H, I], router.layer
//   [E, H], and shared_mlp.input_linear [2S, H], output_linear [H, S] always (S =
//   shared_intermediate_size; the dense "micro" models are this MLP alone); model.norm;
//   model.rotary_emb only when position_embedding_type is "rope" (Granite 4.0-H uses none).
//   Source: transformers models/granitemoehybrid/{configuration,modular}_granitemoehybrid.py,
//   granitemoeshared/modeling_granitemoeshared.py (MoE and shared MLP).
// Both configs: tie_word_embeddings false, no head_dim key by default.

#include <algorithm>

#include "formats/hf_config_json.h"
#include "model/arch/bamba.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/mamba2_mixer.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

// Bamba, per layer: true for a Mamba layer (BambaConfig.layers_block_type). An index outside the
// layers is an error, not ignored: it means the config does not describe the model it names.
std::vector<bool> BambaMambaLayers(ModelBuilder& b, const HfConfig& c, uint64_t layers) {
  std::vector<bool> out(layers, true);
  auto it = c.raw().find("attn_layer_indices");
  if (it == c.raw().end() || it->is_null()) return out;
  if (!it->is_array()) {
    b.Fail(MakeError("{}: \"attn_layer_indices\" must be a list of layer indices", c.where()));
    return {};
  }
  for (size_t k = 0; k < it->size(); ++k) {
    const auto& v = (*it)[k];
    // A number parsed from JSON text is unsigned when non-negative; one set in code is signed.
    if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
        static_cast<uint64_t>(v.get<int64_t>()) >= layers) {
      b.Fail(MakeError("{}: \"attn_layer_indices\"[{}] must be a layer index below {}", c.where(),
                       k, layers));
      return {};
    }
    out[static_cast<uint64_t>(v.get<int64_t>())] = false;
  }
  return out;
}

// Granite 4.0-H, per layer: true for a Mamba layer. Every layer Mamba when the config lists none.
std::vector<bool> GraniteMambaLayers(ModelBuilder& b, const HfConfig& c, uint64_t layers) {
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

// granitemoeshared's experts (GraniteMoeHybridConfig's defaults: 8 experts, 2 per token, I 11008)
// and shared MLP (S 1024) into hp.
void ReadGraniteFfn(ModelBuilder& b, const HfConfig& c, uint64_t experts, uint64_t shared) {
  auto& hp = b.model().hp;
  if (experts > 0) {
    hp.num_experts = experts;
    hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", 2));
    hp.moe_intermediate_size = Get(b, c.UintOr("intermediate_size", 11008));
  }
  hp.num_shared_experts = experts > 0 && shared > 0 ? 1 : 0;
  hp.intermediate_size = experts > 0 ? hp.moe_intermediate_size : shared;
  hp.shared_expert_intermediate_size = shared;
}

Result<Model> BuildMamba2Hybrid(const HfConfig& c, const BuildOptions& o, bool granite) {
  ModelBuilder b(c);
  Model& m = b.model();
  ReadDecoderBasics(b, c, {.need_intermediate = !granite});
  auto& hp = m.hp;
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  const bool attn_bias = Get(b, c.BoolOr("attention_bias", false));
  const uint64_t experts = granite ? Get(b, c.UintOr("num_local_experts", 8)) : 0;
  const uint64_t shared = granite ? Get(b, c.UintOr("shared_intermediate_size", 1024)) : 0;
  const bool mlp_bias = !granite && Get(b, c.BoolOr("mlp_bias", false));
  Mamba2Dims mixer = ReadMamba2(b, c);
  bool rope = !granite;
  if (granite) {
    auto pe = c.raw().find("position_embedding_type");  // None / "nope" / "rope"
    rope = pe != c.raw().end() && pe->is_string() && *pe == "rope";
    ReadGraniteFfn(b, c, experts, shared);
  }
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size;
  const std::vector<bool> mamba = granite ? GraniteMambaLayers(b, c, hp.num_layers)
                                          : BambaMambaLayers(b, c, hp.num_layers);
  const bool any_mamba = std::find(mamba.begin(), mamba.end(), true) != mamba.end();
  if (any_mamba && !b.failed()) {
    if (auto st = ResolveMamba2(b, c, h, mixer); !st) return st.error();
  }
  const uint64_t rotary = granite ? hp.head_dim : RotaryDim(b, c, hp.head_dim, 0.5);
  if (b.failed()) return b.Finish();
  const uint64_t hd = hp.head_dim, nh = hp.num_attention_heads, nkv = hp.num_kv_heads;
  const uint64_t inter = granite ? hp.moe_intermediate_size : hp.intermediate_size;
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
    if (!granite) {
      b.RmsNorm(l + ".pre_ff_layernorm", h);
      QGatedMlp(b, q, l + ".feed_forward", h, inter, mlp_bias);
      info.intermediate_size = inter;
    } else {
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
    }
    hp.layers.push_back(info);
  }
  b.RmsNorm(granite ? "model.norm" : "model.final_layernorm", h);
  if (rope) b.Buffer("model.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
  return FinishDecoder(b, c, o, q);
}

}  // namespace

Result<Model> BuildBamba(const HfConfig& c, const BuildOptions& o) {
  return BuildMamba2Hybrid(c, o, false);
}

Result<Model> BuildGraniteMoeHybrid(const HfConfig& c, const BuildOptions& o) {
  return BuildMamba2Hybrid(c, o, true);
}

}  // namespace memfit::arch
