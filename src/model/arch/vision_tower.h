#pragma once
// The vision towers as one table: a VisionTowerSpec row names the config keys of a tower's sizes
// (with its config class's defaults), how its position table is sized, and its tensors (the
// embeddings, each encoder layer, after the layers) in checkpoint order; EmitVisionTower builds
// any row, whose `extra` hook emits what a list cannot say (a pooling head, a patch merger).

#include <cstdint>
#include <string>
#include <vector>

#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

// A size read from the vision config: `key` (else `alias`), else `fallback`.
inline constexpr uint64_t kRequired = ~uint64_t{0};    // fallback: the key must be present
inline constexpr uint64_t kTextWidth = kRequired - 1;  // fallback: the text model's hidden size
struct VisionKey {
  const char* key = nullptr;  // nullptr: not read (0)
  uint64_t fallback = 0;
  const char* alias = nullptr;
};

// A row's tensors, named <prefix>.<name> (a layer's <prefix>.<layers>.N.<name>), sized by H the
// tower's width, I its MLP width, A its attention width (heads x head_dim), C channels, P the patch
// (T the temporal patch of a video tower), N the position table's rows.
enum class VisionOp : uint8_t {
  kClassEmbedding,  // Param [H]
  kClassToken,      // Param [1, 1, H]
  kPatchConv,       // Conv2d(C, H, P), or Conv3d(C, H, [T, P, P]) when the row reads T
  kPatchLinear,     // Linear(C x P^2, H)
  kPositionTable,   // Embedding [N, H]
  kPositionParam,   // Param [1, N, H]
  kPositionIds,     // the non-persistent int64 buffer [1, N]
  kNorm,            // the row's norm over H
  kQ,               // Linear(H, A); likewise kK, kV
  kK,
  kV,
  kQkv,       // Linear(H, 3A)
  kOut,       // Linear(A, H)
  kFc1,       // Linear(H, I)
  kFc2,       // Linear(I, H)
  kGatedMlp,  // <name>.{gate,up}_proj (H -> I), <name>.down_proj (I -> H)
  kGate,      // Param [1]
  kRotary2d,  // float32 buffer [N, head_dim] (Pixtral's 2D rotary table)
  kRotary,    // float32 buffer [ceil(head_dim / 4)]: inv_freq of a rotary table over head_dim / 2
  kExtra,     // the row's `extra` hook
};
enum class VisionBias : uint8_t { kNone, kBias, kConfig };  // kConfig: the row's bias_key
// Whether an item biased `bias` has one, `config` being the row's bias key.
inline bool HasBias(VisionBias bias, bool config) {
  return bias == VisionBias::kBias || (bias == VisionBias::kConfig && config);
}
struct VisionItem {
  VisionOp op;
  const char* name = "";
  VisionBias bias = VisionBias::kNone;
};

// How many rows the position table holds (N).
enum class VisionPositions : uint8_t {
  kNone,             // not read
  kPatches,          // image_size / patch_size squared, each an int or [h, w] (ImagePatches)
  kPatchesAndClass,  // kPatches + 1, for the class embedding
  kSide,             // (image_size / patch_size)^2, patch_size in 1..image_size (Pixtral)
  kGrid,             // (image_size / patch_size)^2, patch, merge and temporal sizes not zero
  kKey,              // the row's position_key
};

// A tower's sizes as read from its config.
struct VisionDims {
  uint64_t hidden = 0, depth = 0, heads = 0, head_dim = 0, intermediate = 0, attention = 0;
  uint64_t channels = 0, patch = 0, temporal = 0, positions = 0, out = 0, merge = 0;
  bool bias = false;  // the row's bias_key
};

struct VisionTowerSpec;
// What a row's lists cannot say, emitted at its kExtra item under the tower's `prefix`; linears go
// through `q` (QLinear).
using VisionExtraFn = void (*)(ModelBuilder& b, const HfConfig& vision, const VisionTowerSpec& s,
                               const VisionDims& d, const std::string& prefix,
                               const Quantization& q);

struct VisionTowerSpec {
  VisionKey hidden{"hidden_size", 768};
  VisionKey depth{"num_hidden_layers", 12};
  VisionKey heads{"num_attention_heads", 12};
  VisionKey intermediate{"intermediate_size", 3072};
  VisionKey mlp_ratio{};  // when set: I = H x mlp_ratio, intermediate not read
  VisionKey head_dim{};   // when set and not null in the config: head_dim, else H / heads
  VisionKey channels{"num_channels", 3};
  VisionKey patch{"patch_size", 16};
  VisionKey image{"image_size", 224};
  VisionKey temporal{};  // temporal_patch_size of a Conv3d patch embedding
  VisionKey merge{};     // spatial_merge_size
  VisionKey out{};       // the width the tower hands to the text model
  VisionPositions positions = VisionPositions::kPatches;
  VisionKey position_key{};        // VisionPositions::kKey's
  const char* bias_key = nullptr;  // VisionBias::kConfig's key
  bool bias_default = false;
  bool rms_norm = false;  // kNorm is an RMSNorm, else a LayerNorm
  std::vector<VisionItem> embeddings = {};
  const char* layers = "encoder.layers";
  std::vector<VisionItem> layer = {};
  std::vector<VisionItem> tail = {};  // after the layers
  VisionExtraFn extra = nullptr;
};

// `spec`'s sizes as read from `vision` (all zero after an error, recorded in `b`); `text_width`
// is the kTextWidth fallback.
VisionDims ReadVisionDims(ModelBuilder& b, const HfConfig& vision, const VisionTowerSpec& spec,
                          uint64_t text_width = 0);
// Reads the sizes and emits the tower under `prefix`, its linears quantized by `q` (none when
// null); returns the sizes (zero after an error, recorded in `b`).
VisionDims EmitVisionTower(ModelBuilder& b, const HfConfig& vision, const VisionTowerSpec& spec,
                           const std::string& prefix, uint64_t text_width = 0,
                           const Quantization* q = nullptr);
// `items` of `spec` under `prefix` with the sizes `d` (also a text tower sharing a row's layer).
void EmitVisionItems(ModelBuilder& b, const HfConfig& vision, const VisionTowerSpec& spec,
                     const VisionDims& d, const std::vector<VisionItem>& items,
                     const std::string& prefix, const Quantization& q);

// An encoder's hp from its tower's sizes: widths, heads (as KV heads), positions, LayerNorm, one
// layer without a KV cache per encoder layer (ViT, timm's ViT, CLIP's text tower).
void SetTowerHp(Hyperparameters& hp, const VisionDims& d);

// The rows shared by several builders (vision_tower.cc); a row one builder uses lives beside it.
extern const VisionTowerSpec kClipVisionTower, kIdeficsVisionTower, kSiglipVisionTower,
    kSiglip2VisionTower, kIdefics2VisionTower, kIdefics3VisionTower, kVitTower, kTimmVitTower,
    kPixtralVisionTower;

}  // namespace memfit::arch
