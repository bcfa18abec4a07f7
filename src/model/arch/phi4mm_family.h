#pragma once
// Phi-4-multimodal (phi4mm.cc, phi4mm_audio.cc): a phi3 decoder with a SigLIP image encoder and
// a conformer speech encoder, as Microsoft's remote code ("phi4mm", with the LoRA adapters) and
// transformers ("phi4_multimodal") lay it out. Apart from families.h so it rebuilds no other file.

#include <cstdint>
#include <string>

#include "memfit/architecture.h"

namespace memfit::arch {

Result<Model> BuildPhi4Mm(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildPhi4Multimodal(const HfConfig& config, const BuildOptions& options);

class ModelBuilder;

// The conformer speech encoder's dimensions, read from either layout's config (phi4mm_audio.cc).
struct ConformerDims {
  uint64_t input_size = 0;      // mel bins: "input_size"
  uint64_t norm_size = 0;       // global_mean/global_invstd: encoder_embedding_config.input_size
  uint64_t hidden = 0;          // "attention_dim" (remote) / "hidden_size" (native)
  uint64_t heads = 0;           // "attention_heads" / "num_attention_heads"
  uint64_t intermediate = 0;    // "linear_units" / "intermediate_size"
  uint64_t blocks = 0;          // "num_blocks"
  uint64_t ext_pw_out = 0;      // "ext_pw_out_channel" (0: no GLU, pw_conv_simplify_{w,b})
  uint64_t ext_pw_kernel = 1;   // "ext_pw_kernel_size" (native: 1)
  uint64_t dw_sep_out = 0;      // "depthwise_seperable_out_channel" (0: no pw_conv)
  uint64_t dw_multiplier = 1;   // "depthwise_multiplier"
  uint64_t kernel = 3;          // "kernel_size" of the depthwise conv
  uint64_t time_reduction = 0;  // "time_reduction": the subsampling factor, a multiple of 2
  uint64_t conv_channels = 0;   // NeMo subsampling channels
  bool striding = false;        // NeMo "striding" (plain convs) instead of "dw_striding"
  bool causal_subsampling = false;  // NeMo "is_causal": padding 2 + 1 instead of 1 + 1
  uint64_t bias_buckets = 0;        // T5 relative bias rows: max distance, x2 unless symmetric
  uint64_t group_size = 1;          // "attention_group_size" (K/V heads = heads / group_size)
  bool bias_in_glu = true;          // "bias_in_glu": GLU biases b1/b2 and the FFN GLU linear's bias
  bool linear_glu = false;          // "linear_glu_in_convm": GLULinear instead of the GLU conv
  uint64_t downsample_rate = 1;     // audio projection input = hidden x downsample_rate
};

// Reads the remote code's ConformerEncoder(**audio_processor["config"]) with its defaults, or
// transformers' Phi4MultimodalAudioConfig with its defaults; records errors in `b`.
ConformerDims ReadRemoteConformer(ModelBuilder& b, const HfConfig& encoder, uint64_t downsample);
ConformerDims ReadNativeConformer(ModelBuilder& b, const HfConfig& audio);

// The encoder under `prefix` ("model.embed_tokens_extend.audio_embed.encoder"): the remote
// code's names (net.0.linear, linear_q, ...) or transformers' (gate_up_proj, q_proj, ...).
void EmitConformer(ModelBuilder& b, const std::string& prefix, const ConformerDims& d,
                   bool native_names);

}  // namespace memfit::arch
