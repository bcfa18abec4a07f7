// CLIP and SigLIP (transformers' modeling_clip.py / modeling_siglip.py), two towers plus
// projections. text_model.embeddings.{token_embedding, position_embedding} + the non-persistent
// int64 buffer position_ids [1, max_position_embeddings]; text_model.encoder.layers.N.{self_attn.
// {k,v,q,out}_proj, layer_norm1, mlp.fc1, mlp.fc2, layer_norm2}; text_model.final_layer_norm.
// vision_model: the kClipVisionTower / kSiglipVisionTower rows (vision_tower.cc), whose encoder
// layer the text tower shares. CLIPModel: visual_projection and text_projection (no bias),
// logit_scale []; SiglipModel: text_model.head, logit_scale [1], logit_bias [1]. Sub-config fields
// absent from config.json take the config classes' defaults, as transformers does.

#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"
#include "model/arch/vision_tower.h"

namespace memfit::arch {
namespace {

Result<Model> ClipLike(const HfConfig& c, const BuildOptions& options, bool siglip) {
  const std::string t = siglip ? "Siglip" : "CLIP";
  const std::string cls = HeadClass(c, options, t, t + "Model");
  if (cls != t + "Model") return UnknownHead(c, cls, t + "Model");
  ModelBuilder b(c);
  Model& m = b.model();
  m.architecture = cls;
  auto text_config = c.Sub("text_config");
  auto vision_config = c.Sub("vision_config");
  if (!text_config) return text_config.error();
  if (!vision_config) return vision_config.error();
  const HfConfig& tc = *text_config;
  // CLIPTextConfig / SiglipTextConfig defaults.
  const VisionDims text =
      ReadVisionDims(b, tc,
                     {.hidden = {"hidden_size", siglip ? 768u : 512u},
                      .heads = {"num_attention_heads", siglip ? 12u : 8u},
                      .intermediate = {"intermediate_size", siglip ? 3072u : 2048u},
                      .channels = {},
                      .patch = {},
                      .image = {},
                      .positions = VisionPositions::kKey,
                      .position_key = {"max_position_embeddings", siglip ? 64u : 77u}});
  const uint64_t vocab = Get(b, tc.UintOr("vocab_size", siglip ? 32000 : 49408));
  const uint64_t projection = siglip ? 0 : Get(b, c.UintOr("projection_dim", 512));
  m.hp.activation = Get(b, tc.StringOr("hidden_act", siglip ? "gelu_pytorch_tanh" : "quick_gelu"));
  if (b.failed()) return b.Finish();
  if (text.depth > options.max_tensors) {  // each layer emits tensors below: it would fail anyway
    return MakeError(
        "{}: \"num_hidden_layers\" = {} exceeds memfit's limit of {} tensors for a "
        "model built from config.json",
        tc.where(), text.depth, options.max_tensors);
  }
  SetTowerHp(m.hp, text);
  m.hp.vocab_size = vocab;
  const uint64_t positions = text.positions;

  b.SetComponent("text_model");
  b.Embedding("text_model.embeddings.token_embedding", vocab, text.hidden);
  b.Embedding("text_model.embeddings.position_embedding", positions, text.hidden);
  b.Buffer("text_model.embeddings.position_ids", {1, positions}, Dtype::kI64, false);
  for (uint64_t i = 0; i < text.depth && !b.failed(); ++i) {
    EmitVisionItems(b, tc, kClipVisionTower, text, kClipVisionTower.layer,
                    Layer("text_model.encoder.layers", i), Quantization{});
  }
  b.LayerNorm("text_model.final_layer_norm", text.hidden);
  if (siglip) {
    const uint64_t out = Get(b, tc.UintOr("projection_size", text.hidden));
    b.Linear("text_model.head", text.hidden, out, true);
  }
  b.SetComponent("vision_model");
  const uint64_t vision_hidden = EmitClipVision(b, *vision_config, "vision_model", siglip);
  if (!siglip) {
    b.Linear("visual_projection", vision_hidden, projection, false);
    b.SetComponent("text_model");
    b.Linear("text_projection", text.hidden, projection, false);
    b.SetComponent("");
    b.Param("logit_scale", {});
  } else {
    b.SetComponent("");
    b.Param("logit_scale", {1});
    b.Param("logit_bias", {1});
  }
  // 4.42 _no_split_modules: CLIPModel ["CLIPTextEmbeddings", "CLIPEncoderLayer",
  // "CLIPVisionEmbeddings"]; SiglipModel ["SiglipTextEmbeddings", "SiglipEncoderLayer",
  // "SiglipVisionEmbeddings", "SiglipMultiheadAttentionPoolingHead"].
  m.no_split_patterns = {"text_model.embeddings", "text_model.encoder.layers.*",
                         "vision_model.embeddings", "vision_model.encoder.layers.*"};
  if (siglip) m.no_split_patterns.push_back("vision_model.head");
  return b.Finish();
}

}  // namespace

Result<Model> BuildClip(const HfConfig& c, const BuildOptions& o) { return ClipLike(c, o, false); }
Result<Model> BuildSiglip(const HfConfig& c, const BuildOptions& o) { return ClipLike(c, o, true); }

}  // namespace memfit::arch
