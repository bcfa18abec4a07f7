// Phi-4-multimodal's conformer speech encoder, as two state dicts name it.
// Remote code (speech_conformer_encoder.py ConformerEncoder; vLLM's phi4mm_audio.py loads the same
// names): embed.conv.* (NemoConvSubsampling: Conv2d(1, C, 3), then per further halving a
// depthwise and a pointwise Conv2d, or plain convs for "striding"), embed.out Linear(C x F, D)
// with F = input_size after calc_length per halving; relative_attention_bias_layer.bias_values
// (T5: max_distance, x2 unless symmetric, by heads / group); encoders.N (ConformerEncoderLayer:
// feed_forward_in/out, self_attn.linear_q/k/v/out, conv (ConvModule), layer_norm_att,
// layer_norm); the scalar dev_type buffer; encoder_embedding.global_mean/global_invstd.
// transformers (modeling_phi4_multimodal.py, Phi4MultimodalAudioModel): the same tensors renamed
// by convert_phi4_multimodal_weights_to_hf.py (gate_up_proj, down_proj, q/k/v/o_proj); no
// dev_type; always the GLU conv with b1/b2, "dw_striding", non-causal subsampling, full K/V heads.

#include <bit>
#include <string_view>
#include <utility>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/phi4mm_family.h"

namespace memfit::arch {
namespace {

// The number of halvings, int(math.log(time_reduction, 2)), for an even factor.
uint64_t Halvings(ModelBuilder& b, std::string_view where, uint64_t time_reduction) {
  if (time_reduction < 2 || time_reduction % 2 != 0) {
    b.Fail(MakeError("{}: \"time_reduction\" = {} must be a multiple of 2", where, time_reduction));
    return 0;
  }
  return static_cast<uint64_t>(std::bit_width(time_reduction)) - 1;
}

// calc_length: floor((L + paddings - 3) / 2 + 1), once per halving (kernel 3, stride 2).
uint64_t SubsampledFeatures(ModelBuilder& b, std::string_view where, const ConformerDims& d) {
  const uint64_t paddings = d.causal_subsampling ? 3 : 2;
  const uint64_t halvings = Halvings(b, where, d.time_reduction);
  uint64_t length = d.input_size;
  for (uint64_t i = 0; i < halvings && !b.failed(); ++i) {
    if (length + paddings < 3) {
      length = 0;
      break;
    }
    length = (length + paddings - 3) / 2 + 1;
  }
  if (!b.failed() && length == 0) {
    b.Fail(MakeError("{}: \"input_size\" = {} leaves no features after the subsampling", where,
                     d.input_size));
  }
  return length;
}

void Validate(ModelBuilder& b, const HfConfig& c, const ConformerDims& d) {
  if (b.failed()) return;
  const std::pair<const char*, uint64_t> kPositive[] = {
      {"hidden size", d.hidden},
      {"attention heads", d.heads},
      {"intermediate size", d.intermediate},
      {"input_size", d.input_size},
      {"conv_channels", d.conv_channels},
      {"kernel_size", d.kernel},
      {"ext_pw_kernel_size", d.ext_pw_kernel},
      {"depthwise_multiplier", d.dw_multiplier},
      {"bias max distance", d.bias_buckets},
      {"encoder_embedding_config.input_size", d.norm_size},
      {"downsample_rate", d.downsample_rate}};
  for (const auto& [name, value] : kPositive) {
    if (value == 0) {
      b.Fail(MakeError("{}: the audio encoder's {} must be positive", c.where(), name));
      return;
    }
  }
  if (d.hidden % d.heads != 0) {
    b.Fail(MakeError("{}: the audio hidden size {} is not divisible by {} attention heads",
                     c.where(), d.hidden, d.heads));
  } else if (d.group_size == 0 || d.heads % d.group_size != 0) {
    b.Fail(MakeError("{}: \"attention_group_size\" = {} must divide {} attention heads", c.where(),
                     d.group_size, d.heads));
  } else if (d.blocks > kMaxBuiltTensors) {
    // Each block emits tensors: it would pass the builder's tensor limit anyway.
    b.Fail(
        MakeError("{}: \"num_blocks\" = {} exceeds memfit's limit of {} tensors for a model "
                  "built from config.json",
                  c.where(), d.blocks, kMaxBuiltTensors));
  }
  SubsampledFeatures(b, c.where(), d);
}

void Phi4mmAudioFeedForward(ModelBuilder& b, const std::string& p, const ConformerDims& d,
                            bool native) {
  b.LayerNorm(p + ".layer_norm", d.hidden);
  if (native) {
    b.Linear(p + ".gate_up_proj", d.hidden, MulDims(b, 2, d.intermediate, "2 x intermediate"),
             true);
    b.Linear(p + ".down_proj", d.intermediate, d.hidden, true);
  } else {
    b.Linear(p + ".net.0.linear", d.hidden, MulDims(b, 2, d.intermediate, "2 x linear_units"),
             d.bias_in_glu);
    b.Linear(p + ".net.2", d.intermediate, d.hidden, true);
  }
}

void Phi4mmAudioAttention(ModelBuilder& b, const std::string& p, const ConformerDims& d,
                          bool native) {
  const uint64_t kv = d.hidden / d.group_size;
  b.Linear(p + (native ? ".q_proj" : ".linear_q"), d.hidden, d.hidden, true);
  b.Linear(p + (native ? ".k_proj" : ".linear_k"), d.hidden, kv, true);
  b.Linear(p + (native ? ".v_proj" : ".linear_v"), d.hidden, kv, true);
  b.Linear(p + (native ? ".o_proj" : ".linear_out"), kv, d.hidden, true);
}

// ConvModule, in its state dict's order: own parameters, layer_norm, ln1, glu, ext_pw_conv_1d,
// dw_sep_conv_1d, ln2.
void ConvModule(ModelBuilder& b, const std::string& p, const ConformerDims& d, bool native) {
  const uint64_t dw_out = MulDims(b, d.hidden, d.dw_multiplier, "hidden x depthwise_multiplier");
  const uint64_t glu_out = MulDims(b, 2, d.ext_pw_out, "2 x ext_pw_out_channel");
  if (!native && d.ext_pw_out == 0) {
    b.Param(p + ".pw_conv_simplify_w", {3});
    b.Param(p + ".pw_conv_simplify_b", {3});
  }
  b.LayerNorm(p + ".layer_norm", d.hidden);
  if (native || d.ext_pw_out != 0) {
    if (!native && d.hidden != d.ext_pw_out) b.Linear(p + ".ln1", d.ext_pw_out, d.hidden, true);
    if (!native && d.linear_glu) {
      b.Linear(p + ".glu.linear", d.hidden, glu_out, d.bias_in_glu);
    } else {
      if (native || d.bias_in_glu) {
        b.Param(p + ".glu.b1", {1, d.ext_pw_out, 1});
        b.Param(p + ".glu.b2", {1, d.ext_pw_out, 1});
      }
      b.Conv(p + ".glu.ext_pw_conv_1d", d.hidden, glu_out, {d.ext_pw_kernel}, true);
    }
    b.Conv(p + ".ext_pw_conv_1d", d.hidden, d.ext_pw_out, {d.ext_pw_kernel}, true);
  }
  b.Conv(p + ".dw_sep_conv_1d.dw_conv", d.hidden, dw_out, {d.kernel}, true, d.hidden);
  if (native || d.dw_sep_out != 0) {
    b.Conv(p + ".dw_sep_conv_1d.pw_conv", dw_out, d.dw_sep_out, {1}, true);
  }
  if (!native) {
    if (d.dw_sep_out != 0 && d.hidden != d.dw_sep_out) {
      b.Linear(p + ".ln2", d.dw_sep_out, d.hidden, true);
    } else if (d.dw_sep_out == 0 && d.dw_multiplier != 1) {
      b.Linear(p + ".ln2", dw_out, d.hidden, true);
    }
  }
}

// NemoConvSubsampling: "conv" (a Sequential whose activations hold no tensors) and "out".
void Subsampling(ModelBuilder& b, const std::string& p, const ConformerDims& d) {
  const uint64_t halvings = Halvings(b, b.where(), d.time_reduction);
  const uint64_t features = SubsampledFeatures(b, b.where(), d);
  if (b.failed()) return;
  const uint64_t ch = d.conv_channels;
  if (d.striding) {
    for (uint64_t i = 0; i < halvings; ++i) {
      b.Conv(Layer(p + ".conv", 2 * i), i == 0 ? 1 : ch, ch, {3, 3}, true);
    }
  } else {
    b.Conv(p + ".conv.0", 1, ch, {3, 3}, true);
    for (uint64_t i = 0; i + 1 < halvings; ++i) {
      b.Conv(Layer(p + ".conv", 2 + 3 * i), ch, ch, {3, 3}, true, ch);
      b.Conv(Layer(p + ".conv", 3 + 3 * i), ch, ch, {1, 1}, true);
    }
  }
  b.Linear(p + ".out", MulDims(b, ch, features, "conv_channels x subsampled features"), d.hidden,
           true);
}

}  // namespace

ConformerDims ReadRemoteConformer(ModelBuilder& b, const HfConfig& e, uint64_t downsample) {
  ConformerDims d;
  // ConformerEncoder's positional arguments: the reference fails without them.
  for (const char* key : {"input_size", "chunk_size", "left_chunk"}) {
    if (!e.Has(key)) {
      b.Fail(MakeError("{}: missing required field \"{}\"", e.where(), key));
      return d;
    }
  }
  d.input_size = Get(b, e.Uint("input_size"));
  d.hidden = Get(b, e.UintOr("attention_dim", 256));
  d.heads = Get(b, e.UintOr("attention_heads", 4));
  d.intermediate = Get(b, e.UintOr("linear_units", 2048));
  d.blocks = Get(b, e.UintOr("num_blocks", 6));
  d.ext_pw_out = Get(b, e.UintOr("ext_pw_out_channel", 0));
  d.ext_pw_kernel = Get(b, e.UintOr("ext_pw_kernel_size", 1));
  d.dw_sep_out = Get(b, e.UintOr("depthwise_seperable_out_channel", 256));
  d.dw_multiplier = Get(b, e.UintOr("depthwise_multiplier", 1));
  d.kernel = Get(b, e.UintOr("kernel_size", 3));
  d.time_reduction = Get(b, e.UintOr("time_reduction", 4));
  d.group_size = Get(b, e.UintOr("attention_group_size", 1));
  d.bias_in_glu = Get(b, e.BoolOr("bias_in_glu", true));
  d.linear_glu = Get(b, e.BoolOr("linear_glu_in_convm", false));
  d.downsample_rate = downsample;
  if (Get(b, e.StringOr("input_layer", "nemo_conv")) != "nemo_conv") {
    b.Fail(
        MakeError("{}: \"input_layer\" other than \"nemo_conv\" is not built (the remote "
                  "code raises for it)",
                  e.where()));
  }
  if (Get(b, e.BoolOr("batch_norm", false))) {
    b.Fail(
        MakeError("{}: \"batch_norm\": true (a BatchNorm1d per conv module) is not built; "
                  "reading the safetensors headers gives an exact answer",
                  e.where()));
  }
  auto norm = e.Sub("encoder_embedding_config");
  if (!norm) {
    b.Fail(norm.error());
  } else {
    d.norm_size = Get(b, norm->Uint("input_size"));
  }
  // NeMo settings: the defaults TransformerEncoderBase passes, updated by nemo_conv_settings.
  d.conv_channels = 256;
  std::string subsampling = "dw_striding";
  if (auto nemo = e.OptionalSub("nemo_conv_settings")) {
    d.conv_channels = Get(b, nemo->UintOr("conv_channels", 256));
    subsampling = Get(b, nemo->StringOr("subsampling", "dw_striding"));
    d.causal_subsampling = Get(b, nemo->BoolOr("is_causal", false));
    for (const char* key : {"subsampling_factor", "feat_in", "feat_out"}) {
      if (nemo->Has(key)) {
        b.Fail(
            MakeError("{}: \"{}\" must be given outside nemo_conv_settings (the remote code "
                      "asserts it)",
                      nemo->where(), key));
      }
    }
  }
  if (subsampling != "dw_striding" && subsampling != "striding") {
    b.Fail(MakeError("{}: NeMo subsampling \"{}\" is not built (only dw_striding and striding)",
                     e.where(), subsampling));
  }
  d.striding = subsampling == "striding";
  // T5RelativeAttentionLogitBias: the only relative bias the remote code implements.
  auto bias = e.Sub("relative_attention_bias_args");
  if (!bias) {
    b.Fail(
        MakeError("{}: \"relative_attention_bias_args\" with type \"t5\" is required (the "
                  "remote code raises NotImplementedError without it)",
                  e.where()));
    return d;
  }
  if (Get(b, bias->StringOr("type", "")) != "t5") {
    b.Fail(MakeError("{}: relative_attention_bias_args.type must be \"t5\"", e.where()));
  }
  const uint64_t distance = Get(b, bias->UintOr("t5_bias_max_distance", 1000));
  const bool symmetric = Get(b, bias->BoolOr("t5_bias_symmetric", false));
  d.bias_buckets = symmetric ? distance : MulDims(b, distance, 2, "t5_bias_max_distance x 2");
  Validate(b, e, d);
  return d;
}

ConformerDims ReadNativeConformer(ModelBuilder& b, const HfConfig& a) {
  // Phi4MultimodalAudioConfig's defaults.
  ConformerDims d;
  d.hidden = Get(b, a.UintOr("hidden_size", 1024));
  d.intermediate = Get(b, a.UintOr("intermediate_size", 1536));
  d.blocks = Get(b, a.UintOr("num_blocks", 24));
  d.heads = Get(b, a.UintOr("num_attention_heads", 16));
  d.ext_pw_out = Get(b, a.UintOr("ext_pw_out_channel", 1024));
  // Spelled "seperable" by the first releases of the class, "separable" later.
  d.dw_sep_out = a.Has("depthwise_separable_out_channel")
                     ? Get(b, a.Uint("depthwise_separable_out_channel"))
                     : Get(b, a.UintOr("depthwise_seperable_out_channel", 1024));
  d.dw_multiplier = Get(b, a.UintOr("depthwise_multiplier", 1));
  d.kernel = Get(b, a.UintOr("kernel_size", 3));
  d.input_size = Get(b, a.UintOr("input_size", 80));
  d.norm_size = d.input_size;
  d.time_reduction = Get(b, a.UintOr("time_reduction", 8));
  d.conv_channels = Get(b, a.UintOr("nemo_conv_channels", 1024));
  d.downsample_rate = Get(b, a.UintOr("downsample_rate", 1));
  const uint64_t distance = Get(b, a.UintOr("bias_max_distance", 1000));
  const bool symmetric = Get(b, a.BoolOr("bias_symmetric", false));
  d.bias_buckets = symmetric ? distance : MulDims(b, distance, 2, "bias_max_distance x 2");
  Validate(b, a, d);
  return d;
}

void EmitConformer(ModelBuilder& b, const std::string& p, const ConformerDims& d,
                   bool native_names) {
  if (b.failed()) return;
  const auto norm_buffers = [&] {
    b.Buffer(p + ".encoder_embedding.global_mean", {d.norm_size}, b.dtype(), true);
    b.Buffer(p + ".encoder_embedding.global_invstd", {d.norm_size}, b.dtype(), true);
  };
  if (native_names) norm_buffers();
  Subsampling(b, p + ".embed", d);
  b.Embedding(p + ".relative_attention_bias_layer.bias_values", d.bias_buckets,
              d.heads / d.group_size);
  for (uint64_t i = 0; i < d.blocks && !b.failed(); ++i) {
    const std::string l = Layer(p + ".encoders", i);
    Phi4mmAudioFeedForward(b, l + ".feed_forward_in", d, native_names);
    Phi4mmAudioAttention(b, l + ".self_attn", d, native_names);
    ConvModule(b, l + ".conv", d, native_names);
    Phi4mmAudioFeedForward(b, l + ".feed_forward_out", d, native_names);
    b.LayerNorm(l + ".layer_norm_att", d.hidden);
    b.LayerNorm(l + ".layer_norm", d.hidden);
  }
  if (!native_names) {
    // torch.zeros(()) under the load dtype; then post_init's MeanVarianceNormLayer.
    b.Buffer(p + ".dev_type", {}, b.dtype(), false);
    norm_buffers();
  }
}

}  // namespace memfit::arch
