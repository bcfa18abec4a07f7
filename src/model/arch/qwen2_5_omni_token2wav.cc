// Qwen2.5-Omni's token2wav (omni_kit.h): the DiT that turns codec tokens into a mel spectrogram
// (with an ECAPA-TDNN speaker encoder) and the BigVGAN vocoder (AMPBlock resblocks with SnakeBeta
// activations in TorchActivation1d), as transformers/models/qwen2_5_omni/modeling_qwen2_5_omni.py
// builds them (Qwen2_5OmniToken2WavDiTModel, Qwen2_5OmniToken2WavBigVGANModel) and
// Qwen/Qwen2.5-Omni-7B's index names them.

#include <algorithm>

#include "formats/hf_config_json.h"
#include "model/arch/omni_kit.h"

namespace memfit::arch {
namespace {

// TorchActivation1d(SnakeBeta(channels)): act.{alpha,beta} and the two Kaiser-sinc filters of
// UpSample1d/DownSample1d (kernel 12, float32), stored in Qwen's release.
void Activation1d(ModelBuilder& b, const std::string& p, uint64_t channels) {
  SnakeBeta(b, p + ".act", channels);
  b.Buffer(p + ".upsample.filter", {1, 1, 12}, Dtype::kF32, true);
  b.Buffer(p + ".downsample.filter", {1, 1, 12}, Dtype::kF32, true);
}

// ECAPA_TimeDelayNet(config) under `p`; each TimeDelayNetBlock is a biased Conv1d named "conv".
void Ecapa(ModelBuilder& b, const HfConfig& c, const std::string& p, uint64_t mel) {
  const auto channels = UintList(b, c, "enc_channels", {});
  const auto kernels = UintList(b, c, "enc_kernel_sizes", {});
  const auto dilations = UintList(b, c, "enc_dilations", {});
  const uint64_t attention = Get(b, c.Uint("enc_attention_channels"));
  const uint64_t scale = Get(b, c.Uint("enc_res2net_scale"));
  const uint64_t se = Get(b, c.Uint("enc_se_channels"));
  const uint64_t enc_dim = Get(b, c.Uint("enc_dim"));
  if (b.failed()) return;
  if (channels.empty() || channels.size() != kernels.size() ||
      channels.size() != dilations.size()) {
    b.Fail(
        MakeError("{}: \"enc_channels\", \"enc_kernel_sizes\" and \"enc_dilations\" must be "
                  "non-empty lists of one length",
                  c.where()));
    return;
  }
  if (scale == 0) {
    b.Fail(MakeError("{}: field \"enc_res2net_scale\" must not be zero", c.where()));
    return;
  }
  const size_t n = channels.size();
  b.Conv(p + ".blocks.0.conv", mel, channels[0], {kernels[0]}, true);
  for (size_t i = 1; i + 1 < n && !b.failed(); ++i) {
    // SqueezeExcitationRes2NetBlock(channels[i-1], channels[i]).
    const std::string l = Layer(p + ".blocks", i);
    const uint64_t in = channels[i - 1], out = channels[i], part = out / scale;
    b.Conv(l + ".tdnn1.conv", in, out, {1}, true);
    for (uint64_t j = 0; j + 1 < scale && !b.failed(); ++j) {
      b.Conv(Layer(l + ".res2net_block.blocks", j) + ".conv", part, part, {kernels[i]}, true);
    }
    b.Conv(l + ".tdnn2.conv", out, out, {1}, true);
    b.Conv(l + ".se_block.conv1", out, se, {1}, true);
    b.Conv(l + ".se_block.conv2", se, out, {1}, true);
  }
  const uint64_t last = channels[n - 1];
  b.Conv(p + ".mfa.conv", last, last, {kernels[n - 1]}, true);
  b.Conv(p + ".asp.tdnn.conv", MulDims(b, last, 3, "3 x enc_channels[-1]"), attention, {1}, true);
  b.Conv(p + ".asp.conv", attention, last, {1}, true);
  b.Conv(p + ".fc", MulDims(b, last, 2, "2 x enc_channels[-1]"), enc_dim, {1}, true);
}

}  // namespace

void EmitQwen25OmniDit(ModelBuilder& b, const HfConfig& c, const std::string& p) {
  const uint64_t h = Get(b, c.Uint("hidden_size"));
  const uint64_t layers = Get(b, c.Uint("num_hidden_layers"));
  const uint64_t heads = Get(b, c.Uint("num_attention_heads"));
  const uint64_t head_dim = Get(b, c.Uint("head_dim"));
  const double ff_mult = Get(b, c.NumberOr("ff_mult", 2));
  const uint64_t emb_dim = Get(b, c.Uint("emb_dim"));
  const uint64_t num_embeds = Get(b, c.Uint("num_embeds"));
  const uint64_t mel = Get(b, c.Uint("mel_dim"));
  const uint64_t enc_emb_dim = Get(b, c.Uint("enc_emb_dim"));
  const uint64_t enc_dim = Get(b, c.Uint("enc_dim"));
  if (b.failed()) return;
  if (!(ff_mult > 0 && ff_mult <= 1024)) {
    b.Fail(MakeError("{}: field \"ff_mult\" = {} must be in (0, 1024]", c.where(), ff_mult));
    return;
  }
  // DiTMLP: inner_dim = int(dim * mult).
  const auto inner_ff = static_cast<uint64_t>(static_cast<double>(h) * ff_mult);
  const uint64_t inner = MulDims(b, heads, head_dim, "num_attention_heads x head_dim");
  const uint64_t cond = mel + enc_dim + enc_emb_dim + emb_dim;  // each at most 2^40
  b.Linear(p + ".time_embed.time_mlp.0", 256, h, true);         // SinusPositionEmbedding(256)
  b.Linear(p + ".time_embed.time_mlp.2", h, h, true);
  b.Embedding(p + ".text_embed.codec_embed", num_embeds + 1, emb_dim);
  b.Linear(p + ".input_embed.proj", cond, h, true);
  Ecapa(b, c, p + ".input_embed.spk_encoder", mel);
  // Qwen2_5OmniDiTRotaryEmbedding over head_dim; Qwen's release stores it (float32).
  b.Buffer(p + ".rotary_embed.inv_freq", {(head_dim + 1) / 2}, Dtype::kF32, true);
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    const std::string l = Layer(p + ".transformer_blocks", i);
    b.Linear(l + ".attn_norm.linear", h, MulDims(b, h, 6, "6 x hidden_size"), true);
    b.Linear(l + ".attn.to_q", h, inner, true);
    b.Linear(l + ".attn.to_k", h, inner, true);
    b.Linear(l + ".attn.to_v", h, inner, true);
    b.Linear(l + ".attn.to_out.0", inner, h, true);
    b.Linear(l + ".ff.ff.0", h, inner_ff, true);
    b.Linear(l + ".ff.ff.3", inner_ff, h, true);
  }
  b.Linear(p + ".norm_out.linear", h, MulDims(b, h, 2, "2 x hidden_size"), true);
  b.Linear(p + ".proj_out", h, mel, true);
}

void EmitQwen25OmniBigVgan(ModelBuilder& b, const HfConfig& c, const std::string& p) {
  const uint64_t mel = Get(b, c.Uint("mel_dim"));
  const uint64_t initial = Get(b, c.Uint("upsample_initial_channel"));
  const auto rates = UintList(b, c, "upsample_rates", {});
  const auto up_kernels = UintList(b, c, "upsample_kernel_sizes", {});
  const auto res_kernels = UintList(b, c, "resblock_kernel_sizes", {});
  // resblock_dilation_sizes: lists of dilations; AMPBlock reads the first three of each.
  size_t dilation_sets = 0;
  if (auto it = c.raw().find("resblock_dilation_sizes"); it != c.raw().end()) {
    bool ok = it->is_array() && it->size() <= 64;
    for (size_t i = 0; ok && i < it->size(); ++i) ok = (*it)[i].is_array() && (*it)[i].size() >= 3;
    if (!ok) {
      b.Fail(
          MakeError("{}: field \"resblock_dilation_sizes\" must list at most 64 lists of at "
                    "least 3 dilations",
                    c.where()));
    }
    dilation_sets = it->size();
  }
  if (b.failed()) return;
  const size_t n = rates.size();
  if (n > 32 || (initial >> n) == 0) {
    b.Fail(
        MakeError("{}: \"upsample_initial_channel\" = {} cannot halve {} times "
                  "(\"upsample_rates\" entries)",
                  c.where(), initial, n));
    return;
  }
  const size_t blocks = std::min(res_kernels.size(), dilation_sets);  // zip(kernels, dilations)
  b.Conv(p + ".conv_pre", mel, initial, {7}, true);
  for (size_t i = 0; i < std::min(n, up_kernels.size()); ++i) {  // zip(rates, kernel sizes)
    ConvTranspose1d(b, Layer(Layer(p + ".ups", i), 0), initial >> i, initial >> (i + 1),
                    up_kernels[i]);
  }
  uint64_t index = 0;
  for (size_t i = 0; i < n && !b.failed(); ++i) {
    const uint64_t ch = initial >> (i + 1);
    for (size_t k = 0; k < blocks && !b.failed(); ++k, ++index) {
      const std::string r = Layer(p + ".resblocks", index);
      for (int j = 0; j < 3; ++j) {
        b.Conv(Layer(r + ".convs1", j), ch, ch, {res_kernels[k]}, true);
        b.Conv(Layer(r + ".convs2", j), ch, ch, {res_kernels[k]}, true);
      }
      for (int j = 0; j < 6; ++j) Activation1d(b, Layer(r + ".activations", j), ch);
    }
  }
  Activation1d(b, p + ".activation_post", initial >> n);
  b.Conv(p + ".conv_post", initial >> n, 1, {7}, false);
}

}  // namespace memfit::arch
