#pragma once
// The per-layer lists of the hybrid DecoderSpec rows (issue 30), read and checked once from
// config.json and then asked per layer by the skeleton (decoder_skeleton.cc): which layers are
// lightning attention (MiniMax-01 / M1), each layer's query-head count and dense or sparse MLP
// (Laguna). Each list is kept as a pointer into the config's JSON, so a hostile layer count
// allocates nothing here; every entry up to num_hidden_layers is checked before it is used.

#include <cstdint>
#include <string>
#include <unordered_set>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/decoder_spec.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

// `key` as a JSON array of at least `layers` entries, each passing `ok` (`expected` says what an
// entry must be); nullptr when absent or null. A malformed list fails `b` naming the key and the
// entry.
template <typename Ok>
const nlohmann::json* CheckedList(ModelBuilder& b, const HfConfig& c, std::string_view key,
                                  uint64_t layers, std::string_view expected, Ok ok) {
  const auto it = c.raw().find(key);
  if (it == c.raw().end() || it->is_null() || b.failed()) return nullptr;
  if (!it->is_array() || it->size() < layers) {
    b.Fail(
        MakeError("{}: \"{}\" must list one entry per layer ({} layers)", c.where(), key, layers));
    return nullptr;
  }
  for (uint64_t i = 0; i < layers; ++i) {  // the list holds at least this many
    if (!ok((*it)[i])) {
      b.Fail(MakeError("{}: \"{}\"[{}] must be {}", c.where(), key, i, expected));
      return nullptr;
    }
  }
  return &*it;
}

// "mlp_only_layers" (Qwen MoE configs: the layers that keep a dense MLP), empty when absent; an
// entry that is not a layer index fails `b` naming the key.
std::unordered_set<uint64_t> MlpOnlyLayers(ModelBuilder& b, const HfConfig& c);

class LayerKinds {
 public:
  // Reads the lists and widths `s` needs (after the basics and the MoE keys); failures go to `b`.
  void Read(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s);

  bool IsLightning(uint64_t i) const;  // a lightning attention layer (Lightning)
  uint64_t Heads(uint64_t i) const;    // query heads of layer i (heads_per_layer_key)
  bool Sparse(uint64_t i) const;       // MoeLayout::kLaguna: "mlp_layer_types"[i] is "sparse"
  bool IsDeltaNet(uint64_t i) const;   // a gated DeltaNet layer (DeltaNet)

  uint64_t rotary_dim = 0;  // rotary_dim_key, else the rotary_factor of head_dim, else head_dim
  uint64_t block_size = 0;  // Lightning::kMiniMax: "block_size" (default 256)
  uint64_t shared_m1 = 0;   // Lightning::kMiniMaxM1: "shared_intermediate_size"
  // AttnGate::kLaguna: g_proj outputs per head ("gating": true / "per-head" 1, "per-element"
  // head_dim, false 0) and whether sliding layers keep a learned sink per head.
  uint64_t gate_per_head = 0;
  bool sinks = false;
  // DeltaNet::kOlmoHybrid: key/value heads and head dims, conv kernel.
  uint64_t nk = 0, nv = 0, dk = 0, dv = 0, conv_kernel = 0;

 private:
  void ReadDeltaNet(ModelBuilder& b, const HfConfig& c);

  Lightning lightning_kind_ = Lightning::kNone;
  bool delta_net_ = false;
  uint64_t default_heads_ = 0, layers_ = 0;
  const nlohmann::json* lightning_ = nullptr;    // "attn_type_list" / "layer_types"
  const nlohmann::json* heads_ = nullptr;        // "num_attention_heads_per_layer"
  const nlohmann::json* mlp_types_ = nullptr;    // "mlp_layer_types"
  const nlohmann::json* delta_types_ = nullptr;  // "layer_types" (linear / full)
};

// A lightning attention module `kind` under layer path `l` (after its input norm), in the order
// its class registers the tensors; returns the layer's LayerInfo (a [heads, head_dim, head_dim]
// state, no KV cache).
LayerInfo EmitLightning(ModelBuilder& b, const Quantization& q, const std::string& l,
                        Lightning kind, const LayerKinds& k);

// DeltaNet::kOlmoHybrid's linear_attn module under layer path `l` (after its input norm), in the
// order OlmoHybridGatedDeltaNet registers the tensors; returns the layer's LayerInfo (conv and
// recurrent state, no KV cache).
LayerInfo EmitDeltaNet(ModelBuilder& b, const Quantization& q, const std::string& l,
                       const LayerKinds& k);

// Rope::kPerLayerType (LagunaRotaryEmbedding, a Gemma3RotaryEmbedding): for each layer type in
// "layer_types", non-persistent float32 model.rotary_emb.<type>_inv_freq and
// <type>_original_inv_freq of int(head_dim x rope_parameters[type].partial_rotary_factor) / 2.
void PerLayerTypeRotary(ModelBuilder& b, const HfConfig& c, uint64_t head_dim);

}  // namespace memfit::arch
