#pragma once
// The Qwen gated-DeltaNet hybrids as rows of one builder: Qwen3-Next and Qwen3.5 (qwen_hybrid.cc)
// and Qwen4-Exp (qwen4_exp.cc) share the config reading, the gated delta-net and gated attention
// mixers, the Qwen MoE block, the vision composite and the stored-only MTP tail. QwenMoeBlock and
// QwenTextConfig also serve qwen_vision.cc (the Qwen-VL rows) and glm4v.cc.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

// How a checkpoint stores a layer's routed experts.
enum class ExpertLayout : uint8_t {
  kPerExpert,     // mlp.experts.N.{gate,up,down}_proj.weight (Qwen2-MoE, Qwen3-MoE, Qwen3-Next)
  kFused,         // mlp.experts.gate_up_proj [E, 2I, H], mlp.experts.down_proj [E, H, I] (Qwen3.5)
  kFusedInFirst,  // mlp.experts.gate_up_proj [E, H, 2I], down_proj [E, I, H] (Qwen3-VL)
};

// A Qwen MoE block under `l` (a layer path): router mlp.gate [E, H], the routed experts in
// `layout`, and when shared > 0 mlp.shared_expert.{gate,up,down}_proj of width `shared` with its
// sigmoid gate mlp.shared_expert_gate [1, H]. Quantized fused experts are stored per expert, as
// ModelOpt exports them (expert_kit.h).
void QwenMoeBlock(ModelBuilder& b, const Quantization& q, const std::string& l, uint64_t hidden,
                  uint64_t experts, uint64_t expert_width, uint64_t shared, ExpertLayout layout);

struct QwenHybridSpec;
// A row's text model under `prefix` from the text config (its basics and MoE sizes in hp
// already): fills hp and its LayerInfo, returns the MTP layers the checkpoint stores.
using QwenTextFn = uint64_t (*)(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                                const QwenHybridSpec& s, const std::string& prefix);
// A row's mtp.* tensors (`layers` > 0); BuildQwenHybrid marks them stored-only with a note.
using QwenMtpFn = void (*)(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                           const QwenHybridSpec& s, uint64_t layers);

// Qwen3-Next / Qwen3.5's text model and MTP module (qwen_hybrid.cc), Qwen4-Exp's (qwen4_exp.cc).
uint64_t EmitQwenHybridText(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                            const QwenHybridSpec& s, const std::string& prefix);
void EmitQwenMtp(ModelBuilder& b, const HfConfig& c, const Quantization& q, const QwenHybridSpec& s,
                 uint64_t layers);
uint64_t EmitQwen4ExpText(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                          const QwenHybridSpec& s, const std::string& prefix);
void EmitQwen4ExpMtp(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                     const QwenHybridSpec& s, uint64_t layers);

struct QwenHybridSpec {
  // "text_config" under model.language_model, the Qwen3-VL vision tower under model.visual and
  // lm_head at the top; else the text model under model.*.
  bool composite = false;
  bool task_head = false;     // TaskHead (Qwen3-Next), else QwenLmHead
  bool split_in_proj = true;  // Qwen3.5: in_proj_qkv/_z/_b/_a; Qwen3-Next: in_proj_qkvz/_ba
  ExpertLayout layout = ExpertLayout::kFused;  // decoder layers
  // Qwen3.5 stores linear_attn.A_log and linear_attn.norm.weight in float32 (vLLM PR #51836,
  // from the Qwen3.5-27B index; an assumption says so); Qwen3-Next in the model dtype.
  bool float32_gdn_params = true;
  uint64_t default_mtp_layers = 0;  // when the config names none
  // The defaults of "num_experts", "num_experts_per_tok", "moe_intermediate_size" and
  // "shared_expert_intermediate_size" (Qwen3-Next / 3.5: 0, no MoE).
  std::array<uint64_t, 4> moe_defaults{};
  QwenTextFn text = EmitQwenHybridText;
  QwenMtpFn mtp = EmitQwenMtp;
};

Result<Model> BuildQwenHybrid(const HfConfig& config, const BuildOptions& options,
                              const QwenHybridSpec& spec);

// The dimensions of a hybrid text config: full attention (h, nh, nkv, hd from b.model().hp,
// "attn_output_gate", "attention_bias") and the gated delta-net ("linear_*" keys).
struct QwenHybridDims {
  uint64_t h = 0, nh = 0, nkv = 0, hd = 0;              // full attention
  uint64_t nk = 0, nv = 0, dk = 0, dv = 0, kernel = 0;  // gated delta-net
  uint64_t inter = 0, experts = 0, expert_width = 0, shared = 0;
  bool output_gate = true, attn_bias = false;
};

// Reads and checks them (after BuildQwenHybrid filled b.model().hp); errors go to `b`.
QwenHybridDims ReadQwenHybridDims(ModelBuilder& b, const HfConfig& c);

// int(head_dim x partial_rotary_factor), the factor at the top level (Qwen3-Next) or in
// "rope_parameters" (Qwen3.5, Qwen4-Exp), 0.25 by default; outside (0, 1] is an error in `b`.
uint64_t QwenRotaryDim(ModelBuilder& b, const HfConfig& c, uint64_t head_dim);

// Per layer: true for a gated delta-net layer, by "layer_types" (`types`: each name and whether
// it is one), else every "full_attention_interval"-th layer (4 by default, not 0) is attention.
std::vector<bool> QwenLinearLayers(ModelBuilder& b, const HfConfig& c, uint64_t layers,
                                   std::span<const std::pair<std::string_view, bool>> types);

// One layer's token mixer under the layer path `l`: the gated delta-net linear_attn.* (`linear`:
// a recurrent LayerInfo with its conv and state dims) or the gated full attention self_attn.*
// with q_norm/k_norm (heads and head dims). No norms, no MLP: the caller adds them.
LayerInfo EmitQwenHybridMixer(ModelBuilder& b, const Quantization& q, const std::string& l,
                              const QwenHybridDims& d, const QwenHybridSpec& s, bool linear,
                              uint32_t state_bits);

// Copies the keys a nested text_config lacks from the top level (dtype, tie_word_embeddings) so
// that the text builders read one config. `where` names it in errors ("config.json: text_config").
Result<HfConfig> QwenTextConfig(const HfConfig& c);

}  // namespace memfit::arch
