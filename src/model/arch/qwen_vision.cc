// Qwen vision towers and the Qwen vision-language assembly (qwen_vision.h).

#include "model/arch/qwen_vision.h"
#include "formats/hf_config_json.h"

#include "model/arch/multimodal_kit.h"
#include "model/arch/qwen_hybrid.h"

namespace memfit::arch {
namespace {

bool Qwen25(QwenVision kind) {
  return kind == QwenVision::kQwen25Vl || kind == QwenVision::kQwen25Omni;
}
bool Qwen3(QwenVision kind) {
  return kind == QwenVision::kQwen3Vl || kind == QwenVision::kQwen3Omni;
}

// A LayerNorm (weight and bias) or, for Qwen2.5-VL and Qwen2.5-Omni, an RMSNorm (weight).
void QwenVisionNorm(ModelBuilder& b, QwenVision kind, const std::string& name, uint64_t dim) {
  if (Qwen25(kind)) {
    b.RmsNorm(name, dim);
  } else {
    b.LayerNorm(name, dim);
  }
}

// The patch merger: a norm over the vision width (or over merged patches for the Qwen3
// deepstack mergers), then two Linear layers over hidden x merge^2.
void Merger(ModelBuilder& b, const Quantization& q, QwenVision kind, const std::string& p,
            uint64_t hidden, uint64_t merged, uint64_t out, bool postshuffle_norm) {
  if (kind == QwenVision::kQwen3Vl) {
    b.LayerNorm(p + ".norm", postshuffle_norm ? merged : hidden);
    QLinear(b, q, p + ".linear_fc1", merged, merged, true);
    QLinear(b, q, p + ".linear_fc2", merged, out, true);
  } else {
    QwenVisionNorm(b, kind, p + ".ln_q", postshuffle_norm ? merged : hidden);
    QLinear(b, q, p + ".mlp.0", merged, merged, true);
    QLinear(b, q, p + ".mlp.2", merged, out, true);
  }
}

}  // namespace

void EmitQwenVision(ModelBuilder& b, const HfConfig& v, QwenVision kind, const std::string& p,
                    uint64_t text_hidden, const Quantization* quantization) {
  const Quantization none{};
  const Quantization& q = quantization ? *quantization : none;
  const bool qwen2 = kind == QwenVision::kQwen2Vl;
  // Qwen2-VL names its width "embed_dim" and the text width "hidden_size"; the others name their
  // width "hidden_size" and the text width "out_hidden_size".
  const uint64_t hidden = Get(b, qwen2 ? v.Uint("embed_dim") : v.Uint("hidden_size"));
  const uint64_t out = Get(b, qwen2 ? v.UintOr("hidden_size", text_hidden)
                                    : v.UintOr("out_hidden_size", text_hidden));
  const uint64_t depth = Get(b, v.Uint("depth"));
  const uint64_t heads = Get(b, v.Uint("num_heads"));
  const uint64_t inter = qwen2 ? MulDims(b, hidden, Get(b, v.UintOr("mlp_ratio", 4)), "mlp_ratio")
                               : Get(b, v.Uint("intermediate_size"));
  const uint64_t channels = Get(b, v.UintOr("in_channels", Get(b, v.UintOr("in_chans", 3))));
  const uint64_t patch = Get(b, v.UintOr("patch_size", 14));
  const uint64_t temporal = Get(b, v.UintOr("temporal_patch_size", 2));
  const uint64_t merge = Get(b, v.UintOr("spatial_merge_size", 2));
  std::vector<uint64_t> deepstack;
  if (auto it = v.raw().find("deepstack_visual_indexes");
      Qwen3(kind) && it != v.raw().end() && it->is_array()) {
    deepstack.resize(it->size());
  }
  if (b.failed()) return;
  const uint64_t head_dim = DivideExact(b, v, hidden, qwen2 ? "embed_dim" : "hidden_size", heads,
                                        "num_heads");
  const uint64_t merged = MulDims(b, hidden, MulDims(b, merge, merge, "spatial_merge_size^2"),
                                  "vision width x spatial_merge_size^2");
  if (b.failed()) return;
  b.Conv(p + ".patch_embed.proj", channels, hidden, {temporal, patch, patch}, Qwen3(kind));
  if (Qwen3(kind)) {
    b.Embedding(p + ".pos_embed", Get(b, v.Uint("num_position_embeddings")), hidden);
  }
  for (uint64_t i = 0; i < depth && !b.failed(); ++i) {
    const std::string l = Layer(p + ".blocks", i);
    QwenVisionNorm(b, kind, l + ".norm1", hidden);
    QwenVisionNorm(b, kind, l + ".norm2", hidden);
    if (kind == QwenVision::kQwen25Omni) {
      for (const char* x : {".attn.q", ".attn.k", ".attn.v"}) {
        QLinear(b, q, l + x, hidden, hidden, true);
      }
    } else {
      QLinear(b, q, l + ".attn.qkv", hidden, 3 * hidden, true);
    }
    QLinear(b, q, l + ".attn.proj", hidden, hidden, true);
    if (Qwen25(kind)) {
      QGatedMlp(b, q, l + ".mlp", hidden, inter, true);
    } else {
      QLinear(b, q, l + (qwen2 ? ".mlp.fc1" : ".mlp.linear_fc1"), hidden, inter, true);
      QLinear(b, q, l + (qwen2 ? ".mlp.fc2" : ".mlp.linear_fc2"), inter, hidden, true);
    }
  }
  Merger(b, q, kind, p + ".merger", hidden, merged, out, false);
  for (uint64_t k = 0; k < deepstack.size() && !b.failed(); ++k) {
    const char* list = kind == QwenVision::kQwen3Omni ? ".merger_list" : ".deepstack_merger_list";
    Merger(b, q, kind, Layer(p + list, k), hidden, merged, out, true);
  }
  // VisionRotaryEmbedding(head_dim / 2): inv_freq over arange(0, head_dim / 2, 2).
  b.Buffer(p + ".rotary_pos_emb.inv_freq", {(head_dim / 2 + 1) / 2}, Dtype::kF32, false);
}

Result<Model> BuildQwenVl(const HfConfig& c, const BuildOptions& o, const QwenVlSpec& spec) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text_config, QwenTextConfig(c));
  nlohmann::json text_json = text_config.raw();
  text_json["architectures"] = {spec.text_class};
  text_json.erase("vision_config");
  // The quantization_config names the language model's modules as the checkpoint stores them
  // (spec.text_prefix, lm_head at the top).
  CarryQuantization(c, text_json, {.model_prefixes = {spec.text_prefix + "."},
                                   .head_names = {"lm_head"}});
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, HfConfig::FromJson(std::move(text_json),
                                                            text_config.where()));
  BuildOptions text_options = o;
  text_options.head_class.clear();
  MEMFIT_ASSIGN_OR_RETURN(Model language, spec.text_builder(text, text_options));
  auto vision = c.Sub("vision_config");
  if (!vision) return vision.error();

  ModelBuilder b(c, text.torch_dtype().value_or(Dtype::kF32));
  Model& m = b.model();
  const std::string text_prefix = spec.text_prefix + ".";
  auto rename = [&](std::string& name) {
    if (name.starts_with("model.")) name = text_prefix + name.substr(6);
  };
  for (auto& t : language.tensors) {
    rename(t.name);
    if (!t.tied_to.empty()) rename(t.tied_to);
    t.component = "language_model";
    m.tensors.push_back(std::move(t));
  }
  m.hp = std::move(language.hp);
  if (c.Has("text_config")) m.hp.text_config_key = "text_config";
  m.assumptions = std::move(language.assumptions);
  m.notes = std::move(language.notes);
  // The vision tower under the same quantization_config (the top level's, or text_config's where
  // QwenTextConfig found it), its modules named as stored.
  const Quantization q = ReadQuantization(b, text_config, o);
  b.SetComponent("vision_tower");
  EmitQwenVision(b, *vision, spec.vision, spec.vision_prefix, m.hp.hidden_size, &q);
  // _no_split_modules: the text decoder layer and the vision block.
  m.no_split_patterns = {text_prefix + "layers.*", spec.vision_prefix + ".blocks.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
