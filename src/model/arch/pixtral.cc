// The Pixtral vision encoder (transformers models/pixtral/modeling_pixtral.py,
// PixtralVisionModel), the vision tower of mistral3 and of llava checkpoints such as
// mistral-community/pixtral-12b: patch_conv (Conv2d, no bias), ln_pre (RMSNorm),
// transformer.layers.N.{attention_norm, feed_forward.{gate,up,down}_proj, attention.{k,v,q,o}_proj,
// ffn_norm} (no biases), and the non-persistent 2D rotary table patch_positional_embedding.
// inv_freq [(image_size / patch_size)^2, head_dim] float32 (PixtralRotaryEmbedding). Absent fields
// take PixtralVisionConfig's defaults.

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/multimodal_kit.h"

namespace memfit::arch {

uint64_t EmitPixtralVision(ModelBuilder& b, const HfConfig& vc, const std::string& prefix) {
  // PixtralVisionConfig defaults.
  const uint64_t h = Get(b, vc.UintOr("hidden_size", 1024));
  const uint64_t inter = Get(b, vc.UintOr("intermediate_size", 4096));
  const uint64_t layers = Get(b, vc.UintOr("num_hidden_layers", 24));
  const uint64_t heads = Get(b, vc.UintOr("num_attention_heads", 16));
  const uint64_t channels = Get(b, vc.UintOr("num_channels", 3));
  const uint64_t image = Get(b, vc.UintOr("image_size", 1024));
  const uint64_t patch = Get(b, vc.UintOr("patch_size", 16));
  if (b.failed()) return 0;
  if (patch == 0 || image < patch) {
    b.Fail(MakeError("{}: \"patch_size\" = {} must be in 1..image_size ({})", vc.where(), patch,
                     image));
    return 0;
  }
  uint64_t hd = 0;
  if (vc.Has("head_dim") && !vc.raw()["head_dim"].is_null()) {
    hd = Get(b, vc.Uint("head_dim"));
  } else {
    hd = DivideExact(b, vc, h, "hidden_size", heads, "num_attention_heads");
  }
  const uint64_t width = MulDims(b, heads, hd, "num_attention_heads x head_dim");
  const uint64_t side = image / patch;
  if (b.failed()) return 0;
  b.Conv(prefix + ".patch_conv", channels, h, {patch, patch}, false);
  b.RmsNorm(prefix + ".ln_pre", h);
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    const std::string l = Layer(prefix + ".transformer.layers", i);
    b.RmsNorm(l + ".attention_norm", h);
    GatedMlp(b, l + ".feed_forward", h, inter, h);
    b.Linear(l + ".attention.k_proj", h, width, false);
    b.Linear(l + ".attention.v_proj", h, width, false);
    b.Linear(l + ".attention.q_proj", h, width, false);
    b.Linear(l + ".attention.o_proj", width, h, false);
    b.RmsNorm(l + ".ffn_norm", h);
  }
  b.Buffer(prefix + ".patch_positional_embedding.inv_freq",
           {MulDims(b, side, side, "(image_size / patch_size)^2"), hd}, Dtype::kF32, false);
  return h;
}

}  // namespace memfit::arch
