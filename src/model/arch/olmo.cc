// AI2 OLMo: olmo (llama layout with parameter-free LayerNorms: no norm tensors at all) and
// olmo2 (no input norm; q_norm/k_norm over the whole projection, post-attention and
// post-feed-forward RMSNorms). Cohere: cohere (parallel attention + MLP after one weight-only
// LayerNorm, optional per-head q_norm [heads, head_dim] / k_norm, tied embeddings) and cohere2
// (same tensors, 3 sliding : 1 global layers). EXAONE 4.0: exaone4 (olmo2's layer with per-head
// q_norm/k_norm [head_dim], sliding layers from "layer_types" or "sliding_window_pattern").
// OLMo 3: olmo3 (olmo2's tensors; sliding layers from "layer_types", else 3 sliding : 1 global,
// "sliding_window" 4096 by default).
// Sources: transformers/models/{olmo,olmo2,cohere,cohere2}/modeling_*.py,
// transformers/models/{exaone4/modular_exaone4.py, olmo3/modular_olmo3.py}.

#include <optional>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

enum class Kind : uint8_t { kOlmo, kOlmo2, kOlmo3, kCohere, kCohere2, kExaone4 };

// Exaone4Config: "sliding_window" null means no sliding layer at all; otherwise "layer_types"
// when present, else "sliding_window_pattern": an integer N (every N-th layer global, default 4)
// or a string of 'L' (local) and 'G' (global) repeated from layer 0, whose last layer is global.
// Asked per layer, so a hostile layer count allocates nothing here.
struct Exaone4Sliding {
  Exaone4Sliding(ModelBuilder& b, const HfConfig& c, uint64_t layers, uint64_t window)
      : layers(layers), window(window) {
    types = LayerTypesOrEmpty(b, c, layers);
    const auto it = c.raw().find("sliding_window_pattern");
    if (b.failed() || it == c.raw().end() || it->is_null()) return;
    if (it->is_string()) {
      letters = it->get<std::string>();
      if (letters.empty() || letters.find_first_not_of("LG") != std::string::npos) {
        b.Fail(MakeError("{}: field \"sliding_window_pattern\" must be an integer or a string "
                         "of 'L' and 'G'", c.where()));
      }
      return;
    }
    every = Get(b, c.Uint("sliding_window_pattern"));
    if (!b.failed() && every == 0) {
      b.Fail(MakeError("{}: field \"sliding_window_pattern\" must not be zero", c.where()));
    }
  }
  bool operator()(uint64_t i) const {
    if (window == 0) return false;
    if (!types.empty()) return types[i];
    if (letters.empty()) return (i + 1) % every != 0;
    return i + 1 != layers && letters[i % letters.size()] == 'L';
  }
  uint64_t layers, window, every = 4;
  std::vector<bool> types;
  std::string letters;
};

Result<Model> BuildOlmoCohere(const HfConfig& c, const BuildOptions& o, Kind kind) {
  ModelBuilder b(c);
  Model& m = b.model();
  const bool cohere = kind == Kind::kCohere || kind == Kind::kCohere2;
  const bool olmo2_norms = kind == Kind::kOlmo2 || kind == Kind::kOlmo3;
  const bool post_norms = olmo2_norms || kind == Kind::kExaone4;
  ReadDecoderBasics(b, c, {.tie = cohere});
  auto& hp = m.hp;
  hp.norm = post_norms ? "rmsnorm" : "layernorm";
  hp.gated_mlp = true;
  const bool bias = Get(b, c.BoolOr("attention_bias", false));
  const bool qk_norm = kind == Kind::kCohere && Get(b, c.BoolOr("use_qk_norm", false));
  uint64_t window = kind == Kind::kCohere2 || kind == Kind::kOlmo3
                        ? Get(b, c.UintOr("sliding_window", 4096)) : 0;
  if (kind == Kind::kExaone4) {  // Exaone4Config: absent -> 4096, null -> no sliding layers
    const auto it = c.raw().find("sliding_window");
    window = it != c.raw().end() && it->is_null() ? 0 : Get(b, c.UintOr("sliding_window", 4096));
  }
  // Cohere2: "sliding_window_pattern"; Olmo3Config.__post_init__: every 4th layer global.
  const uint64_t pattern = kind == Kind::kCohere2 ? Get(b, c.UintOr("sliding_window_pattern", 4))
                           : kind == Kind::kOlmo3 ? 4 : 1;
  if (!b.failed() && pattern == 0) {
    b.Fail(MakeError("{}: field \"sliding_window_pattern\" must not be zero", c.where()));
  }
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  std::vector<bool> sliding;
  std::optional<Exaone4Sliding> exaone4_sliding;
  if (kind == Kind::kExaone4) {
    exaone4_sliding.emplace(b, c, hp.num_layers, window);
  } else {
    sliding = SlidingLayers(b, c, hp.num_layers, [&](uint64_t i) {
      return (kind == Kind::kCohere2 || kind == Kind::kOlmo3) && (i + 1) % pattern != 0;
    });
  }
  const uint64_t h = hp.hidden_size, hd = hp.head_dim, nh = hp.num_attention_heads,
                 nkv = hp.num_kv_heads, inter = hp.intermediate_size;
  const bool per_layer_rotary = o.buffers == BufferConvention::kTransformers442 &&
                                (kind == Kind::kOlmo || kind == Kind::kCohere);
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    if (cohere) b.Param(l + ".input_layernorm.weight", {h});  // CohereLayerNorm: no bias
    QLinear(b, q, l + ".self_attn.q_proj", h, nh * hd, bias);
    QLinear(b, q, l + ".self_attn.k_proj", h, nkv * hd, bias);
    QLinear(b, q, l + ".self_attn.v_proj", h, nkv * hd, bias);
    QLinear(b, q, l + ".self_attn.o_proj", nh * hd, h, bias);
    if (olmo2_norms) {
      b.RmsNorm(l + ".self_attn.q_norm", nh * hd);
      b.RmsNorm(l + ".self_attn.k_norm", nkv * hd);
    }
    if (kind == Kind::kExaone4) {
      b.RmsNorm(l + ".self_attn.q_norm", hd);
      b.RmsNorm(l + ".self_attn.k_norm", hd);
    }
    if (qk_norm) {
      b.Param(l + ".self_attn.q_norm.weight", {nh, hd});
      b.Param(l + ".self_attn.k_norm.weight", {nkv, hd});
    }
    if (per_layer_rotary) {
      b.Buffer(l + ".self_attn.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
    }
    QLinear(b, q, l + ".mlp.gate_proj", h, inter, false);
    QLinear(b, q, l + ".mlp.up_proj", h, inter, false);
    QLinear(b, q, l + ".mlp.down_proj", inter, h, false);
    if (post_norms) {
      b.RmsNorm(l + ".post_attention_layernorm", h);
      b.RmsNorm(l + ".post_feedforward_layernorm", h);
    }
    LayerInfo info =
        AttentionInfo(hp, exaone4_sliding ? (*exaone4_sliding)(i) : sliding[i], window);
    info.intermediate_size = inter;
    hp.layers.push_back(info);
  }
  if (post_norms) b.RmsNorm("model.norm", h);
  if (cohere) b.Param("model.norm.weight", {h});
  if (!per_layer_rotary) b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  if (kind == Kind::kOlmo) m.notes.push_back("OLMo's LayerNorms have no parameters");
  return FinishDecoder(b, c, o, q);
}

}  // namespace

Result<Model> BuildOlmo(const HfConfig& c, const BuildOptions& o) {
  return BuildOlmoCohere(c, o, Kind::kOlmo);
}
Result<Model> BuildOlmo2(const HfConfig& c, const BuildOptions& o) {
  return BuildOlmoCohere(c, o, Kind::kOlmo2);
}
Result<Model> BuildOlmo3(const HfConfig& c, const BuildOptions& o) {
  return BuildOlmoCohere(c, o, Kind::kOlmo3);
}
Result<Model> BuildExaone4(const HfConfig& c, const BuildOptions& o) {
  return BuildOlmoCohere(c, o, Kind::kExaone4);
}
Result<Model> BuildCohere(const HfConfig& c, const BuildOptions& o) {
  return BuildOlmoCohere(c, o, Kind::kCohere);
}
Result<Model> BuildCohere2(const HfConfig& c, const BuildOptions& o) {
  return BuildOlmoCohere(c, o, Kind::kCohere2);
}

}  // namespace memfit::arch
