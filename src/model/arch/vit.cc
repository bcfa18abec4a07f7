// ViT (transformers' modeling_vit.py). [vit.]embeddings.{cls_token [1, 1, h], position_embeddings
// [1, patches + 1, h], patch_embeddings.projection Conv2d(num_channels, h, patch, stride patch)};
// encoder.layer.N.{attention.attention.{query,key,value} (bias: qkv_bias), attention.output.dense,
// intermediate.dense, output.dense, layernorm_before, layernorm_after}; layernorm; pooler.dense
// (ViTModel only). ViTForImageClassification adds classifier [num_labels, h].

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"

namespace memfit::arch {

Result<uint64_t> ImagePatches(const HfConfig& c, std::string_view image_key,
                              std::string_view patch_key, uint64_t image_default,
                              uint64_t patch_default) {
  // image_size and patch_size are an int or a [height, width] pair.
  auto side = [&](std::string_view key, uint64_t fallback) -> Result<std::pair<uint64_t, uint64_t>> {
    const auto& raw = c.raw();
    auto it = raw.find(std::string(key));
    if (it != raw.end() && it->is_array()) {
      if (it->size() != 2 || !(*it)[0].is_number_unsigned() || !(*it)[1].is_number_unsigned()) {
        return MakeError("{}: field \"{}\" must be an integer or a [height, width] pair",
                         c.where(), key);
      }
      return std::pair{(*it)[0].get<uint64_t>(), (*it)[1].get<uint64_t>()};
    }
    MEMFIT_ASSIGN_OR_RETURN(uint64_t v, c.UintOr(key, fallback));
    return std::pair{v, v};
  };
  MEMFIT_ASSIGN_OR_RETURN(auto image, side(image_key, image_default));
  MEMFIT_ASSIGN_OR_RETURN(auto patch, side(patch_key, patch_default));
  if (patch.first == 0 || patch.second == 0 || image.first % patch.first != 0 ||
      image.second % patch.second != 0 || image.first == 0 || image.second == 0 ||
      image.first > (1u << 20) || image.second > (1u << 20)) {
    return MakeError("{}: \"{}\" must be a positive multiple of \"{}\" (at most 2^20 pixels a side)",
                     c.where(), image_key, patch_key);
  }
  return (image.first / patch.first) * (image.second / patch.second);
}

Result<Model> BuildVit(const HfConfig& c, const BuildOptions& options) {
  const std::string cls = HeadClass(c, options, "ViT", "ViTModel");
  const bool classify = cls == "ViTForImageClassification";
  if (cls != "ViTModel" && !classify) {
    return UnknownHead(c, cls, "ViTModel, ViTForImageClassification");
  }
  ModelBuilder b(c);
  Model& m = b.model();
  m.architecture = cls;
  auto& hp = m.hp;
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.Uint("num_hidden_layers"));
  hp.num_attention_heads = Get(b, c.Uint("num_attention_heads"));
  hp.num_kv_heads = hp.num_attention_heads;
  hp.intermediate_size = Get(b, c.Uint("intermediate_size"));
  hp.activation = Get(b, c.StringOr("hidden_act", "gelu"));
  hp.norm = "layernorm";
  const uint64_t channels = Get(b, c.UintOr("num_channels", 3));
  const uint64_t patch = Get(b, c.UintOr("patch_size", 16));
  const bool qkv_bias = Get(b, c.BoolOr("qkv_bias", true));
  const uint64_t patches = Get(b, ImagePatches(c, "image_size", "patch_size", 224, 16));
  if (b.failed()) return b.Finish();
  hp.head_dim = DivideExact(b, c, hp.hidden_size, "hidden_size", hp.num_attention_heads,
                            "num_attention_heads");
  hp.max_position_embeddings = patches + 1;

  const std::string p = classify ? "vit." : "";
  const uint64_t h = hp.hidden_size, inter = hp.intermediate_size;
  b.Param(p + "embeddings.cls_token", {1, 1, h});
  b.Param(p + "embeddings.position_embeddings", {1, patches + 1, h});
  b.Conv(p + "embeddings.patch_embeddings.projection", channels, h, {patch, patch}, true);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer(p + "encoder.layer", i);
    for (const char* proj : {"query", "key", "value"}) {
      b.Linear(l + ".attention.attention." + proj, h, h, qkv_bias);
    }
    b.Linear(l + ".attention.output.dense", h, h, true);
    b.Linear(l + ".intermediate.dense", h, inter, true);
    b.Linear(l + ".output.dense", inter, h, true);
    b.LayerNorm(l + ".layernorm_before", h);
    b.LayerNorm(l + ".layernorm_after", h);
    hp.layers.push_back(DenseLayer(AttentionKind::kNone, hp.num_attention_heads, hp.head_dim, inter));
  }
  b.LayerNorm(p + "layernorm", h);
  // ViTForImageClassification builds ViTModel(add_pooling_layer=False).
  b.SetBaseOnly(classify);
  b.Linear(p + "pooler.dense", h, h, true);
  b.SetBaseOnly(false);
  if (classify) {
    b.SetHead(true);
    b.Linear("classifier", h, NumLabels(b, c), true);
    b.SetHead(false);
  }
  // _no_split_modules = ["ViTEmbeddings", "ViTLayer"].
  m.no_split_patterns = {p + "embeddings", p + "encoder.layer.*"};
  m.base_model_prefix = p;
  return b.Finish();
}

}  // namespace memfit::arch
