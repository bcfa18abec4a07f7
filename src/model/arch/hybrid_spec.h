#pragma once
// The state-space and hybrid decoders as data (issue 30): one HybridSpec row per model_type
// (hybrid_families.cc, each citing its source) read by one skeleton (hybrid_skeleton.cc). A layer
// is a token mixer -- attention, a Mamba-1 or Mamba-2 SSM, a short convolution, the SSM and
// attention side by side, or (Nemotron-H) a lone MLP or MoE block -- between its norms, then a
// feed-forward: <prefix>.<embed>; <prefix>.layers.N.{<in_norm>, <mixer>.*, <ff_norm>,
// feed_forward.*}; <prefix>.<final_norm>; the rotary inv_freq buffer; the task head.
// The mixers are transformers' own (sources: models/mamba/modeling_mamba.py MambaMixer,
// falcon_mamba/modular_falcon_mamba.py, jamba/modular_jamba.py JambaMambaMixer,
// bamba/modeling_bamba.py BambaMixer, lfm2/modular_lfm2.py Lfm2ShortConv):
// - Mamba-1: in_proj [2 d_inner, H], depthwise conv1d [d_inner, 1, kernel], x_proj [dt_rank +
//   2 d_state, d_inner], dt_proj [d_inner, dt_rank] + bias, A_log [d_inner, d_state], D, out_proj;
//   they differ only in what normalizes dt, B and C (Mamba1Norms).
// - Mamba-2: in_proj [d_inner + conv_dim + heads, H] (conv_dim = d_inner + 2 groups d_state),
//   conv1d [conv_dim, 1, kernel], dt_bias, A_log, D [heads], gated RMSNorm [d_inner], out_proj.
// - short convolution: conv.in_proj [3 H, H], conv.conv [H, 1, L], conv.out_proj [H, H].
// Each layer's LayerInfo holds its cache (KV, or the conv and SSM states in the model dtype unless
// the row names a cache-dtype key). What a row cannot say is a hook beside it (read, after_head).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memfit/architecture.h"
#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

enum class Mamba1Norms : uint8_t {
  kNone,           // MambaMixer: dt, B and C are views of x_proj's output
  kFalconBuffers,  // FalconMambaMixer: the kernels' all-ones b_c_rms [d_state] and dt_rms
                   // [d_inner] as non-persistent buffers
  kJamba,          // JambaMambaMixer: dt_layernorm [dt_rank], b_layernorm, c_layernorm [d_state]
};

// A family's Mamba-1 keys and its config class's defaults (JambaConfig's unless set).
struct Mamba1Keys {
  std::string_view inner = "";               // d_inner's own key when present (wins over expand)
  std::string_view expand = "mamba_expand";  // else int(expand x H); expand 2 by default
  std::string_view state = "mamba_d_state";  // 16 by default
  std::string_view kernel = "mamba_d_conv";  // 4 by default
  std::string_view rank = "mamba_dt_rank";   // an integer, or "auto" / absent: ceil(H / 16)
  std::string_view conv_bias = "mamba_conv_bias";  // true by default
  std::string_view proj_bias = "mamba_proj_bias";
  bool proj_bias_default = false;
  Mamba1Norms norms = Mamba1Norms::kJamba;
};

// A family's Mamba-2 keys and its config class's defaults (BambaConfig's unless set).
struct Mamba2Keys {
  // d_inner = heads x head_dim; else int(expand x H), which heads x head_dim must equal
  // (head_dim "auto" or absent: d_inner / heads, which must divide).
  bool heads_times_dim = false;
  std::string_view heads = "mamba_n_heads";
  uint64_t heads_default = 128;  // 0: required when a layer is Mamba
  std::string_view head_dim = "mamba_d_head";
  uint64_t head_dim_default = 0;  // 0: "auto"
  std::string_view groups = "mamba_n_groups";
  uint64_t groups_default = 1;
  std::string_view state = "mamba_d_state";
  uint64_t state_default = 256;
  std::string_view kernel = "mamba_d_conv";        // 4 by default
  std::string_view expand = "mamba_expand";        // 2 by default
  std::string_view conv_bias = "mamba_conv_bias";  // true by default
  std::string_view proj_bias = "mamba_proj_bias";  // false by default
  std::string_view out_bias = "";                  // out_proj's bias ("": the proj-bias key's)
  // The SSD chunk of transformers' torch_forward scan (an assumption line when absent).
  std::string_view chunk = "mamba_chunk_size";
  std::string_view chunk_alias = "";  // read when `chunk` is absent
  uint64_t chunk_default = 256;
  std::string_view cache_dtype = "";  // "float32" there keeps the SSM state in float32
};

struct Mamba1Dims {
  uint64_t d_inner = 0, d_state = 0, kernel = 0, dt_rank = 0;
  bool conv_bias = true, proj_bias = false;
};

struct Mamba2Dims {
  uint64_t heads = 0, head_dim = 0, groups = 0, d_state = 0, kernel = 0;
  uint64_t d_inner = 0, conv = 0;  // derived
  uint64_t d_ssm = 0;              // Falcon-H1's "mamba_d_ssm": the inner width when non-zero
  bool conv_bias = true, proj_bias = false;
  bool gated_norm = true;   // mamba.norm [d_inner] (Falcon-H1: only with "mamba_rms_norm")
  bool out_bias = false;    // out_proj's bias: the proj-bias key (Falcon-H1: its own key)
  uint32_t state_bits = 0;  // 32: the cache-dtype key says float32; else the model's
};

// What decides each layer's token mixer.
enum class LayerRule : uint8_t {
  kAllSsm,       // every layer the SSM
  kBoth,         // every layer the SSM and attention side by side
  kAttnIndices,  // "attn_layer_indices" lists the attention layers (absent or null: none)
  kMambaTypes,   // "layer_types" (alias "layers_block_type"): "mamba" / "attention" (absent: SSM)
  kConvTypes,    // "layer_types" "full_attention" / "conv", else "full_attn_idxs" (attention)
  kHook,         // the row's read hook fills HybridPlan::blocks
};

enum class SsmKind : uint8_t { kMamba1, kMamba2, kShortConv };

enum class HybridFfn : uint8_t {
  kNone,     // none (pure SSMs; Nemotron-H's MLP and MoE are blocks of their own)
  kMlp,      // feed_forward: an MLP of `mlp` names, or on MoE layers the routed experts
  kGranite,  // granitemoeshared: block_sparse_moe (fused experts, router.layer) + shared_mlp
};

// An MLP's projections: gate ("" none), up (in -> width), down (width -> in).
struct MlpNames {
  std::string_view gate = "gate_proj", up = "up_proj", down = "down_proj";
};

enum class HybridRotary : uint8_t {
  kNone,
  kHeadDim,        // inv_freq [head_dim / 2]
  kPartial,        // inv_freq [int(head_dim x partial_rotary_factor) / 2], factor 0.5 by default
  kWhenRopeNamed,  // kHeadDim only when "position_embedding_type" is "rope"
};

// One layer's token mixer.
enum class HybridBlock : uint8_t { kSsm, kAttention, kBoth, kMlp, kMoe };

// What the skeleton reads from one config.
struct HybridPlan {
  std::vector<HybridBlock> blocks;  // per layer
  std::vector<bool> moe;            // per layer: routed experts (empty: none)
  Mamba1Dims m1;
  Mamba2Dims m2;
  uint64_t conv_kernel = 0;  // short conv: "conv_L_cache"
  bool conv_bias = false;
  bool attn_bias = false, mlp_bias = false;
  uint64_t q_width = 0, kv_width = 0;
  uint64_t experts = 0, expert_width = 0, shared = 0, latent = 0;
  bool expert_bias = false;  // the row's router_bias buffer
};

struct HybridSpec;
// A row's hook: reads what the row's fields cannot say (into b.model().hp and `p`).
using HybridRead = void (*)(ModelBuilder& b, const HfConfig& c, const HybridSpec& s, HybridPlan& p);
// A row's hook after the task head (Nemotron-H's stored MTP steps and assumption).
using HybridAfterHead = void (*)(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                                 const HybridSpec& s, const HybridPlan& p);

struct HybridSpec {
  // ReadDecoderBasics (attention heads, head_dim, intermediate_size, ...); else vocab, hidden,
  // `layers_key` and the activation only (pure SSMs; Nemotron-H's hook reads the rest).
  bool decoder_basics = true;
  bool tie_default = false;
  bool need_intermediate = true;
  std::string_view act_key = "hidden_act";
  std::string_view act_default = "silu";
  std::string_view layers_key = "num_hidden_layers";  // "": the read hook counts the layers
  std::string_view prefix = "model";
  std::string_view embed = "embed_tokens";
  std::string_view final_norm = "final_layernorm";
  std::string_view in_norm = "input_layernorm";
  std::string_view ff_norm = "pre_ff_layernorm";
  bool norms_last = false;  // both norms after the feed-forward
  LayerRule layers = LayerRule::kAllSsm;
  SsmKind ssm = SsmKind::kMamba2;
  std::string_view ssm_name = "mamba";
  Mamba1Keys m1{};
  Mamba2Keys m2{};
  bool mup_vector = false;  // Falcon-H1's mamba.mup_vector [1, 1, 2 d_inner + 2 G N + heads]
  std::string_view attn_name = "self_attn";
  std::string_view o_proj = "o_proj";
  std::string_view attn_bias_key = "attention_bias";  // "" no bias
  bool qk_layernorm = false;                          // q_layernorm / k_layernorm [head_dim]
  HybridFfn ffn = HybridFfn::kMlp;
  MlpNames mlp{};
  std::string_view mlp_bias_key = "mlp_bias";  // "" no bias
  // The routed experts: router [E, H] (QLinear when quantized), a persistent float32 [E] bias
  // buffer when HybridPlan::expert_bias, experts.N MLPs of `mlp` names.
  std::string_view router = "router";
  bool router_quantized = false;
  std::string_view router_bias = "";
  HybridRotary rotary = HybridRotary::kNone;
  std::string_view rotary_module = "rotary_emb";
  HybridRead read = nullptr;
  HybridAfterHead after_head = nullptr;
};

// Builds the model `spec` describes from `config` (hybrid_skeleton.cc).
Result<Model> BuildHybrid(const HfConfig& config, const BuildOptions& options,
                          const HybridSpec& spec);

// One layer under `l`: its norms, the mixer `block` and the feed-forward (`moe`: routed experts).
LayerInfo EmitHybridLayer(ModelBuilder& b, const Quantization& q, const HybridSpec& s,
                          const HybridPlan& p, const std::string& l, HybridBlock block, bool moe);

// Per layer: the flag of its name in the list at `key` (one name of `types` per layer); errors go
// to `b` ("layer_types", "layers_block_type").
std::vector<bool> TypedLayers(ModelBuilder& b, const HfConfig& c, std::string_view key,
                              uint64_t layers,
                              std::span<const std::pair<std::string_view, bool>> types);

// The registry rows of every HybridSpec and QwenHybridSpec family (hybrid_families.cc).
const std::vector<ArchitectureBuilder>& HybridFamilyBuilders();

}  // namespace memfit::arch
