#pragma once
// A text model's layers one by one: each layer's LayerInfo from its kind (layer_pattern.h) and
// the model-wide fields (read_hparams.cc reads those), its recurrent state, and the per-layer
// lists and block configs that override the model-wide values afterwards. Used by
// ReadTextHyperparameters (read_hparams.cc) only.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/model.h"
#include "model/hparams/config_keys.h"
#include "model/hparams/layer_pattern.h"

namespace memfit::hparams {

// What a layer's kind selects beyond the model-wide shape: windows, indexer width, the alternative
// head layouts (MiMo-V2's sliding layers, Gemma 4's global layers), DeepSeek-V4's shared K=V.
struct LayerVariants {
  uint64_t window = 0;            // "sliding_window"
  uint64_t chunk = 0;             // "attention_chunk_size"
  uint64_t index_dim = 0;         // "index_head_dim"
  uint64_t sparse_index_dim = 0;  // "sparse_attention_config" "sparse_index_dim"
  uint64_t swa_heads = 0, swa_kv = 0, swa_hd = 0, swa_vd = 0;
  uint64_t global_hd = 0, global_kv = 0;
  uint64_t v_dim = 0;
  bool shared_kv_latent = false;  // "compress_ratios"
  uint64_t dense_width = 0;       // ReadMlp's
};

// One layer of kind `k`; a recurrent layer's state is read from `keys` (its guesses go to
// `assumptions`).
LayerInfo LayerFor(const LayerKind& k, const LayerVariants& v, const Hyperparameters& hp,
                   ConfigKeys& keys, std::vector<std::string>& assumptions);

// A per-layer head list over the layers ReadTextHyperparameters built: one entry per layer;
// attention layers take theirs. A list of the wrong length is an error in `keys`.
void ApplyHeadList(ConfigKeys& keys, Hyperparameters& hp,
                   std::initializer_list<std::string_view> names, uint64_t LayerInfo::*field);

// Mamba-2 layers: d_state, groups and the SSD chunk of transformers' torch_forward scan
// (memfit/model.h ssm_chunk_size). The chunk's key and default per config class:
// Mamba2Config / Zamba2Config "chunk_size" 256, NemotronHConfig "chunk_size" 128 (alias
// "mamba_chunk_size"), BambaConfig / GraniteMoeHybridConfig / FalconH1Config "mamba_chunk_size"
// 256. Absent: the class's default, said as an assumption. Nothing without a Mamba-2 layer.
void ReadMamba2Chunk(ConfigKeys& keys, Hyperparameters& hp, std::vector<std::string>& assumptions);

// DeciLM / Nemotron-NAS ("block_configs", one per layer): attention with its own KV-head
// grouping or none ("no_op"), an FFN of width find_multiple(int(2 * ffn_mult * hidden / 3), 256)
// or none (transformers-compatible modeling_decilm.py, _ffn_mult_to_intermediate_size).
void ApplyDeciBlockConfigs(ConfigKeys& keys, Hyperparameters& hp,
                           std::vector<std::string>& assumptions);

}  // namespace memfit::hparams
