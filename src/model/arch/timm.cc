// timm models by architecture name (timm's config.json gives only "architecture", e.g.
// "resnet50.a1_in1k", and "num_classes"): the hyperparameters come from the name, as
// timm.create_model does. Supported: resnet{18,34,50,101,152} (timm/models/resnet.py: conv1, bn1,
// layer1-4 of BasicBlock/Bottleneck with downsample.{0,1}, fc), vit_{tiny,small,base,large,huge}_
// patch<P>_<IMG> (vision_transformer.py: the kTimmVitTower row, head) and convnext_{atto,femto,
// pico,nano,tiny,small,base,large,xlarge} (convnext.py: stem.{0,1}, stages.S.{downsample.{0,1},
// blocks.N.{conv_dw, norm, mlp.fc1, mlp.fc2, gamma}}, head.{norm, fc}). BatchNorm buffers as in
// resnet.cc. timm models declare no _no_split_modules, so accelerate's largest layer is the largest
// leaf.

#include <map>
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
  ConvBatchNorm(b, "conv1", "bn1", 3, 64, 7);
  uint64_t in = 64;
  for (size_t s = 0; s < depths.size(); ++s) {
    const uint64_t planes = uint64_t{64} << s;
    const uint64_t out = planes * expansion;
    const uint64_t stride = s == 0 ? 1 : 2;
    for (uint64_t i = 0; i < depths[s]; ++i) {
      const std::string l = Layer("layer" + std::to_string(s + 1), i);
      if (bottleneck) {
        ConvBatchNorm(b, l + ".conv1", l + ".bn1", in, planes, 1);
        ConvBatchNorm(b, l + ".conv2", l + ".bn2", planes, planes, 3);
        ConvBatchNorm(b, l + ".conv3", l + ".bn3", planes, out, 1);
      } else {
        ConvBatchNorm(b, l + ".conv1", l + ".bn1", in, planes, 3);
        ConvBatchNorm(b, l + ".conv2", l + ".bn2", planes, planes, 3);
      }
      if (i == 0 && (stride != 1 || in != out)) {
        ConvBatchNorm(b, l + ".downsample.0", l + ".downsample.1", in, out, 1);
      }
      in = out;
    }
  }
  if (classes > 0) b.Linear("fc", in, classes, true);
  b.model().hp.hidden_size = in;
  b.model().hp.norm = "batchnorm";
  b.model().hp.activation = "relu";
}

// The kTimmVitTower row (vision_tower.cc) with the sizes of the name (`sizes`: width, depth,
// heads, MLP width), and head [classes, width].
void TimmVit(ModelBuilder& b, const HfConfig& c, const std::vector<uint64_t>& sizes, uint64_t patch,
             uint64_t image, uint64_t classes) {
  const nlohmann::json keys = {{"hidden_size", sizes[0]},
                               {"num_hidden_layers", sizes[1]},
                               {"num_attention_heads", sizes[2]},
                               {"intermediate_size", sizes[3]},
                               {"patch_size", patch},
                               {"image_size", image}};
  auto config = HfConfig::FromJson(keys, c.where());
  if (!config) return b.Fail(config.error());
  const VisionDims d = EmitVisionTower(b, *config, kTimmVitTower, "");
  if (classes > 0) b.Linear("head", d.hidden, classes, true);
  SetTowerHp(b.model().hp, d);
  b.model().hp.activation = "gelu";
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
  // resnet.py's depths; vision_transformer.py's width, depth, heads, MLP width; convnext.py's
  // depths and widths (conv_mlp for the four smallest).
  using Sizes = std::vector<uint64_t>;
  static const std::map<std::string, Sizes> kResnetDepths = {{"18", {2, 2, 2, 2}},
                                                             {"34", {3, 4, 6, 3}},
                                                             {"50", {3, 4, 6, 3}},
                                                             {"101", {3, 4, 23, 3}},
                                                             {"152", {3, 8, 36, 3}}};
  static const std::map<std::string, Sizes> kVitSizes = {{"tiny", {192, 12, 3, 768}},
                                                         {"small", {384, 12, 6, 1536}},
                                                         {"base", {768, 12, 12, 3072}},
                                                         {"large", {1024, 24, 16, 4096}},
                                                         {"huge", {1280, 32, 16, 5120}}};
  static const std::map<std::string, std::pair<Sizes, Sizes>> kConvnextSizes = {
      {"atto", {{2, 2, 6, 2}, {40, 80, 160, 320}}},
      {"femto", {{2, 2, 6, 2}, {48, 96, 192, 384}}},
      {"pico", {{2, 2, 6, 2}, {64, 128, 256, 512}}},
      {"nano", {{2, 2, 8, 2}, {80, 160, 320, 640}}},
      {"tiny", {{3, 3, 9, 3}, {96, 192, 384, 768}}},
      {"small", {{3, 3, 27, 3}, {96, 192, 384, 768}}},
      {"base", {{3, 3, 27, 3}, {128, 256, 512, 1024}}},
      {"large", {{3, 3, 27, 3}, {192, 384, 768, 1536}}},
      {"xlarge", {{3, 3, 27, 3}, {256, 512, 1024, 2048}}}};
  std::smatch match;
  if (std::regex_match(name, match, kResnet)) {
    const std::string depth = match[1];
    TimmResnet(b, kResnetDepths.find(depth)->second, depth != "18" && depth != "34", classes);
  } else if (std::regex_match(name, match, kVit)) {
    const uint64_t patch = std::stoull(match[2].str().substr(0, 6));
    const uint64_t image = std::stoull(match[3].str().substr(0, 6));
    if (patch == 0 || image % patch != 0) {
      return MakeError("{}: \"architecture\" = \"{}\": image size {} is not a multiple of patch {}",
                       c.where(), arch, image, patch);
    }
    TimmVit(b, c, kVitSizes.find(match[1])->second, patch, image, classes);
  } else if (std::regex_match(name, match, kConvnext)) {
    const std::string size = match[1];
    const auto& [depths, dims] = kConvnextSizes.find(size)->second;
    const bool conv_mlp = size == "atto" || size == "femto" || size == "pico" || size == "nano";
    TimmConvnext(b, depths, dims, conv_mlp, classes);
  } else {
    return MakeError(
        "{}: timm \"architecture\" = \"{}\" is not one memfit derives from the name "
        "(resnet18-152, vit_<size>_patch<P>_<image>, convnext_<size>); reading the "
        "safetensors header gives an exact answer",
        c.where(), arch);
  }
  // The classifier is timm's head; timm has no base/head split for accelerate (it builds the
  // whole model), so nothing is marked as head.
  return b.Finish();
}

}  // namespace memfit::arch
