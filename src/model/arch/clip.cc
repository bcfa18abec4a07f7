// CLIP and SigLIP (transformers' modeling_clip.py / modeling_siglip.py), two towers plus
// projections. text_model.embeddings.{token_embedding, position_embedding} + the non-persistent
// int64 buffer position_ids [1, max_position_embeddings]; text_model.encoder.layers.N.{self_attn.
// {k,v,q,out}_proj, layer_norm1, mlp.fc1, mlp.fc2, layer_norm2}; text_model.final_layer_norm.
// vision_model.embeddings.{class_embedding [h] (CLIP), patch_embedding Conv2d (bias: SigLIP only),
// position_embedding [patches (+1 for CLIP), h]} + position_ids; CLIP: pre_layrnorm (sic); both:
// encoder, post_layernorm; SigLIP: head (attention pooling). CLIPModel: visual_projection and
// text_projection (no bias), logit_scale []; SiglipModel: text_model.head, logit_scale [1],
// logit_bias [1]. Sub-config fields absent from config.json take the config classes' defaults,
// as transformers does.

#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"
#include "model/arch/issue30_families.h"

namespace memfit::arch {
namespace {

struct TowerDims {
  uint64_t hidden = 0, layers = 0, heads = 0, intermediate = 0;
};

TowerDims ReadTower(ModelBuilder& b, const HfConfig& c, const TowerDims& defaults) {
  TowerDims t;
  t.hidden = Get(b, c.UintOr("hidden_size", defaults.hidden));
  t.layers = Get(b, c.UintOr("num_hidden_layers", defaults.layers));
  t.heads = Get(b, c.UintOr("num_attention_heads", defaults.heads));
  t.intermediate = Get(b, c.UintOr("intermediate_size", defaults.intermediate));
  if (!b.failed()) DivideExact(b, c, t.hidden, "hidden_size", t.heads, "num_attention_heads");
  return t;
}

// SigLIP's attention-pooling head, unless "vision_use_head" is false (the vision transformer
// builds it when the config lacks the key).
void PoolingHead(ModelBuilder& b, const HfConfig& vc, const std::string& prefix,
                 const TowerDims& v) {
  if (!Get(b, vc.BoolOr("vision_use_head", true))) return;
  const std::string head = prefix + ".head";
  b.Param(head + ".probe", {1, 1, v.hidden});
  b.Param(head + ".attention.in_proj_weight", {3 * v.hidden, v.hidden});
  b.Param(head + ".attention.in_proj_bias", {3 * v.hidden});
  b.Linear(head + ".attention.out_proj", v.hidden, v.hidden, true);
  b.LayerNorm(head + ".layernorm", v.hidden);
  b.Linear(head + ".mlp.fc1", v.hidden, v.intermediate, true);
  b.Linear(head + ".mlp.fc2", v.intermediate, v.hidden, true);
}

void EmitEncoder(ModelBuilder& b, const std::string& prefix, const TowerDims& t) {
  for (uint64_t i = 0; i < t.layers && !b.failed(); ++i) {
    const std::string l = Layer(prefix + ".encoder.layers", i);
    for (const char* proj : {"k_proj", "v_proj", "q_proj", "out_proj"}) {
      b.Linear(l + ".self_attn." + proj, t.hidden, t.hidden, true);
    }
    b.LayerNorm(l + ".layer_norm1", t.hidden);
    b.Linear(l + ".mlp.fc1", t.hidden, t.intermediate, true);
    b.Linear(l + ".mlp.fc2", t.intermediate, t.hidden, true);
    b.LayerNorm(l + ".layer_norm2", t.hidden);
  }
}

Result<Model> BuildClipLike(const HfConfig& c, const BuildOptions& options, bool siglip) {
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
  const TowerDims text = ReadTower(b, tc, siglip ? TowerDims{768, 12, 12, 3072}
                                                 : TowerDims{512, 12, 8, 2048});
  const uint64_t vocab = Get(b, tc.UintOr("vocab_size", siglip ? 32000 : 49408));
  const uint64_t positions = Get(b, tc.UintOr("max_position_embeddings", siglip ? 64 : 77));
  const uint64_t projection = siglip ? 0 : Get(b, c.UintOr("projection_dim", 512));
  if (b.failed()) return b.Finish();
  auto& hp = m.hp;
  hp.vocab_size = vocab;
  hp.hidden_size = text.hidden;
  hp.num_layers = text.layers;
  hp.num_attention_heads = text.heads;
  hp.num_kv_heads = text.heads;
  hp.head_dim = text.hidden / text.heads;
  hp.intermediate_size = text.intermediate;
  hp.max_position_embeddings = positions;
  hp.activation = Get(b, tc.StringOr("hidden_act", siglip ? "gelu_pytorch_tanh" : "quick_gelu"));
  hp.norm = "layernorm";
  if (text.layers > options.max_tensors) {  // each layer emits tensors below: it would fail anyway
    return MakeError("{}: text_config: \"num_hidden_layers\" = {} exceeds memfit's limit of {} "
                     "tensors for a model built from config.json", c.where(), text.layers,
                     options.max_tensors);
  }
  for (uint64_t i = 0; i < text.layers; ++i) {
    hp.layers.push_back(DenseLayer(AttentionKind::kNone, text.heads, hp.head_dim, text.intermediate));
  }

  b.SetComponent("text_model");
  b.Embedding("text_model.embeddings.token_embedding", vocab, text.hidden);
  b.Embedding("text_model.embeddings.position_embedding", positions, text.hidden);
  b.Buffer("text_model.embeddings.position_ids", {1, positions}, Dtype::kI64, false);
  EmitEncoder(b, "text_model", text);
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

uint64_t EmitClipVision(ModelBuilder& b, const HfConfig& vc, const std::string& prefix,
                        bool siglip, bool position_ids) {
  // CLIPVisionConfig / SiglipVisionConfig defaults.
  const TowerDims v = ReadTower(b, vc, {768, 12, 12, 3072});
  const uint64_t channels = Get(b, vc.UintOr("num_channels", 3));
  const uint64_t patch = Get(b, vc.UintOr("patch_size", siglip ? 16 : 32));
  const uint64_t patches = Get(b, ImagePatches(vc, "image_size", "patch_size", 224, siglip ? 16 : 32));
  if (b.failed()) return 0;
  const uint64_t positions = siglip ? patches : patches + 1;
  if (!siglip) b.Param(prefix + ".embeddings.class_embedding", {v.hidden});
  b.Conv(prefix + ".embeddings.patch_embedding", channels, v.hidden, {patch, patch}, siglip);
  b.Embedding(prefix + ".embeddings.position_embedding", positions, v.hidden);
  if (position_ids) {
    b.Buffer(prefix + ".embeddings.position_ids", {1, positions}, Dtype::kI64, false);
  }
  if (!siglip) b.LayerNorm(prefix + ".pre_layrnorm", v.hidden);
  EmitEncoder(b, prefix, v);
  b.LayerNorm(prefix + ".post_layernorm", v.hidden);
  if (siglip) PoolingHead(b, vc, prefix, v);
  return b.failed() ? 0 : v.hidden;
}

// Siglip2VisionTransformer (transformers models/siglip2/modeling_siglip2.py, issue 30): NaFlex
// embeddings, a patch_embedding nn.Linear [H, num_channels x patch_size^2] with bias over
// patchified pixels and a position_embedding [num_patches, H] table (no position_ids buffer),
// then SigLIP's encoder, post_layernorm and optional head. Siglip2VisionConfig's defaults.
uint64_t EmitSiglip2Vision(ModelBuilder& b, const HfConfig& vc, const std::string& prefix) {
  const TowerDims v = ReadTower(b, vc, {768, 12, 12, 3072});
  const uint64_t channels = Get(b, vc.UintOr("num_channels", 3));
  const uint64_t patch = Get(b, vc.UintOr("patch_size", 16));
  const uint64_t positions = Get(b, vc.UintOr("num_patches", 256));
  if (b.failed()) return 0;
  const uint64_t pixels = MulDims(b, channels, MulDims(b, patch, patch, "patch_size^2"),
                                  "num_channels x patch_size^2");
  b.Linear(prefix + ".embeddings.patch_embedding", pixels, v.hidden, true);
  b.Embedding(prefix + ".embeddings.position_embedding", positions, v.hidden);
  EmitEncoder(b, prefix, v);
  b.LayerNorm(prefix + ".post_layernorm", v.hidden);
  PoolingHead(b, vc, prefix, v);
  return b.failed() ? 0 : v.hidden;
}

Result<Model> BuildClip(const HfConfig& c, const BuildOptions& o) { return BuildClipLike(c, o, false); }
Result<Model> BuildSiglip(const HfConfig& c, const BuildOptions& o) { return BuildClipLike(c, o, true); }

}  // namespace memfit::arch
