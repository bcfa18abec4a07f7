#pragma once
// The kRouted MoE layout of a DecoderSpec row (decoder_spec.h): which layers are sparse, and the
// tensors of a sparse layer's mlp (router, routing bias, per-expert experts, shared experts).
// Kept apart from decoder_skeleton.cc so that the skeleton stays one screen per part.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "model/arch/builder_kit.h"
#include "model/arch/decoder_spec.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

// What the config says about the routed layers, read once by ReadRoutedMoe.
struct RoutedMoe {
  uint64_t expert_width = 0;   // moe_inter_key
  uint64_t shared_width = 0;   // expert_width x shared_count_key (0: no shared experts)
  uint64_t dense_width = 0;    // dense_inter_key, else intermediate_size
  uint64_t first_dense = 0;    // the first layers that are dense (without a per-layer list)
  const nlohmann::json* types = nullptr;  // "mlp_layer_types" or "is_moe_layer", checked
  bool types_are_bools = false;           // "is_moe_layer"
};

// Reads the keys the spec names into `r` and model.hp (num_experts, experts_per_token,
// moe_intermediate_size, num_shared_experts); errors name the key. A per-layer list must hold
// one valid entry per layer (`layers`).
void ReadRoutedMoe(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, uint64_t layers,
                   RoutedMoe& r);

// Whether layer `i` is sparse.
bool RoutedSparseLayer(const DecoderSpec& s, const RoutedMoe& r, uint64_t i);

// The sparse mlp of layer `layer` ("model.layers.3"), as the checkpoints name it. `mlp_bias`:
// the shared experts' bias (HYV3MLP is LlamaMLP, biased by "mlp_bias").
void EmitRoutedMoe(ModelBuilder& b, const Quantization& q, const std::string& layer,
                   const DecoderSpec& s, const RoutedMoe& r, uint64_t num_experts, bool mlp_bias);

}  // namespace memfit::arch
