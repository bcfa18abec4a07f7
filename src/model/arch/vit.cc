// ViT (transformers' modeling_vit.py): the kVitTower row (vision_tower.cc) under [vit.], then
// pooler.dense (ViTModel only); ViTForImageClassification adds classifier [num_labels, h].

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"
#include "model/arch/vision_tower.h"

namespace memfit::arch {

Result<uint64_t> ImagePatches(const HfConfig& c, std::string_view image_key,
                              std::string_view patch_key, uint64_t image_default,
                              uint64_t patch_default) {
  // image_size and patch_size are an int or a [height, width] pair.
  auto side = [&](std::string_view key,
                  uint64_t fallback) -> Result<std::pair<uint64_t, uint64_t>> {
    const auto& raw = c.raw();
    auto it = raw.find(std::string(key));
    if (it != raw.end() && it->is_array()) {
      if (it->size() != 2 || !(*it)[0].is_number_unsigned() || !(*it)[1].is_number_unsigned()) {
        return MakeError("{}: field \"{}\" must be an integer or a [height, width] pair", c.where(),
                         key);
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
    return MakeError(
        "{}: \"{}\" must be a positive multiple of \"{}\" (at most 2^20 pixels a side)", c.where(),
        image_key, patch_key);
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
  const std::string p = classify ? "vit." : "";
  m.hp.activation = Get(b, c.StringOr("hidden_act", "gelu"));
  const VisionDims d = EmitVisionTower(b, c, kVitTower, classify ? "vit" : "");
  if (b.failed()) return b.Finish();
  SetTowerHp(m.hp, d);
  const uint64_t h = d.hidden;
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
