#pragma once
// What the one DecoderSpec builder (BuildDecoder, decoder_skeleton.cc) reads from config.json
// before it emits a tensor: LlamaConfig's basics, which layers slide, and the switches and widths
// (biases, q/k norms, MoE layout, MTP layers, the per-layer lists) that shape the tensors beyond
// Hyperparameters. decoder_skeleton.cc emits the tensors from these.

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/decoder_layer_kinds.h"
#include "model/arch/decoder_spec.h"
#include "model/arch/quantization.h"
#include "model/arch/routed_moe.h"

namespace memfit::arch {

// Which layers use sliding-window attention, by the spec's SlidingRuleKind (decoder_spec.h).
// Asked per layer: the loop that asks stops at the builder's tensor cap, so a hostile layer
// count allocates nothing here.
class SlidingRule {
 public:
  // Reads the keys rule `s.sliding` needs; failures go to `b`.
  SlidingRule(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, uint64_t layers);

  uint64_t window() const { return window_; }

  // Whether layer `i` uses sliding-window attention.
  bool operator()(uint64_t i) const;

 private:
  void ReadSmolLm3(ModelBuilder& b, const HfConfig& c, uint64_t layers);
  void ReadExaone4(ModelBuilder& b, const HfConfig& c);

  SlidingRuleKind kind_;
  uint64_t layers_;
  uint64_t prefix_ = 0, prefix_every_ = 1;  // the dense prefix (DecoderSpec::prefix_key)
  uint64_t window_ = 0;
  uint64_t every_ = 1;  // the pattern, NoPE interval or max_window_layers
  bool use_sliding_ = false;
  std::vector<bool> types_;
  std::string letters_;
  const nlohmann::json* no_rope_ = nullptr;
};

// A count given as one integer for every layer or as a list of one per layer (hunyuan's MoE
// keys); the list is checked up to the layer count once and kept as a pointer into the JSON.
struct PerLayerCount {
  const nlohmann::json* list = nullptr;
  uint64_t value = 0;  // without a list
  uint64_t operator[](uint64_t i) const { return list ? (*list)[i].get<uint64_t>() : value; }
};

// The config's switches and widths that shape tensors beyond Hyperparameters.
struct SkeletonConfig {
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  bool qk_norm = false, qk_per_head = false, routing_bias = false, lm_bias = false;
  bool mxfp4 = false;       // MoeLayout::kGptOss: the experts stored as mxfp4 blocks and scales
  uint64_t cla_factor = 0;  // DecoderSpec::cla: "cla_share_factor" with "use_cla", else 0
  int64_t moe_first = 0, moe_last = 0;      // MoeLayout::kErnie: the sparse layers' index window
  std::unordered_set<uint64_t> moe_layers;  // MoeLayout::kStep: "moe_layers_enum"
  bool head_gate = false;                   // AttnGate::kHeadWise: "use_head_wise_attn_gate"
  uint64_t sliding_heads = 0;               // DecoderSpec::sliding_heads_key
  bool has_head_gate_key = false, has_sliding_heads_key = false;  // for Mtp::kStep's assumptions
  PerLayerCount experts, widths, shared_count;                    // MoeLayout::kHunYuan
  uint64_t shared = 0, sparse_step = 1, mtp_layers = 0;
  std::unordered_set<uint64_t> mlp_only;
  RoutedMoe routed{};
  LayerKinds kinds;  // the per-layer lists (decoder_layer_kinds.h)
};

// Reads `r` after the basics: the bias and q/k-norm switches, the MoE keys, the MTP layers and
// the per-layer lists (LayerKinds). Failures go to `b`.
void ReadSkeletonConfig(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s,
                        SkeletonConfig& r);

// After the quantization is read: MoeLayout::kGptOss's mxfp4 experts (r.mxfp4), their widths
// checked and a note saying how they are counted. Failures go to `b`.
void ReadFusedExperts(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s,
                      const Quantization& q, SkeletonConfig& r);

}  // namespace memfit::arch
