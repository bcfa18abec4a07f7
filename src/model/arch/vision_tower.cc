// The vision-tower skeleton and its table (vision_tower.h). A row's comment names the transformers
// (or timm) module it follows; its lists are that module's state dict in order.

#include "model/arch/vision_tower.h"

#include <fmt/format.h>

#include "model/arch/encoder_common.h"

namespace memfit::arch {
namespace {

uint64_t ReadKey(ModelBuilder& b, const HfConfig& v, const VisionKey& k, uint64_t text_width) {
  if (k.key == nullptr) return 0;
  if (k.alias != nullptr && !v.Has(k.key)) return ReadKey(b, v, {k.alias, k.fallback}, text_width);
  if (k.fallback == kRequired) return Get(b, v.Uint(k.key));
  return Get(b, v.UintOr(k.key, k.fallback == kTextWidth ? text_width : k.fallback));
}

// (image_size / patch_size)^2 for kSide and kGrid, after their checks.
uint64_t GridPositions(ModelBuilder& b, const HfConfig& v, const VisionTowerSpec& s, uint64_t image,
                       const VisionDims& d) {
  if (s.positions == VisionPositions::kSide && (d.patch == 0 || image < d.patch)) {
    b.Fail(MakeError("{}: \"{}\" = {} must be in 1..{} ({})", v.where(), s.patch.key, d.patch,
                     s.image.key, image));
    return 0;
  }
  const std::pair<const VisionKey*, uint64_t> positive[] = {
      {&s.patch, d.patch}, {&s.merge, d.merge}, {&s.temporal, d.temporal}};
  for (const auto& [key, value] : positive) {
    if (s.positions == VisionPositions::kGrid && key->key != nullptr && value == 0) {
      b.Fail(MakeError("{}: field \"{}\" must not be zero", v.where(), key->key));
      return 0;
    }
  }
  const uint64_t side = image / d.patch;
  return MulDims(b, side, side, "(image_size / patch_size)^2");
}

}  // namespace

VisionDims ReadVisionDims(ModelBuilder& b, const HfConfig& v, const VisionTowerSpec& s,
                          uint64_t text_width) {
  VisionDims d;
  d.hidden = ReadKey(b, v, s.hidden, text_width);
  d.depth = ReadKey(b, v, s.depth, text_width);
  d.heads = ReadKey(b, v, s.heads, text_width);
  d.intermediate = s.mlp_ratio.key != nullptr
                       ? MulDims(b, d.hidden, ReadKey(b, v, s.mlp_ratio, 0), s.mlp_ratio.key)
                       : ReadKey(b, v, s.intermediate, text_width);
  d.out = ReadKey(b, v, s.out, text_width);
  d.channels = ReadKey(b, v, s.channels, text_width);
  d.patch = ReadKey(b, v, s.patch, text_width);
  // image_size as a [height, width] pair is ImagePatches' to read.
  const bool grid = s.positions == VisionPositions::kSide || s.positions == VisionPositions::kGrid;
  const uint64_t image = grid ? ReadKey(b, v, s.image, text_width) : 0;
  d.temporal = ReadKey(b, v, s.temporal, text_width);
  d.merge = ReadKey(b, v, s.merge, text_width);
  if (s.bias_key != nullptr) d.bias = Get(b, v.BoolOr(s.bias_key, s.bias_default));
  if (b.failed()) return {};
  using P = VisionPositions;
  if (!grid && s.image.fallback == kRequired && !v.Has(s.image.key)) Get(b, v.Uint(s.image.key));
  if (s.positions == P::kPatches || s.positions == P::kPatchesAndClass) {
    d.positions =
        Get(b, ImagePatches(v, s.image.key, s.patch.key, s.image.fallback, s.patch.fallback)) +
        (s.positions == P::kPatchesAndClass);
  } else if (grid) {
    d.positions = GridPositions(b, v, s, image, d);
  } else if (s.positions == P::kKey) {
    d.positions = ReadKey(b, v, s.position_key, text_width);
  }
  if (b.failed()) return {};
  if (s.head_dim.key != nullptr && v.Has(s.head_dim.key) && !v.raw()[s.head_dim.key].is_null()) {
    d.head_dim = Get(b, v.Uint(s.head_dim.key));
    d.attention =
        MulDims(b, d.heads, d.head_dim, fmt::format("{} x {}", s.heads.key, s.head_dim.key));
  } else {
    d.head_dim = DivideExact(b, v, d.hidden, s.hidden.key, d.heads, s.heads.key);
    d.attention = d.hidden;
  }
  if (b.failed()) return {};
  return d;
}

namespace {

std::string Join(const std::string& prefix, const char* name) {
  return prefix.empty() ? std::string(name) : prefix + "." + name;
}

// A linear item's widths: kQ, kK, kV H -> A; kQkv H -> 3A; kOut A -> H; kFc1 H -> I; kFc2 I -> H.
std::pair<uint64_t, uint64_t> LinearWidths(ModelBuilder& b, VisionOp op, const VisionDims& d) {
  if (op == VisionOp::kQkv) {
    return {d.hidden, MulDims(b, 3, d.attention, "3 x vision hidden_size")};
  }
  if (op == VisionOp::kOut) return {d.attention, d.hidden};
  if (op == VisionOp::kFc1) return {d.hidden, d.intermediate};
  if (op == VisionOp::kFc2) return {d.intermediate, d.hidden};
  return {d.hidden, d.attention};
}

}  // namespace

void EmitVisionItems(ModelBuilder& b, const HfConfig& v, const VisionTowerSpec& s,
                     const VisionDims& d, const std::vector<VisionItem>& items,
                     const std::string& prefix, const Quantization& q) {
  const uint64_t h = d.hidden;
  for (const VisionItem& item : items) {
    const std::string name = Join(prefix, item.name);
    const bool bias = HasBias(item.bias, d.bias);
    switch (item.op) {
      case VisionOp::kClassEmbedding:
        b.Param(name, {h});
        break;
      case VisionOp::kClassToken:
        b.Param(name, {1, 1, h});
        break;
      case VisionOp::kPatchConv:
        b.Conv(name, d.channels, h,
               s.temporal.key ? std::vector<uint64_t>{d.temporal, d.patch, d.patch}
                              : std::vector<uint64_t>{d.patch, d.patch},
               bias);
        break;
      case VisionOp::kPatchLinear:
        b.Linear(name,
                 MulDims(b, d.channels, MulDims(b, d.patch, d.patch, "patch_size^2"),
                         "num_channels x patch_size^2"),
                 h, bias);
        break;
      case VisionOp::kPositionTable:
        b.Embedding(name, d.positions, h);
        break;
      case VisionOp::kPositionParam:
        b.Param(name, {1, d.positions, h});
        break;
      case VisionOp::kPositionIds:
        b.Buffer(name, {1, d.positions}, Dtype::kI64, false);
        break;
      case VisionOp::kNorm:
        if (s.rms_norm) {
          b.RmsNorm(name, h);
        } else {
          b.LayerNorm(name, h);
        }
        break;
      case VisionOp::kQ:
      case VisionOp::kK:
      case VisionOp::kV:
      case VisionOp::kQkv:
      case VisionOp::kOut:
      case VisionOp::kFc1:
      case VisionOp::kFc2: {
        const auto [in, out] = LinearWidths(b, item.op, d);
        QLinear(b, q, name, in, out, bias);
        break;
      }
      case VisionOp::kGatedMlp:
        QGatedMlp(b, q, name, h, d.intermediate, bias);
        break;
      case VisionOp::kGate:
        b.Param(name, {1});
        break;
      case VisionOp::kRotary2d:
        b.Buffer(name, {d.positions, d.head_dim}, Dtype::kF32, false);
        break;
      case VisionOp::kRotary:
        b.Buffer(name, {(d.head_dim / 2 + 1) / 2}, Dtype::kF32, false);
        break;
      case VisionOp::kExtra:
        s.extra(b, v, s, d, prefix, q);
        break;
    }
  }
}

VisionDims EmitVisionTower(ModelBuilder& b, const HfConfig& v, const VisionTowerSpec& s,
                           const std::string& prefix, uint64_t text_width,
                           const Quantization* quantization) {
  const Quantization none{};
  const Quantization& q = quantization ? *quantization : none;
  const VisionDims d = ReadVisionDims(b, v, s, text_width);
  if (b.failed()) return {};
  EmitVisionItems(b, v, s, d, s.embeddings, prefix, q);
  for (uint64_t i = 0; i < d.depth && !b.failed(); ++i) {
    EmitVisionItems(b, v, s, d, s.layer, Layer(Join(prefix, s.layers), i), q);
  }
  EmitVisionItems(b, v, s, d, s.tail, prefix, q);
  return b.failed() ? VisionDims{} : d;
}

void SetTowerHp(Hyperparameters& hp, const VisionDims& d) {
  hp.hidden_size = d.hidden;
  hp.num_layers = d.depth;
  hp.num_attention_heads = hp.num_kv_heads = d.heads;
  hp.head_dim = d.head_dim;
  hp.intermediate_size = d.intermediate;
  hp.max_position_embeddings = d.positions;
  hp.norm = "layernorm";
  for (uint64_t i = 0; i < d.depth; ++i) {
    hp.layers.push_back(DenseLayer(AttentionKind::kNone, d.heads, d.head_dim, d.intermediate));
  }
}

namespace {

using enum VisionOp;
constexpr VisionBias kBias = VisionBias::kBias;
constexpr VisionBias kConfigBias = VisionBias::kConfig;

// SigLIP's attention-pooling head (SiglipMultiheadAttentionPoolingHead), unless
// "vision_use_head" is false (the vision transformer builds it when the config lacks the key).
void SiglipPoolingHead(ModelBuilder& b, const HfConfig& v, const VisionTowerSpec&,
                       const VisionDims& d, const std::string& prefix, const Quantization&) {
  if (!Get(b, v.BoolOr("vision_use_head", true))) return;
  const std::string head = prefix + ".head";
  const uint64_t h = d.hidden;
  b.Param(head + ".probe", {1, 1, h});
  b.Param(head + ".attention.in_proj_weight", {3 * h, h});
  b.Param(head + ".attention.in_proj_bias", {3 * h});
  b.Linear(head + ".attention.out_proj", h, h, true);
  b.LayerNorm(head + ".layernorm", h);
  b.Linear(head + ".mlp.fc1", h, d.intermediate, true);
  b.Linear(head + ".mlp.fc2", d.intermediate, h, true);
}

// CLIP's and SigLIP's encoder layer (CLIPEncoderLayer, SiglipEncoderLayer; their text towers' too).
const std::vector<VisionItem> kClipLayer = {
    {kK, "self_attn.k_proj", kBias}, {kV, "self_attn.v_proj", kBias},
    {kQ, "self_attn.q_proj", kBias}, {kOut, "self_attn.out_proj", kBias},
    {kNorm, "layer_norm1"},          {kFc1, "mlp.fc1", kBias},
    {kFc2, "mlp.fc2", kBias},        {kNorm, "layer_norm2"}};

}  // namespace

// CLIPVisionTransformer (transformers models/clip/modeling_clip.py), CLIPVisionConfig's defaults:
// class_embedding, patch Conv2d without bias, [patches + 1] positions, pre_layrnorm (sic).
const VisionTowerSpec kClipVisionTower = {
    .patch = {"patch_size", 32},
    .positions = VisionPositions::kPatchesAndClass,
    .embeddings = {{kClassEmbedding, "embeddings.class_embedding"},
                   {kPatchConv, "embeddings.patch_embedding"},
                   {kPositionTable, "embeddings.position_embedding"},
                   {kPositionIds, "embeddings.position_ids"},
                   {kNorm, "pre_layrnorm"}},
    .layer = kClipLayer,
    .tail = {{kNorm, "post_layernorm"}}};

// IdeficsVisionTransformer (models/idefics/vision.py): CLIP's, IdeficsVisionConfig's defaults;
// "embed_dim" ("hidden_size" is its alias).
const VisionTowerSpec kIdeficsVisionTower = [] {
  VisionTowerSpec s = kClipVisionTower;
  s.hidden = {"hidden_size", 768, "embed_dim"};
  s.depth = {"num_hidden_layers", 32};
  s.heads = {"num_attention_heads", 16};
  s.intermediate = {"intermediate_size", 5120};
  s.patch = {"patch_size", 14};
  return s;
}();

// SiglipVisionTransformer (models/siglip/modeling_siglip.py), SiglipVisionConfig's defaults: no
// class token, a patch Conv2d with bias, [patches] positions, the attention-pooling head.
const VisionTowerSpec kSiglipVisionTower = {
    .embeddings = {{kPatchConv, "embeddings.patch_embedding", kBias},
                   {kPositionTable, "embeddings.position_embedding"},
                   {kPositionIds, "embeddings.position_ids"}},
    .layer = kClipLayer,
    .tail = {{kNorm, "post_layernorm"}, {kExtra}},
    .extra = SiglipPoolingHead};

// Siglip2VisionTransformer (models/siglip2/modeling_siglip2.py, issue 30), Siglip2VisionConfig's
// defaults: NaFlex embeddings, a patch nn.Linear [H, num_channels x patch_size^2] with bias over
// patchified pixels, ["num_patches", H] positions (no position_ids), then SigLIP's.
const VisionTowerSpec kSiglip2VisionTower = {
    .positions = VisionPositions::kKey,
    .position_key = {"num_patches", 256},
    .embeddings = {{kPatchLinear, "embeddings.patch_embedding", kBias},
                   {kPositionTable, "embeddings.position_embedding"}},
    .layer = kClipLayer,
    .tail = {{kNorm, "post_layernorm"}, {kExtra}},
    .extra = SiglipPoolingHead};

// Idefics2VisionTransformer (models/idefics2/modeling_idefics2.py): SigLIP's without the pooling
// head and position_ids (NaViT-style embeddings register none), Idefics2VisionConfig's patch 32.
const VisionTowerSpec kIdefics2VisionTower = [] {
  VisionTowerSpec s = kSiglipVisionTower;
  s.patch = {"patch_size", 32};
  s.embeddings.pop_back();
  s.tail = {{kNorm, "post_layernorm"}};
  return s;
}();

// Idefics3VisionTransformer (models/idefics3/modeling_idefics3.py; SmolVLM, granite-docling):
// Idefics2's, its sizes required (Idefics3VisionConfig's defaults are not SigLIP's).
const VisionTowerSpec kIdefics3VisionTower = [] {
  VisionTowerSpec s = kIdefics2VisionTower;
  s.hidden = {"hidden_size", kRequired};
  s.depth = {"num_hidden_layers", kRequired};
  s.heads = {"num_attention_heads", kRequired};
  s.intermediate = {"intermediate_size", kRequired};
  s.patch = {"patch_size", kRequired};
  s.image = {"image_size", kRequired};
  return s;
}();

// ViTModel (models/vit/modeling_vit.py), sizes required; q/k/v biased with "qkv_bias".
const VisionTowerSpec kVitTower = {
    .hidden = {"hidden_size", kRequired},
    .depth = {"num_hidden_layers", kRequired},
    .heads = {"num_attention_heads", kRequired},
    .intermediate = {"intermediate_size", kRequired},
    .positions = VisionPositions::kPatchesAndClass,
    .bias_key = "qkv_bias",
    .bias_default = true,
    .embeddings = {{kClassToken, "embeddings.cls_token"},
                   {kPositionParam, "embeddings.position_embeddings"},
                   {kPatchConv, "embeddings.patch_embeddings.projection", kBias}},
    .layers = "encoder.layer",
    .layer = {{kQ, "attention.attention.query", kConfigBias},
              {kK, "attention.attention.key", kConfigBias},
              {kV, "attention.attention.value", kConfigBias},
              {kOut, "attention.output.dense", kBias},
              {kFc1, "intermediate.dense", kBias},
              {kFc2, "output.dense", kBias},
              {kNorm, "layernorm_before"},
              {kNorm, "layernorm_after"}},
    .tail = {{kNorm, "layernorm"}}};

// timm's VisionTransformer (timm/models/vision_transformer.py), sizes from the name (timm.cc).
const VisionTowerSpec kTimmVitTower = {.positions = VisionPositions::kPatchesAndClass,
                                       .embeddings = {{kClassToken, "cls_token"},
                                                      {kPositionParam, "pos_embed"},
                                                      {kPatchConv, "patch_embed.proj", kBias}},
                                       .layers = "blocks",
                                       .layer = {{kNorm, "norm1"},
                                                 {kQkv, "attn.qkv", kBias},
                                                 {kOut, "attn.proj", kBias},
                                                 {kNorm, "norm2"},
                                                 {kFc1, "mlp.fc1", kBias},
                                                 {kFc2, "mlp.fc2", kBias}},
                                       .tail = {{kNorm, "norm"}}};

// PixtralVisionModel (models/pixtral/modeling_pixtral.py; mistral3, pixtral llava),
// PixtralVisionConfig's defaults: no biases, RMSNorms, attention heads x "head_dim" wide, the
// non-persistent 2D rotary table [(image_size / patch_size)^2, head_dim] float32.
const VisionTowerSpec kPixtralVisionTower = {
    .hidden = {"hidden_size", 1024},
    .depth = {"num_hidden_layers", 24},
    .heads = {"num_attention_heads", 16},
    .intermediate = {"intermediate_size", 4096},
    .head_dim = {"head_dim"},
    .image = {"image_size", 1024},
    .positions = VisionPositions::kSide,
    .rms_norm = true,
    .embeddings = {{kPatchConv, "patch_conv"}, {kNorm, "ln_pre"}},
    .layers = "transformer.layers",
    .layer = {{kNorm, "attention_norm"},
              {kGatedMlp, "feed_forward"},
              {kK, "attention.k_proj"},
              {kV, "attention.v_proj"},
              {kQ, "attention.q_proj"},
              {kOut, "attention.o_proj"},
              {kNorm, "ffn_norm"}},
    .tail = {{kRotary2d, "patch_positional_embedding.inv_freq"}}};

uint64_t EmitClipVision(ModelBuilder& b, const HfConfig& vision, const std::string& prefix,
                        bool siglip, bool position_ids) {
  VisionTowerSpec spec = siglip ? kSiglipVisionTower : kClipVisionTower;
  if (!position_ids) {
    std::erase_if(spec.embeddings, [](const VisionItem& i) { return i.op == kPositionIds; });
  }
  return EmitVisionTower(b, vision, spec, prefix).hidden;
}

}  // namespace memfit::arch
