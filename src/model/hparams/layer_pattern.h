#pragma once
// Which layer is which, from the config keys each family uses for its pattern: the token mixer
// and attention kind of every layer, and whether its MLP is dense, MoE, both or absent.

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/model.h"
#include "model/hparams/config_keys.h"

namespace memfit::hparams {

struct LayerKind {
  LayerMixer mixer = LayerMixer::kAttention;
  AttentionKind attention = AttentionKind::kFull;  // kNone for non-attention mixers
  bool swa_dims = false;      // MiMo-V2: the layer uses the swa_* head counts and dims
  bool global_dims = false;   // Gemma 4: the layer uses global_head_dim / global KV heads
  uint64_t compress_ratio = 0;   // DeepSeek-V4
  bool sparse_indexer = false;   // a DSA / block-sparse indexer keeps keys for this layer
  bool kv_shared = false;        // reuses an earlier layer's cache (Gemma 3n/4)
  bool pattern_sets_mlp = false;  // the mixer pattern also says what the MLP is (Nemotron-H)
  bool has_mlp = true;
  bool moe = false;
};

// The mixer and attention kind of each of `layers` layers. `model_type` resolves words the
// families use differently ("mamba" is Mamba-1 in Jamba, Mamba-2 in Granite-4; "linear_attention"
// is a gated delta-net in Qwen3.5 and lightning attention in MiniMax). Guesses go to `assumptions`.
std::vector<LayerKind> ReadLayerKinds(ConfigKeys& keys, uint64_t layers,
                                      const std::string& model_type,
                                      std::vector<std::string>& assumptions);

// Marks MoE layers (unless the mixer pattern already did): "moe_layer_freq" (int or list),
// "first_k_dense_replace", "decoder_sparse_step" + "mlp_only_layers", "interleave_moe_layer_step",
// "expert_layer_period"/"expert_layer_offset", "moe_layer_start_index"/"moe_layer_end_index".
void ReadMoeLayers(ConfigKeys& keys, uint64_t num_experts, std::vector<LayerKind>& kinds);

}  // namespace memfit::hparams
