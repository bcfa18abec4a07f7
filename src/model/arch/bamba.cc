// IBM Bamba (bamba: Bamba-9B). Each layer has one mixer, by "attn_layer_indices" (the listed
// layers are attention, every other layer Mamba-2; absent or null: every layer Mamba), then a
// gated MLP:
// - Mamba-2 (BambaMixer, mamba2_mixer.h): mamba.in_proj, conv1d, dt_bias, A_log, D, norm, out_proj.
// - attention: self_attn.q/k/v/o_proj (GQA, head_dim = H / heads unless "head_dim";
//   attention_bias false by default).
// - feed_forward (BambaMLP): gate_proj, up_proj [I, H], down_proj [H, I] (mlp_bias, false).
// - input_layernorm / pre_ff_layernorm per layer, model.final_layernorm; one non-persistent
//   model.rotary_emb.inv_freq [int(head_dim x partial_rotary_factor) / 2] (factor 0.5 by
//   default); lm_head untied by default.
// Source: transformers 4.48 models/bamba/{configuration,modeling}_bamba.py (BambaConfig's
// defaults and layers_block_type, BambaModel, BambaDecoderLayer, BambaAttention, BambaMLP).

#include <algorithm>

#include "model/arch/bamba.h"
#include "formats/hf_config_json.h"

#include "model/arch/decoder_kit.h"
#include "model/arch/mamba2_mixer.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

// Per layer: true for a Mamba layer (BambaConfig.layers_block_type). An index outside the layers
// is an error, not ignored: it means the config does not describe the model it names.
std::vector<bool> MambaLayers(ModelBuilder& b, const HfConfig& c, uint64_t layers) {
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

}  // namespace

Result<Model> BuildBamba(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  // BambaConfig's defaults: tie_word_embeddings false, no head_dim key (H / heads).
  ReadDecoderBasics(b, c, {});
  auto& hp = m.hp;
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  const bool attn_bias = Get(b, c.BoolOr("attention_bias", false));
  const bool mlp_bias = Get(b, c.BoolOr("mlp_bias", false));
  Mamba2Dims mixer = ReadMamba2(b, c);
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size;
  const std::vector<bool> mamba = MambaLayers(b, c, hp.num_layers);
  const bool any_mamba = std::find(mamba.begin(), mamba.end(), true) != mamba.end();
  if (any_mamba && !b.failed()) {
    if (auto st = ResolveMamba2(b, c, h, mixer); !st) return st.error();
  }
  const uint64_t rotary = RotaryDim(b, c, hp.head_dim, 0.5);
  if (b.failed()) return b.Finish();
  const uint64_t hd = hp.head_dim, nh = hp.num_attention_heads, nkv = hp.num_kv_heads,
                 inter = hp.intermediate_size;
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
    b.RmsNorm(l + ".pre_ff_layernorm", h);
    QLinear(b, q, l + ".feed_forward.gate_proj", h, inter, mlp_bias);
    QLinear(b, q, l + ".feed_forward.up_proj", h, inter, mlp_bias);
    QLinear(b, q, l + ".feed_forward.down_proj", inter, h, mlp_bias);
    info.intermediate_size = inter;
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.final_layernorm", h);
  b.Buffer("model.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
  return FinishDecoder(b, c, o, q);
}

}  // namespace memfit::arch
