// IDEFICS v1 (model_type "idefics": IdeficsForVisionText2Text, IdeficsModel; transformers
// models/idefics/modeling_idefics.py, vision.py, perceiver.py, configuration_idefics.py): decoupled
// embeddings and head (an "additional_vocab_size" table beside each), the kIdeficsVisionTower row
// (CLIP's layout), the optional perceiver resampler ("use_resampler"), Llama-shaped multi-head
// layers, and one gated cross-attention layer before every "cross_layer_interval"-th of them.
// Every attention owns an IdeficsEmbedding: non-persistent inv_freq [ceil(head_dim / 2)] float32,
// cos_cached / sin_cached [2048, head_dim] (float32 under accelerate's from_config, the checkpoint
// dtype under from_pretrained).
// KV cache: the gated cross-attention blocks cache nothing (transformers recomputes the image
// tokens' K/V at every step), so they are not in hp.layers; the decoder layer each precedes is
// marked cross_attention, hp.encoder_max_positions = image tokens per image (n_latents with the
// resampler, else patches + 1); hp.is_encoder_decoder stays false.

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/vision_tower.h"

namespace memfit::arch {
namespace {

constexpr uint64_t kRotaryPositions = 2048;  // IdeficsEmbedding's max_position_embeddings default

// A count of layers or blocks above the tensor cap fails at once, naming the field.
Status CheckCount(const HfConfig& c, std::string_view field, uint64_t count, uint64_t max_tensors) {
  if (count <= max_tensors) return Ok{};
  return MakeError(
      "{}: \"{}\" = {} exceeds memfit's limit of {} tensors for a model built from "
      "config.json",
      c.where(), field, count, max_tensors);
}

// The kIdeficsVisionTower row under model.vision_model; its width and positions (patches + 1).
VisionDims EmitIdeficsVision(ModelBuilder& b, const HfConfig& c, uint64_t max_tensors) {
  if (!c.Has("vision_config")) {
    b.model().assumptions.push_back("no \"vision_config\": IdeficsVisionConfig defaults");
  }
  auto vc = SubOrEmpty(c, "vision_config");
  if (!vc) {
    b.Fail(vc.error());
    return {};
  }
  if (auto layers = vc->UintOr("num_hidden_layers", 32); layers) {
    if (auto s = CheckCount(*vc, "num_hidden_layers", *layers, max_tensors); !s) {
      b.Fail(s.error());
      return {};
    }
  }
  return EmitVisionTower(b, *vc, kIdeficsVisionTower, "model.vision_model");
}

// IdeficsPerceiverResampler; returns n_latents (the image tokens it emits).
uint64_t EmitPerceiver(ModelBuilder& b, const HfConfig& c, uint64_t embed, uint64_t max_tensors) {
  auto pc = SubOrEmpty(c, "perceiver_config");
  if (!pc) {
    b.Fail(pc.error());
    return 0;
  }
  const uint64_t depth = Get(b, pc->UintOr("resampler_depth", 6));
  const uint64_t heads = Get(b, pc->UintOr("resampler_n_heads", 16));
  const uint64_t head_dim = Get(b, pc->UintOr("resampler_head_dim", 96));
  const uint64_t latents = Get(b, pc->UintOr("resampler_n_latents", 64));
  const bool qk_norms = Get(b, pc->BoolOr("qk_layer_norms_perceiver", false));
  const uint64_t inner = MulDims(b, heads, head_dim, "resampler_n_heads x resampler_head_dim");
  const uint64_t mlp = MulDims(b, embed, 4, "4 x vision embed_dim");
  if (b.failed()) return 0;
  if (auto s = CheckCount(*pc, "resampler_depth", depth, max_tensors); !s) {
    b.Fail(s.error());
    return 0;
  }
  const std::string p = "model.perceiver_resampler";
  b.Param(p + ".latents", {latents, embed});
  for (uint64_t i = 0; i < depth && !b.failed(); ++i) {
    const std::string attn = Layer(p + ".blocks", i) + ".0";
    b.LayerNorm(attn + ".context_layer_norm", embed);
    b.LayerNorm(attn + ".latents_layer_norm", embed);
    if (qk_norms) {
      b.LayerNorm(attn + ".q_layer_norm", head_dim);
      b.LayerNorm(attn + ".k_layer_norm", head_dim);
    }
    for (const char* proj : {".q_proj", ".k_proj", ".v_proj"}) {
      b.Linear(attn + proj, embed, inner, false);
    }
    b.Linear(attn + ".output_proj", inner, embed, false);
    const std::string ff = Layer(p + ".blocks", i) + ".1";
    b.LayerNorm(ff + ".ln", embed);
    b.Linear(ff + ".fc", embed, mlp, false);
    b.Linear(ff + ".c_proj", mlp, embed, false);
  }
  b.LayerNorm(p + ".layer_norm", embed);
  return latents;
}

struct IdeficsTextDims {
  uint64_t hidden = 0, heads = 0, head_dim = 0, intermediate = 0;
  Dtype rotary_dtype = Dtype::kF32;  // cos_cached / sin_cached
};

// A decoder or gated cross-attention layer's attention under `p` (q/o [H, H], k/v [H, kv_in], the
// rotary buffers, RMSNorm(head_dim) q/k norms), then its MLP and norms under `l`.
void IdeficsLayer(ModelBuilder& b, const std::string& l, const std::string& p,
                  const IdeficsTextDims& t, uint64_t kv_in, bool qk_norms) {
  b.Linear(p + ".q_proj", t.hidden, t.hidden, false);
  b.Linear(p + ".k_proj", kv_in, t.hidden, false);
  b.Linear(p + ".v_proj", kv_in, t.hidden, false);
  b.Linear(p + ".o_proj", t.hidden, t.hidden, false);
  b.Buffer(p + ".rotary_emb.inv_freq", {(t.head_dim + 1) / 2}, Dtype::kF32, false);
  b.Buffer(p + ".rotary_emb.cos_cached", {kRotaryPositions, t.head_dim}, t.rotary_dtype, false);
  b.Buffer(p + ".rotary_emb.sin_cached", {kRotaryPositions, t.head_dim}, t.rotary_dtype, false);
  if (qk_norms) {
    b.RmsNorm(p + ".q_layer_norm", t.head_dim);
    b.RmsNorm(p + ".k_layer_norm", t.head_dim);
  }
  b.Linear(l + ".mlp.gate_proj", t.hidden, t.intermediate, false);
  b.Linear(l + ".mlp.down_proj", t.intermediate, t.hidden, false);
  b.Linear(l + ".mlp.up_proj", t.hidden, t.intermediate, false);
  b.RmsNorm(l + ".input_layernorm", t.hidden);
  b.RmsNorm(l + ".post_attention_layernorm", t.hidden);
}

}  // namespace

Result<Model> BuildIdefics(const HfConfig& c, const BuildOptions& options) {
  const std::string cls = HeadClass(c, options, "Idefics", "IdeficsModel");
  if (cls != "IdeficsForVisionText2Text" && cls != "IdeficsModel") {
    return UnknownHead(c, cls, "IdeficsForVisionText2Text, IdeficsModel");
  }
  ModelBuilder b(c);
  Model& m = b.model();
  m.architecture = cls;
  auto& hp = m.hp;
  // IdeficsConfig has defaults for every field; like the other builders memfit requires the
  // decoder's dimensions and takes the class defaults for the rest.
  const uint64_t vocab = Get(b, c.Uint("vocab_size"));
  const uint64_t additional = Get(b, c.UintOr("additional_vocab_size", 0));
  IdeficsTextDims t;
  t.hidden = Get(b, c.Uint("hidden_size"));
  t.intermediate = Get(b, c.Uint("intermediate_size"));
  hp.num_layers = Get(b, c.Uint("num_hidden_layers"));
  t.heads = Get(b, c.Uint("num_attention_heads"));
  const uint64_t interval = Get(b, c.UintOr("cross_layer_interval", 1));
  const bool qk_norms = Get(b, c.BoolOr("qk_layer_norms", false));
  const bool resampler = Get(b, c.BoolOr("use_resampler", false));
  const std::string alpha_type = Get(b, c.StringOr("alpha_type", "float"));
  const std::string alpha_init = Get(b, c.StringOr("alpha_initializer", "zeros"));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", false));
  hp.activation = Get(b, c.StringOr("hidden_act", "silu"));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", kRotaryPositions));
  hp.attention_dropout = hp.hidden_dropout = Get(b, c.NumberOr("dropout", 0.0));
  if (b.failed()) return b.Finish();
  MEMFIT_RETURN_IF_ERROR(CheckCount(c, "num_hidden_layers", hp.num_layers, options.max_tensors));
  t.head_dim = DivideExact(b, c, t.hidden, "hidden_size", t.heads, "num_attention_heads");
  if (interval == 0) {
    return MakeError(
        "{}: \"cross_layer_interval\" must be at least 1 (transformers divides "
        "num_hidden_layers by it)",
        c.where());
  }
  if (alpha_type != "float" && alpha_type != "vector") {
    return MakeError("{}: \"alpha_type\" = \"{}\" is not \"float\" or \"vector\"", c.where(),
                     alpha_type);
  }
  if (alpha_init != "zeros" && alpha_init != "ones" && alpha_init != "normal" &&
      alpha_init != "gaussian" && alpha_init != "random") {
    return MakeError(
        "{}: \"alpha_initializer\" = \"{}\" is not one transformers implements "
        "(zeros, ones, normal, gaussian, random)",
        c.where(), alpha_init);
  }
  if (b.failed()) return b.Finish();
  // 4.42 (accelerate's from_config) builds the caches in float32; from_pretrained builds the model
  // under the checkpoint dtype as torch's default dtype.
  t.rotary_dtype = options.buffers == BufferConvention::kCurrent ? b.dtype() : Dtype::kF32;

  hp.vocab_size = vocab + additional;  // the logits' width: lm_head plus additional_fc
  hp.hidden_size = t.hidden;
  hp.num_attention_heads = hp.num_kv_heads = t.heads;
  hp.head_dim = t.head_dim;
  hp.intermediate_size = t.intermediate;
  hp.gated_mlp = true;
  hp.norm = "rmsnorm";

  b.SetComponent("language_model");
  b.Embedding("model.embed_tokens", vocab, t.hidden);
  if (additional > 0) b.Embedding("model.embed_tokens.additional_embedding", additional, t.hidden);
  b.SetComponent("vision_model");
  const VisionDims vision = EmitIdeficsVision(b, c, options.max_tensors);
  uint64_t image_tokens = vision.positions;
  if (resampler) {
    b.SetComponent("perceiver_resampler");
    image_tokens = EmitPerceiver(b, c, vision.hidden, options.max_tensors);
  }
  if (b.failed()) return b.Finish();
  hp.encoder_max_positions = image_tokens;

  b.SetComponent("language_model");
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    IdeficsLayer(b, l, l + ".self_attn", t, t.hidden, /*qk_norms=*/false);
    LayerInfo info = DenseLayer(AttentionKind::kFull, t.heads, t.head_dim, t.intermediate);
    info.cross_attention = i % interval == 0;
    hp.layers.push_back(info);
  }
  b.SetComponent("gated_cross_attn_layers");
  const std::vector<uint64_t> alpha_shape =
      alpha_type == "vector" ? std::vector<uint64_t>{1, 1, t.hidden} : std::vector<uint64_t>{1};
  for (uint64_t i = 0; i < hp.num_layers / interval && !b.failed(); ++i) {
    const std::string l = Layer("model.gated_cross_attn_layers", i);
    b.Param(l + ".alpha_cross_attn", alpha_shape);
    b.Param(l + ".alpha_dense", alpha_shape);
    IdeficsLayer(b, l, l + ".cross_attn", t, vision.hidden, qk_norms);
  }
  b.SetComponent("language_model");
  b.RmsNorm("model.norm", t.hidden);
  if (cls == "IdeficsForVisionText2Text") {
    b.SetHead(true);
    if (hp.tie_word_embeddings) {
      b.Tied("lm_head.weight", {vocab, t.hidden}, "model.embed_tokens.weight");
      if (additional > 0) {
        b.Tied("lm_head.additional_fc.weight", {additional, t.hidden},
               "model.embed_tokens.additional_embedding.weight");
      }
    } else {
      b.Param("lm_head.weight", {vocab, t.hidden});
      if (additional > 0) b.Param("lm_head.additional_fc.weight", {additional, t.hidden});
    }
    b.SetHead(false);
  }
  b.SetComponent("");
  // _no_split_modules = ["IdeficsDecoderLayer", "IdeficsGatedCrossAttentionLayer"] (4.42 and
  // current).
  m.no_split_patterns = {"model.layers.*", "model.gated_cross_attn_layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
