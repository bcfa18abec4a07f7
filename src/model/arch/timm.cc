// timm models by architecture name (timm's config.json gives only "architecture", e.g.
// "resnet50.a1_in1k", and "num_classes"): the hyperparameters come from the name, as
// timm.create_model does. Supported: resnet{18,34,50,101,152} (timm/models/resnet.py: conv1, bn1,
// layer1-4 of BasicBlock/Bottleneck with downsample.{0,1}, fc), vit_{tiny,small,base,large,huge}_
// patch<P>_<IMG> (vision_transformer.py: the kTimmVitTower row, head) and convnext_{atto,femto,
// pico,nano,tiny,small,base,large,xlarge} (convnext.py: stem.{0,1}, stages.S.{downsample.{0,1},
// blocks.N.{conv_dw, norm, mlp.fc1, mlp.fc2, gamma}}, head.{norm, fc}). BatchNorm buffers as in
// resnet.cc. timm models declare no _no_split_modules, so accelerate's largest layer is the largest
// leaf.

#include <regex>

#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"
#include "model/arch/vision_tower.h"

namespace memfit::arch {
namespace {

void TimmResnet(ModelBuilder& b, const std::vector<uint64_t>& depths, bool bottleneck,
                uint64_t classes) {
  const uint64_t expansion = bottleneck ? 4 : 1;
  b.Conv("conv1", 3, 64, {7, 7}, false);
  BatchNorm(b, "bn1", 64);
  uint64_t in = 64;
  for (size_t s = 0; s < depths.size(); ++s) {
    const uint64_t planes = uint64_t{64} << s;
    const uint64_t out = planes * expansion;
    const uint64_t stride = s == 0 ? 1 : 2;
    for (uint64_t i = 0; i < depths[s]; ++i) {
      const std::string l = Layer("layer" + std::to_string(s + 1), i);
      if (bottleneck) {
        b.Conv(l + ".conv1", in, planes, {1, 1}, false);
        BatchNorm(b, l + ".bn1", planes);
        b.Conv(l + ".conv2", planes, planes, {3, 3}, false);
        BatchNorm(b, l + ".bn2", planes);
        b.Conv(l + ".conv3", planes, out, {1, 1}, false);
        BatchNorm(b, l + ".bn3", out);
      } else {
        b.Conv(l + ".conv1", in, planes, {3, 3}, false);
        BatchNorm(b, l + ".bn1", planes);
        b.Conv(l + ".conv2", planes, planes, {3, 3}, false);
        BatchNorm(b, l + ".bn2", planes);
      }
      if (i == 0 && (stride != 1 || in != out)) {
        b.Conv(l + ".downsample.0", in, out, {1, 1}, false);
        BatchNorm(b, l + ".downsample.1", out);
      }
      in = out;
    }
  }
  if (classes > 0) b.Linear("fc", in, classes, true);
  b.model().hp.hidden_size = in;
  b.model().hp.norm = "batchnorm";
  b.model().hp.activation = "relu";
}

// The kTimmVitTower row (vision_tower.cc) with the sizes of the name, and head [classes, dim].
void TimmVit(ModelBuilder& b, const HfConfig& c, uint64_t dim, uint64_t depth, uint64_t heads,
             uint64_t mlp, uint64_t patch, uint64_t image, uint64_t classes) {
  const nlohmann::json keys = {{"hidden_size", dim}, {"num_hidden_layers", depth},
                               {"num_attention_heads", heads}, {"intermediate_size", mlp},
                               {"patch_size", patch}, {"image_size", image}};
  auto sizes = HfConfig::FromJson(keys, c.where());
  if (!sizes) return b.Fail(sizes.error());
  const VisionDims d = EmitVisionTower(b, *sizes, kTimmVitTower, "");
  if (classes > 0) b.Linear("head", dim, classes, true);
  auto& hp = b.model().hp;
  for (uint64_t i = 0; i < depth; ++i) {
    hp.layers.push_back(DenseLayer(AttentionKind::kNone, heads, dim / heads, mlp));
  }
  hp.hidden_size = dim;
  hp.num_layers = depth;
  hp.num_attention_heads = heads;
  hp.num_kv_heads = heads;
  hp.head_dim = dim / heads;
  hp.intermediate_size = mlp;
  hp.max_position_embeddings = d.positions;
  hp.norm = "layernorm";
  hp.activation = "gelu";
}

void TimmConvnext(ModelBuilder& b, const std::vector<uint64_t>& depths,
                  const std::vector<uint64_t>& dims, bool conv_mlp, uint64_t classes) {
  b.Conv("stem.0", 3, dims[0], {4, 4}, true);
  b.LayerNorm("stem.1", dims[0]);
  for (size_t s = 0; s < depths.size(); ++s) {
    const std::string stage = Layer("stages", s);
    const uint64_t d = dims[s];
    if (s > 0) {
      b.LayerNorm(stage + ".downsample.0", dims[s - 1]);
      b.Conv(stage + ".downsample.1", dims[s - 1], d, {2, 2}, true);
    }
    for (uint64_t i = 0; i < depths[s]; ++i) {
      const std::string l = Layer(stage + ".blocks", i);
      b.Conv(l + ".conv_dw", d, d, {7, 7}, true, d);
      b.LayerNorm(l + ".norm", d);
      if (conv_mlp) {
        b.Conv(l + ".mlp.fc1", d, 4 * d, {1, 1}, true);
        b.Conv(l + ".mlp.fc2", 4 * d, d, {1, 1}, true);
      } else {
        b.Linear(l + ".mlp.fc1", d, 4 * d, true);
        b.Linear(l + ".mlp.fc2", 4 * d, d, true);
      }
      b.Param(l + ".gamma", {d});
    }
  }
  b.LayerNorm("head.norm", dims.back());
  if (classes > 0) b.Linear("head.fc", dims.back(), classes, true);
  b.model().hp.hidden_size = dims.back();
  b.model().hp.norm = "layernorm";
  b.model().hp.activation = "gelu";
}

}  // namespace

Result<Model> BuildTimm(const HfConfig& c, const BuildOptions& /*options*/) {
  ModelBuilder b(c);
  Model& m = b.model();
  const std::string arch = Get(b, c.StringOr("architecture", ""));
  const uint64_t classes = Get(b, c.UintOr("num_classes", 1000));
  if (b.failed()) return b.Finish();
  const std::string name = arch.substr(0, arch.find('.'));  // drop the pretrained tag
  m.model_type = "timm";
  m.architecture = arch;
  static const std::regex kResnet("resnet(18|34|50|101|152)");
  static const std::regex kVit("vit_(tiny|small|base|large|huge)_patch(\\d+)_(\\d+)");
  static const std::regex kConvnext("convnext_(atto|femto|pico|nano|tiny|small|base|large|xlarge)");
  std::smatch match;
  if (std::regex_match(name, match, kResnet)) {
    const std::string depth = match[1];
    std::vector<uint64_t> depths = depth == "18"    ? std::vector<uint64_t>{2, 2, 2, 2}
                                   : depth == "101" ? std::vector<uint64_t>{3, 4, 23, 3}
                                   : depth == "152" ? std::vector<uint64_t>{3, 8, 36, 3}
                                                    : std::vector<uint64_t>{3, 4, 6, 3};
    TimmResnet(b, depths, depth != "18" && depth != "34", classes);
  } else if (std::regex_match(name, match, kVit)) {
    const std::string size = match[1];
    const uint64_t patch = std::stoull(match[2].str().substr(0, 6));
    const uint64_t image = std::stoull(match[3].str().substr(0, 6));
    if (patch == 0 || image % patch != 0) {
      return MakeError("{}: \"architecture\" = \"{}\": image size {} is not a multiple of patch {}",
                       c.where(), arch, image, patch);
    }
    struct Dims { uint64_t dim, depth, heads, mlp; };
    Dims d = size == "tiny"    ? Dims{192, 12, 3, 768}
             : size == "small" ? Dims{384, 12, 6, 1536}
             : size == "base"  ? Dims{768, 12, 12, 3072}
             : size == "large" ? Dims{1024, 24, 16, 4096}
                               : Dims{1280, 32, 16, 5120};
    TimmVit(b, c, d.dim, d.depth, d.heads, d.mlp, patch, image, classes);
  } else if (std::regex_match(name, match, kConvnext)) {
    const std::string size = match[1];
    std::vector<uint64_t> depths = {3, 3, 9, 3}, dims;
    if (size == "atto") dims = {40, 80, 160, 320}, depths = {2, 2, 6, 2};
    else if (size == "femto") dims = {48, 96, 192, 384}, depths = {2, 2, 6, 2};
    else if (size == "pico") dims = {64, 128, 256, 512}, depths = {2, 2, 6, 2};
    else if (size == "nano") dims = {80, 160, 320, 640}, depths = {2, 2, 8, 2};
    else if (size == "tiny") dims = {96, 192, 384, 768};
    else if (size == "small") dims = {96, 192, 384, 768}, depths = {3, 3, 27, 3};
    else if (size == "base") dims = {128, 256, 512, 1024}, depths = {3, 3, 27, 3};
    else if (size == "large") dims = {192, 384, 768, 1536}, depths = {3, 3, 27, 3};
    else dims = {256, 512, 1024, 2048}, depths = {3, 3, 27, 3};
    const bool conv_mlp = size == "atto" || size == "femto" || size == "pico" || size == "nano";
    TimmConvnext(b, depths, dims, conv_mlp, classes);
  } else {
    return MakeError("{}: timm \"architecture\" = \"{}\" is not one memfit derives from the name "
                     "(resnet18-152, vit_<size>_patch<P>_<image>, convnext_<size>); reading the "
                     "safetensors header gives an exact answer",
                     c.where(), arch);
  }
  // The classifier is timm's head; timm has no base/head split for accelerate (it builds the
  // whole model), so nothing is marked as head.
  return b.Finish();
}

}  // namespace memfit::arch
