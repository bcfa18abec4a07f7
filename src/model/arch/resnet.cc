// ResNet, transformers' modeling_resnet.py. [resnet.]embedder.embedder (ResNetConvLayer: a 7x7
// stride-2 convolution without bias + BatchNorm2d), encoder.stages.S.layers.L.{shortcut (1x1 conv +
// BatchNorm, when channels or stride change), layer.K (ResNetConvLayer: 1x1, 3x3, 1x1 with
// out/4 channels for "bottleneck"; two 3x3 for "basic")}; ResNetForImageClassification adds
// classifier.1 (Flatten, Linear). Every BatchNorm2d holds weight and bias plus the persistent
// buffers running_mean, running_var [channels] (float) and num_batches_tracked [] (int64).

#include "formats/json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"

namespace memfit::arch {

void ConvBatchNorm(ModelBuilder& b, const std::string& conv, const std::string& norm, uint64_t in,
                   uint64_t out, uint64_t kernel) {
  b.Conv(conv, in, out, {kernel, kernel}, false);
  b.Param(norm + ".weight", {out});
  b.Param(norm + ".bias", {out});
  b.Buffer(norm + ".running_mean", {out}, b.dtype(), true);
  b.Buffer(norm + ".running_var", {out}, b.dtype(), true);
  b.Buffer(norm + ".num_batches_tracked", {}, Dtype::kI64, true);
}

namespace {

std::vector<uint64_t> UintList(ModelBuilder& b, const HfConfig& c, std::string_view key) {
  std::vector<uint64_t> out;
  const auto& raw = c.raw();
  auto it = raw.find(std::string(key));
  if (it == raw.end() || !it->is_array() || it->empty()) {
    b.Fail(MakeError("{}: field \"{}\" must be a non-empty list of integers", c.where(), key));
    return out;
  }
  for (const auto& v : *it) {
    if (!v.is_number_unsigned() || v.get<uint64_t>() == 0 || v.get<uint64_t>() > (1u << 20)) {
      b.Fail(MakeError("{}: field \"{}\" holds {}, not a positive integer up to 2^20", c.where(),
                       key, DumpJson(v, -1)));
      return {};
    }
    out.push_back(v.get<uint64_t>());
  }
  return out;
}

}  // namespace

Result<Model> BuildResnet(const HfConfig& c, const BuildOptions& options) {
  const std::string cls = HeadClass(c, options, "ResNet", "ResNetModel");
  const bool classify = cls == "ResNetForImageClassification";
  if (cls != "ResNetModel" && !classify) {
    return UnknownHead(c, cls, "ResNetModel, ResNetForImageClassification");
  }
  ModelBuilder b(c);
  Model& m = b.model();
  m.architecture = cls;
  const uint64_t channels = Get(b, c.UintOr("num_channels", 3));
  const uint64_t embedding = Get(b, c.UintOr("embedding_size", 64));
  const std::string layer_type = Get(b, c.StringOr("layer_type", "bottleneck"));
  const bool downsample_first = Get(b, c.BoolOr("downsample_in_first_stage", false));
  const bool downsample_bottleneck = Get(b, c.BoolOr("downsample_in_bottleneck", false));
  (void)downsample_bottleneck;  // moves the stride between convolutions: same shapes
  const auto hidden = UintList(b, c, "hidden_sizes");
  const auto depths = UintList(b, c, "depths");
  if (b.failed()) return b.Finish();
  if (hidden.size() != depths.size()) {
    return MakeError("{}: \"hidden_sizes\" has {} entries but \"depths\" has {}", c.where(),
                     hidden.size(), depths.size());
  }
  if (layer_type != "bottleneck" && layer_type != "basic") {
    return MakeError("{}: \"layer_type\" = \"{}\" is not \"bottleneck\" or \"basic\"", c.where(),
                     layer_type);
  }
  const bool bottleneck = layer_type == "bottleneck";
  auto& hp = m.hp;
  hp.hidden_size = hidden.back();
  hp.num_layers = 0;
  for (auto d : depths) hp.num_layers += d;
  hp.activation = Get(b, c.StringOr("hidden_act", "relu"));
  hp.norm = "batchnorm";

  const std::string p = classify ? "resnet." : "";
  auto conv_layer = [&](const std::string& prefix, uint64_t in, uint64_t out, uint64_t k) {
    ConvBatchNorm(b, prefix + ".convolution", prefix + ".normalization", in, out, k);
  };
  conv_layer(p + "embedder.embedder", channels, embedding, 7);
  for (size_t s = 0; s < hidden.size() && !b.failed(); ++s) {
    const uint64_t stage_in = s == 0 ? embedding : hidden[s - 1];
    const uint64_t stride = (s == 0 && !downsample_first) ? 1 : 2;
    for (uint64_t l = 0; l < depths[s] && !b.failed(); ++l) {
      const std::string layer = Layer(Layer(p + "encoder.stages", s) + ".layers", l);
      const uint64_t in = l == 0 ? stage_in : hidden[s];
      const uint64_t out = hidden[s];
      if (l == 0 && (in != out || stride != 1)) conv_layer(layer + ".shortcut", in, out, 1);
      if (bottleneck) {
        const uint64_t reduces = out / 4;  // reduction = 4
        conv_layer(layer + ".layer.0", in, reduces, 1);
        conv_layer(layer + ".layer.1", reduces, reduces, 3);
        conv_layer(layer + ".layer.2", reduces, out, 1);
      } else {
        conv_layer(layer + ".layer.0", in, out, 3);
        conv_layer(layer + ".layer.1", out, out, 3);
      }
    }
  }
  if (classify) {
    b.SetHead(true);
    const uint64_t labels = NumLabels(b, c);
    if (labels > 0) b.Linear("classifier.1", hidden.back(), labels, true);
    b.SetHead(false);
  }
  // _no_split_modules = ["ResNetConvLayer", "ResNetShortCut"].
  m.no_split_patterns = {p + "embedder.embedder", p + "encoder.stages.*.layers.*.shortcut",
                         p + "encoder.stages.*.layers.*.layer.*"};
  m.base_model_prefix = p;
  return b.Finish();
}

}  // namespace memfit::arch
