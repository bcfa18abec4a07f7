// timm's MobileNetV5 vision encoder (timm/models/mobilenetv5.py, MobileNetV5Encoder), the vision
// tower of Gemma 3n (transformers wraps it as TimmWrapperModel.timm_model). Gemma3nVisionConfig
// names only the architecture, so the layout comes from timm's definition: _gen_mobilenet_v5's
// arch_def for "mobilenetv5_300m_enc" (the kArch300m table below, copied string for string),
// decoded as timm's _efficientnet_builder.py does (_decode_block_str, EfficientNetBuilder with
// round_chs_fn = round_channels at multiplier 1.0, make_divisible by 8) into the blocks of
// _efficientnet_blocks.py:
//   er  (EdgeResidual): conv_exp [mid, in, k, k], bn1 [mid], conv_pwl [out, mid, 1, 1], bn2 [out]
//       (mid = make_divisible(in x e); group_size 0: a full convolution; no layer scale).
//   uir (UniversalInvertedResidual): dw_start.{conv [in, 1, a, a], bn} when a > 0, pw_exp.{conv
//       [mid, in, 1, 1], bn}, dw_mid.{conv [mid, 1, k, k], bn} when k > 0, pw_proj.{conv [out, mid,
//       1, 1], bn}, layer_scale.gamma [out] (layer_scale_init_value 1e-5).
//   mqa (MobileAttention, multi-query): norm [in], attn.query.proj [h x d, in, 1, 1],
//       attn.{key,value}.{down_conv [in, 1, k, k], norm [in]} when the kv stride v > 1,
//       attn.{key,value}.proj [d, in, 1, 1], attn.output.proj [out, h x d, 1, 1],
//       layer_scale.gamma [out].
// Norms are RmsNorm2d (weight only: no bias, no running statistics); convolutions have no bias
// except the stem's (conv_stem.conv [64, 3, 3, 3] + bias, conv_stem.bn). The multi-scale fusion
// adapter (msfa) takes the last two feature stages (640 + 1280 channels): msfa.ffn.pw_exp.{conv,
// bn} (exp ratio 2), msfa.ffn.pw_proj.{conv, bn} to 2048, no layer scale (noskip), msfa.norm.
// No buffers. Checked: timm (commit aa4b5850) create_model("mobilenetv5_300m_enc").state_dict()
// holds exactly these 548 tensors, 294,126,912 parameters (gemma3n_test.cc).

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "model/arch/builder_kit.h"
#include "model/arch/gemma3n_family.h"

namespace memfit::arch {
namespace {

// A run of block strings repeated `times` times, in order.
struct BlockRun {
  std::vector<std::string_view> blocks;
  uint64_t times = 1;
};
using Stage = std::vector<BlockRun>;

// _gen_mobilenet_v5's arch_def for every variant but "mobilenetv5_base".
const std::vector<Stage>& Arch300m() {
  static const std::vector<Stage> kArch = {
      {{{"er_r1_k3_s2_e4_c128"}}, {{"er_r1_k3_s1_e4_c128"}, 2}},
      {{{"uir_r1_a3_k5_s2_e6_c256"}},
       {{"uir_r1_a5_k0_s1_e4_c256", "uir_r1_a3_k0_s1_e4_c256"}, 2}},
      {{{"uir_r1_a5_k5_s2_e6_c640"}},
       {{"uir_r1_a5_k0_s1_e4_c640"}, 7},
       {{"uir_r1_a0_k0_s1_e1_c640"}},
       {{"mqa_r1_k3_h12_v2_s1_d64_c640", "uir_r1_a0_k0_s1_e2_c640"}, 14}},
      {{{"uir_r1_a5_k5_s2_e6_c1280"}},
       {{"mqa_r1_k3_h16_s1_d96_c1280", "uir_r1_a0_k0_s1_e2_c1280"}, 19}},
  };
  return kArch;
}

constexpr uint64_t kStemChannels = 64;      // MobileNetV5Encoder stem_size
constexpr uint64_t kEncoderFeatures = 2048;  // MobileNetV5Encoder.num_features (fixed)

// timm layers/helpers.py make_divisible(v, divisor=8, round_limit=0.9) for an integer v.
uint64_t MakeDivisible(uint64_t v) {
  uint64_t out = std::max<uint64_t>(8, (v + 4) / 8 * 8);
  if (10 * out < 9 * v) out += 8;
  return out;
}

// One decoded block string ("uir_r1_a5_k0_s1_e4_c640"): the type and its numeric options.
struct BlockArgs {
  std::string_view type;
  uint64_t a = 0, k = 0, s = 1, e = 1, c = 0, h = 0, d = 0, v = 1;
};

BlockArgs Decode(std::string_view text) {
  BlockArgs args;
  size_t start = 0;
  bool first = true;
  while (start <= text.size()) {
    size_t end = text.find('_', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view op = text.substr(start, end - start);
    if (first) {
      args.type = op;
      first = false;
    } else if (!op.empty()) {
      uint64_t value = 0;
      std::from_chars(op.data() + 1, op.data() + op.size(), value);
      switch (op[0]) {
        case 'a': args.a = value; break;
        case 'k': args.k = value; break;
        case 's': args.s = value; break;
        case 'e': args.e = value; break;
        case 'c': args.c = value; break;
        case 'h': args.h = value; break;
        case 'd': args.d = value; break;
        case 'v': args.v = value; break;
        default: break;  // 'r' (repeats, always 1 here)
      }
    }
    start = end + 1;
  }
  return args;
}

// ConvNormAct without bias: <prefix>.conv, <prefix>.bn (RmsNorm2d).
void ConvNorm(ModelBuilder& b, const std::string& prefix, uint64_t in, uint64_t out,
              uint64_t kernel, uint64_t groups) {
  b.Conv(prefix + ".conv", in, out, {kernel, kernel}, false, groups);
  b.RmsNorm(prefix + ".bn", out);
}

// Emits one block taking `in` channels; returns its output channels.
uint64_t Mobilenetv5Block(ModelBuilder& b, const std::string& p, const BlockArgs& x, uint64_t in) {
  const uint64_t out = x.c;
  if (x.type == "er") {
    const uint64_t mid = MakeDivisible(in * x.e);
    b.Conv(p + ".conv_exp", in, mid, {x.k, x.k}, false);
    b.RmsNorm(p + ".bn1", mid);
    b.Conv(p + ".conv_pwl", mid, out, {1, 1}, false);
    b.RmsNorm(p + ".bn2", out);
  } else if (x.type == "uir") {
    const uint64_t mid = MakeDivisible(in * x.e);
    if (x.a > 0) ConvNorm(b, p + ".dw_start", in, in, x.a, in);
    ConvNorm(b, p + ".pw_exp", in, mid, 1, 1);
    if (x.k > 0) ConvNorm(b, p + ".dw_mid", mid, mid, x.k, mid);
    ConvNorm(b, p + ".pw_proj", mid, out, 1, 1);
    b.Param(p + ".layer_scale.gamma", {out});
  } else {  // "mqa"
    b.RmsNorm(p + ".norm", in);
    b.Conv(p + ".attn.query.proj", in, x.h * x.d, {1, 1}, false);
    for (const char* branch : {".attn.key", ".attn.value"}) {
      if (x.v > 1) {
        b.Conv(p + branch + ".down_conv", in, in, {x.k, x.k}, false, in);
        b.RmsNorm(p + branch + ".norm", in);
      }
      b.Conv(p + branch + ".proj", in, x.d, {1, 1}, false);
    }
    b.Conv(p + ".attn.output.proj", x.h * x.d, out, {1, 1}, false);
    b.Param(p + ".layer_scale.gamma", {out});
  }
  return out;
}

}  // namespace

uint64_t EmitMobileNetV5Encoder(ModelBuilder& b, std::string_view architecture,
                                const std::string& prefix) {
  // timm's registry also has mobilenetv5_300m and mobilenetv5_base, classifiers (MobileNetV5,
  // with a head) rather than encoders: a Gemma 3n vision_config does not name them.
  if (architecture != "mobilenetv5_300m_enc") {
    b.Fail(MakeError("{}: vision_config.architecture \"{}\" is not built from the config (only "
                     "timm's \"mobilenetv5_300m_enc\" is); the safetensors headers give an "
                     "exact answer",
                     b.where(), architecture));
    return 0;
  }
  b.Conv(prefix + ".conv_stem.conv", 3, kStemChannels, {3, 3}, true);
  b.RmsNorm(prefix + ".conv_stem.bn", kStemChannels);
  // Feature stages (EfficientNetBuilder.features): the stem, since the first block strides, and
  // the end of every stage, since each next one starts with stride 2.
  std::vector<uint64_t> features = {kStemChannels};
  uint64_t in = kStemChannels;
  const auto& stages = Arch300m();
  for (size_t s = 0; s < stages.size(); ++s) {
    uint64_t index = 0;
    for (const BlockRun& run : stages[s]) {
      for (uint64_t t = 0; t < run.times; ++t) {
        for (std::string_view text : run.blocks) {
          const std::string p = prefix + ".blocks." + std::to_string(s) + "." +
                                std::to_string(index++);
          in = Mobilenetv5Block(b, p, Decode(text), in);
        }
      }
    }
    features.push_back(in);
  }
  // msfa_indices (-2, -1): the last two feature stages, concatenated.
  const uint64_t fused = features[features.size() - 2] + features.back();
  const uint64_t mid = MakeDivisible(2 * fused);
  ConvNorm(b, prefix + ".msfa.ffn.pw_exp", fused, mid, 1, 1);
  ConvNorm(b, prefix + ".msfa.ffn.pw_proj", mid, kEncoderFeatures, 1, 1);
  b.RmsNorm(prefix + ".msfa.norm", kEncoderFeatures);
  return b.failed() ? 0 : kEncoderFeatures;
}

}  // namespace memfit::arch
