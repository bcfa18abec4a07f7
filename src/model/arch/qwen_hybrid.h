#pragma once
// Shared pieces of the Qwen builders: the Qwen3-Next / Qwen3.5 hybrid text model (gated delta-net
// linear attention layers between gated full-attention layers, dense or MoE MLPs, multi-token
// prediction layers) and Qwen MoE blocks in their per-expert or fused checkpoint layouts.
// Used by qwen3_next.cc (qwen3_next, qwen3_5), qwen3_vl.cc and qwen4_exp.cc.

#include <array>
#include <cstdint>
#include <string>

#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

// How a checkpoint stores a layer's routed experts.
enum class ExpertLayout : uint8_t {
  kPerExpert,      // mlp.experts.N.{gate,up,down}_proj.weight (Qwen2-MoE, Qwen3-MoE, Qwen3-Next)
  kFused,          // mlp.experts.gate_up_proj [E, 2I, H], mlp.experts.down_proj [E, H, I] (Qwen3.5)
  kFusedInFirst,   // mlp.experts.gate_up_proj [E, H, 2I], down_proj [E, I, H] (Qwen3-VL)
};

// A Qwen MoE block under `l` (a layer path): router mlp.gate [E, H], the routed experts in
// `layout`, and when shared > 0 mlp.shared_expert.{gate,up,down}_proj of width `shared` with its
// sigmoid gate mlp.shared_expert_gate [1, H]. Quantized fused experts are stored per expert, as
// ModelOpt exports them (expert_kit.h).
void QwenMoeBlock(ModelBuilder& b, const Quantization& q, const std::string& l, uint64_t hidden,
                  uint64_t experts, uint64_t expert_width, uint64_t shared, ExpertLayout layout);

struct QwenHybridSpec {
  std::string prefix = "model";    // text model path: "model" or "model.language_model"
  bool split_in_proj = false;      // Qwen3.5: in_proj_qkv/_z/_b/_a; Qwen3-Next: in_proj_qkvz/_ba
  ExpertLayout layout = ExpertLayout::kPerExpert;  // decoder layers (MTP layers: per expert)
  // Qwen3.5 stores linear_attn.A_log and linear_attn.norm.weight in float32 (vLLM PR #51836,
  // from the Qwen3.5-27B index); Qwen3-Next stores them in the model dtype.
  bool float32_gdn_params = false;
  uint64_t default_mtp_layers = 0;  // when the config names none
};

// The dimensions of a hybrid text config: full attention (h, nh, nkv, hd from b.model().hp,
// "attn_output_gate", "attention_bias") and the gated delta-net ("linear_*" keys).
struct QwenHybridDims {
  uint64_t h = 0, nh = 0, nkv = 0, hd = 0;              // full attention
  uint64_t nk = 0, nv = 0, dk = 0, dv = 0, kernel = 0;  // gated delta-net
  uint64_t inter = 0, experts = 0, expert_width = 0, shared = 0;
  bool output_gate = true, attn_bias = false;
};

// int(head_dim x partial_rotary_factor), the factor at the top level (Qwen3-Next) or in
// "rope_parameters" (Qwen3.5, Qwen4-Exp), 0.25 by default; outside (0, 1] is an error in `b`.
uint64_t QwenRotaryDim(ModelBuilder& b, const HfConfig& c, uint64_t head_dim);

// The text config's basics and MoE sizes into hp: "num_experts", "num_experts_per_tok",
// "moe_intermediate_size" and "shared_expert_intermediate_size" default to `moe_defaults` (in
// that order; Qwen3-Next / 3.5: 0, no MoE; Qwen4-Exp: its class's 512, 10, 512, 512).
void ReadQwenHybridBasics(ModelBuilder& b, const HfConfig& c,
                          const std::array<uint64_t, 4>& moe_defaults);

// lm_head, tied to `embed` or quantized when the checkpoint's quantization covers it
// (nvidia/Qwen3.6-35B-A3B-NVFP4 lists "lm_head" as W4A16_NVFP4; vLLM issue #44081).
void QwenLmHead(ModelBuilder& b, const Quantization& q, const std::string& embed);

// What a Qwen3-VL-style composite (Qwen3.5, Qwen4-Exp) adds once its language model is under
// model.language_model: hp.text_config_key from `top`, the Qwen3-VL vision tower of `vision`
// under model.visual (component vision_tower, quantized under `q`), then QwenLmHead on
// model.language_model.embed_tokens (component language_model).
void EmitQwenVlTowerAndHead(ModelBuilder& b, const HfConfig& top, const HfConfig& vision,
                            const Quantization& q);

// Reads and checks them (after ReadDecoderBasics filled b.model().hp); errors go to `b`.
QwenHybridDims ReadQwenHybridDims(ModelBuilder& b, const HfConfig& c);

// One layer's token mixer under the layer path `l`: the gated delta-net linear_attn.* (`linear`:
// a recurrent LayerInfo with its conv and state dims) or the gated full attention self_attn.*
// with q_norm/k_norm (heads and head dims). No norms, no MLP: the caller adds them.
LayerInfo EmitQwenHybridMixer(ModelBuilder& b, const Quantization& q, const std::string& l,
                              const QwenHybridDims& d, const QwenHybridSpec& s, bool linear,
                              uint32_t state_bits);

// Reads the hybrid text config `c` into b.model().hp (one LayerInfo per layer: gated delta-net
// layers recurrent with their conv/state dims, full-attention layers with heads and head dims)
// and emits <prefix>.embed_tokens, the layers, <prefix>.norm and the rotary inv_freq buffer.
// Returns the number of MTP layers the checkpoint stores ("mtp_num_hidden_layers" /
// "num_nextn_predict_layers", else spec.default_mtp_layers).
uint64_t EmitQwenHybridText(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                            const QwenHybridSpec& spec);

// The multi-token-prediction module stored after the model (mtp.fc [H, 2H], mtp.pre_fc_norm_
// {embedding,hidden}, mtp.layers.K full-attention decoder layers, mtp.norm; it shares the
// model's embeddings and head). transformers ignores "^mtp.*" on load: the tensors are marked
// Tensor::loaded = false and a note gives their bytes.
void EmitQwenMtp(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                 const QwenHybridSpec& spec, uint64_t mtp_layers);

// The models of qwen3_next.cc: Qwen3-Next, the Qwen3.5 composite and its text model alone.
enum class QwenHybridModel : uint8_t { kNext, kText35, kComposite35 };
Result<Model> BuildQwenHybridModel(const HfConfig& config, const BuildOptions& options,
                                   QwenHybridModel kind);
// BuildQwenHybridModel for one kind, as an ArchitectureBuilderFn (a registry row).
template <QwenHybridModel kKind>
Result<Model> BuildQwenHybrid(const HfConfig& config, const BuildOptions& options) {
  return BuildQwenHybridModel(config, options, kKind);
}

// Copies the keys a nested text_config lacks from the top level (dtype, tie_word_embeddings) so
// that the text builders read one config. `where` names it in errors ("config.json: text_config").
Result<HfConfig> QwenTextConfig(const HfConfig& c);

}  // namespace memfit::arch
