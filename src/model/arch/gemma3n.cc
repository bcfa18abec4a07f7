// Gemma 3n: gemma3n (Gemma3nForConditionalGeneration) and gemma3n_text (Gemma3nForCausalLM), as
// transformers models/gemma3n/modeling_gemma3n.py and configuration_gemma3n.py build them and
// google/gemma-3n-E{2,4}B(-it) store them (model.language_model.*, model.vision_tower.timm_model.*,
// model.audio_tower.*, model.embed_vision.*, model.embed_audio.*; lm_head tied, not stored).
// Text model: embed_tokens; per-layer inputs (embed_tokens_per_layer [vocab_size_per_layer_input,
// L x P], per_layer_model_projection, per_layer_projection_norm); AltUp's altup_projections and
// altup_unembed_projections (altup_num_inputs - 1 each); norm. Each layer (TextLayer): attention
// with q/k norms, an MLP of the layer's width ("intermediate_size" may list one per layer:
// MatFormer), four norms, altup, laurel and the per-layer input gate. The last
// "num_kv_shared_layers" keep their k/v projections but read an earlier layer's cache
// (LayerInfo kv_shared). "activation_sparsity_pattern" is a run-time top-k: a note, no tensors.
// Non-persistent buffers: the embed scales, per_layer_projection_scale, per_layer_input_scale,
// each router_input_scale and v_norm weight, one rotary inv_freq per layer type present.
// Gemma3nMultimodalEmbedder (embed_vision, embed_audio): embedding, hard/soft embedding norms,
// embedding_projection, a weightless post-projection norm. The towers: mobilenetv5.cc and
// gemma3n_audio.cc.

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/gemma3n_family.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/quantization.h"
#include "model/hparams/config_keys.h"

namespace memfit::arch {
namespace {

// transformers builds any layer count; a config past this is taken for a corrupt one before
// per-layer lists are allocated (the tensor cap would stop the build later anyway).
constexpr uint64_t kMaxLayers = uint64_t{1} << 16;

// "intermediate_size": one width for every layer, or one per layer (Gemma3nTextConfig accepts
// both and requires a list to have num_hidden_layers entries).
std::vector<uint64_t> LayerWidths(ModelBuilder& b, const HfConfig& c, uint64_t layers) {
  auto it = c.raw().find("intermediate_size");
  if (it == c.raw().end() || !it->is_array()) {
    return std::vector<uint64_t>(layers, Get(b, c.Uint("intermediate_size")));
  }
  std::vector<uint64_t> widths = UintList(b, c, "intermediate_size", {}, kMaxLayers);
  if (!b.failed() &&
      (widths.size() != layers || std::find(widths.begin(), widths.end(), 0) != widths.end())) {
    b.Fail(
        MakeError("{}: \"intermediate_size\" lists {} widths for {} layers (one positive width "
                  "per layer, as Gemma3nTextConfig requires)",
                  c.where(), widths.size(), layers));
    return {};
  }
  return widths;
}

// How many layers "activation_sparsity_pattern" makes sparse (> 0); its default is the first 10
// layers at 0.95 when there are more than 10 layers.
uint64_t SparseLayers(ModelBuilder& b, const HfConfig& c, uint64_t layers) {
  auto it = c.raw().find("activation_sparsity_pattern");
  if (it == c.raw().end() || it->is_null()) return layers > 10 ? 10 : 0;
  if (!it->is_array() || it->size() != layers) {
    b.Fail(
        MakeError("{}: \"activation_sparsity_pattern\" must list one value per layer ({} "
                  "layers)",
                  c.where(), layers));
    return 0;
  }
  uint64_t sparse = 0;
  for (const auto& v : *it) {
    if (!v.is_number()) {
      b.Fail(MakeError("{}: \"activation_sparsity_pattern\" entries must be numbers", c.where()));
      return 0;
    }
    sparse += v.get<double>() > 0.0 ? 1 : 0;
  }
  return sparse;
}

// Gemma3nTextConfig's defaults for the fields the config leaves out (a text config nested in a
// gemma3n one has them already: TextSubConfig applied the same table).
HfConfig WithClassDefaults(const HfConfig& c, std::vector<std::string>& assumptions) {
  const nlohmann::json* defaults = hparams::ConfigClassDefaults("gemma3n_text");
  if (!defaults) return c;
  nlohmann::json j = c.raw();
  const std::string list = FillDefaults(j, *defaults);
  if (list.empty()) return c;
  assumptions.push_back(
      "fields absent, Gemma3nTextConfig's defaults are used (as transformers does): " + list);
  auto out = HfConfig::FromJson(std::move(j), c.where());
  return out ? *out : c;
}

struct TextDims {
  uint64_t per_layer = 0;  // P: "hidden_size_per_layer_input"
  uint64_t altup = 0;      // A: "altup_num_inputs"
  uint64_t laurel_rank = 0;
  uint64_t window = 0;
  bool bias = false;  // "attention_bias"
};

LayerInfo TextLayer(ModelBuilder& b, const Quantization& q, const std::string& l, uint64_t width,
                    bool sliding, bool shared, const TextDims& d) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size, hd = hp.head_dim;
  const uint64_t q_width = MulDims(b, hp.num_attention_heads, hd, "num_attention_heads x head_dim");
  const uint64_t kv_width = MulDims(b, hp.num_kv_heads, hd, "num_key_value_heads x head_dim");
  QLinear(b, q, l + ".self_attn.q_proj", h, q_width, d.bias);
  QLinear(b, q, l + ".self_attn.k_proj", h, kv_width, d.bias);
  QLinear(b, q, l + ".self_attn.v_proj", h, kv_width, d.bias);
  QLinear(b, q, l + ".self_attn.o_proj", q_width, h, d.bias);
  b.RmsNorm(l + ".self_attn.q_norm", hd);
  b.RmsNorm(l + ".self_attn.k_norm", hd);
  b.Buffer(l + ".self_attn.v_norm.weight", {}, b.dtype(), false);
  QGatedMlp(b, q, l + ".mlp", h, width);
  for (const char* norm : {".input_layernorm", ".post_attention_layernorm",
                           ".pre_feedforward_layernorm", ".post_feedforward_layernorm"}) {
    b.RmsNorm(l + norm, h);
  }
  const std::string a = l + ".altup";
  b.Param(a + ".correct_output_scale", {h});
  QLinear(b, q, a + ".correction_coefs", d.altup, d.altup, false);
  QLinear(b, q, a + ".prediction_coefs", d.altup, MulDims(b, d.altup, d.altup, "altup^2"), false);
  QLinear(b, q, a + ".modality_router", h, d.altup, false);
  b.RmsNorm(a + ".router_norm", h);
  b.Buffer(a + ".router_input_scale", {}, b.dtype(), false);
  QLinear(b, q, l + ".laurel.linear_left", h, d.laurel_rank, false);
  QLinear(b, q, l + ".laurel.linear_right", d.laurel_rank, h, false);
  b.RmsNorm(l + ".laurel.post_laurel_norm", h);
  QLinear(b, q, l + ".per_layer_input_gate", h, d.per_layer, false);
  QLinear(b, q, l + ".per_layer_projection", d.per_layer, h, false);
  b.RmsNorm(l + ".post_per_layer_input_norm", h);
  LayerInfo info = AttentionInfo(hp, sliding, d.window);
  info.kv_shared = shared;
  info.intermediate_size = width;
  return info;
}

// Gemma3nMultimodalEmbedder under `p` for a tower of `hidden` channels.
void Embedder(ModelBuilder& b, const Quantization& q, const std::string& p, uint64_t vocab,
              uint64_t hidden, uint64_t text_hidden) {
  b.Embedding(p + ".embedding", vocab, hidden);
  b.RmsNorm(p + ".hard_embedding_norm", hidden);
  b.RmsNorm(p + ".soft_embedding_norm", hidden);
  QLinear(b, q, p + ".embedding_projection", hidden, text_hidden, false);
  b.Buffer(p + ".embedding_post_projection_norm.weight", {}, b.dtype(), false);
}

}  // namespace

Result<Model> BuildGemma3nText(const HfConfig& config, const BuildOptions& o) {
  std::vector<std::string> defaulted;
  const HfConfig c = WithClassDefaults(config, defaulted);
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  for (auto& a : defaulted) m.assumptions.push_back(std::move(a));
  {
    // ReadDecoderBasics reads one intermediate_size; LayerWidths reads a list too.
    nlohmann::json basics = c.raw();
    basics.erase("intermediate_size");
    auto basic = HfConfig::FromJson(std::move(basics), c.where());
    if (!basic) return basic.error();
    ReadDecoderBasics(b, *basic,
                      {.tie = true,
                       .act_key = "hidden_activation",
                       .act_default = "gelu_pytorch_tanh",
                       .need_intermediate = false});
  }
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  TextDims d;
  d.per_layer = Get(b, c.Uint("hidden_size_per_layer_input"));
  d.altup = Get(b, c.Uint("altup_num_inputs"));
  d.laurel_rank = Get(b, c.Uint("laurel_rank"));
  d.window = Get(b, c.UintOr("sliding_window", 512));
  d.bias = Get(b, c.BoolOr("attention_bias", false));
  const uint64_t per_layer_vocab = Get(b, c.Uint("vocab_size_per_layer_input"));
  const uint64_t shared_layers = Get(b, c.Uint("num_kv_shared_layers"));
  const Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const uint64_t layers = hp.num_layers;
  if (layers > kMaxLayers) {
    return MakeError("{}: \"num_hidden_layers\" = {} is absurdly large", c.where(), layers);
  }
  if (d.altup == 0) {
    return MakeError("{}: \"altup_num_inputs\" must be at least 1", c.where());
  }
  // Gemma3nTextAttention looks up, for every layer, the last layer of its type before the shared
  // range: none exists when every layer is shared.
  if (shared_layers > 0 && shared_layers >= layers) {
    return MakeError(
        "{}: \"num_kv_shared_layers\" = {} must be less than \"num_hidden_layers\" "
        "= {}",
        c.where(), shared_layers, layers);
  }
  const std::vector<uint64_t> widths = LayerWidths(b, c, layers);
  // Gemma3nTextConfig's default pattern: every fifth layer full attention.
  const std::vector<bool> sliding =
      SlidingLayers(b, c, layers, [](uint64_t i) { return (i + 1) % 5 != 0; });
  const uint64_t sparse = SparseLayers(b, c, layers);
  if (b.failed()) return b.Finish();
  const uint64_t first_shared = layers - shared_layers;
  // Which types a layer before the shared range has ([0]: full, [1]: sliding).
  bool before[2] = {false, false};
  for (uint64_t j = 0; j < first_shared; ++j) before[sliding[j] ? 1 : 0] = true;
  for (uint64_t i = first_shared; i < layers; ++i) {
    if (!before[sliding[i] ? 1 : 0]) {
      return MakeError(
          "{}: layer {} ({}) shares the KV cache of an earlier layer of its type, "
          "but none precedes the shared range (layers {} on): transformers cannot "
          "build this config",
          c.where(), i, sliding[i] ? "sliding_attention" : "full_attention", first_shared);
    }
  }
  hp.intermediate_size = widths.empty() ? 0 : *std::max_element(widths.begin(), widths.end());

  const uint64_t h = hp.hidden_size;
  const uint64_t per_layer_width =
      MulDims(b, layers, d.per_layer, "num_hidden_layers x hidden_size_per_layer_input");
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  b.Buffer("model.embed_tokens.embed_scale", {}, Dtype::kF32, false);
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    hp.layers.push_back(
        TextLayer(b, q, Layer("model.layers", i), widths[i], sliding[i], i >= first_shared, d));
  }
  b.RmsNorm("model.norm", h);
  for (const bool slides : {true, false}) {  // one inv_freq per layer type present
    if (std::find(sliding.begin(), sliding.end(), slides) == sliding.end()) continue;
    b.Buffer(fmt::format("model.rotary_emb.{}_attention_inv_freq", slides ? "sliding" : "full"),
             {hp.head_dim / 2}, Dtype::kF32, false);
  }
  b.Embedding("model.embed_tokens_per_layer", per_layer_vocab, per_layer_width);
  b.Buffer("model.embed_tokens_per_layer.embed_scale", {}, Dtype::kF32, false);
  QLinear(b, q, "model.per_layer_model_projection", h, per_layer_width, false);
  b.RmsNorm("model.per_layer_projection_norm", d.per_layer);
  for (const char* list : {"model.altup_projections", "model.altup_unembed_projections"}) {
    for (uint64_t i = 0; i + 1 < d.altup && !b.failed(); ++i) {
      QLinear(b, q, Layer(list, i), h, h, false);
    }
  }
  b.Buffer("model.per_layer_projection_scale", {}, b.dtype(), false);
  b.Buffer("model.per_layer_input_scale", {}, b.dtype(), false);
  if (sparse > 0) {
    m.notes.push_back(fmt::format(
        "activation sparsity: {} of {} layers cut gate_proj's output at a Gaussian top-k "
        "(\"activation_sparsity_pattern\") at run time; it stores no tensors and leaves the "
        "weights dense",
        sparse, layers));
  }
  if (shared_layers > 0) {
    m.notes.push_back(fmt::format(
        "KV sharing: the last {} layers reuse the cache of the last earlier layer of their type "
        "and hold none of their own; they still store their k/v projections",
        shared_layers));
  }
  return FinishDecoder(b, c, o, q);
}

Result<Model> BuildGemma3n(const HfConfig& c, const BuildOptions& o) {
  std::vector<std::string> defaulted;
  const LanguageModelNames names{{"model.language_model."}, {"lm_head"}};
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, TextSubConfig(c, "text_config", "gemma3n_text",
                                                       "Gemma3nForCausalLM", defaulted, names));
  MEMFIT_ASSIGN_OR_RETURN(Model language,
                          BuildTextOfType(c, text, "gemma3n_text", BuildGemma3nText, o));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, SubOrEmpty(c, "vision_config"));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig audio, SubOrEmpty(c, "audio_config"));

  ModelBuilder b(c);
  Model& m = b.model();
  if (m.architecture.empty()) m.architecture = "Gemma3nForConditionalGeneration";
  // Every nn.Linear of the towers and embedders as a quantization_config stores it (QLinear);
  // timm's convolutions are nn.Conv2d, which the weight quantizers leave alone.
  const Quantization q = ReadQuantization(b, c, o);
  const uint64_t text_hidden = language.hp.hidden_size;
  const std::string architecture = Get(b, vision.StringOr("architecture", "mobilenetv5_300m_enc"));
  if (auto args = vision.raw().find("model_args");
      args != vision.raw().end() && !args->is_null() && !args->empty()) {
    b.Fail(
        MakeError("{}: vision_config.model_args (keyword arguments to timm.create_model) are "
                  "not modelled; the safetensors headers give an exact answer",
                  c.where()));
  }
  std::string vision_defaults = vision.Has("architecture") ? "" : "architecture = " + architecture;
  const uint64_t vision_hidden = DefaultedUint(b, vision, "hidden_size", 2048, vision_defaults);
  const uint64_t vision_vocab = DefaultedUint(b, vision, "vocab_size", 128, vision_defaults);
  if (b.failed()) return b.Finish();
  b.SetComponent("vision_tower");
  const uint64_t channels =
      EmitMobileNetV5Encoder(b, architecture, "model.vision_tower.timm_model");
  b.SetComponent("audio_tower");
  std::string audio_defaults;
  EmitGemma3nAudioEncoder(b, q, audio, "model.audio_tower", audio_defaults);
  const uint64_t audio_hidden = Get(b, audio.UintOr("hidden_size", 1536));
  const uint64_t audio_vocab = DefaultedUint(b, audio, "vocab_size", 128, audio_defaults);
  b.SetComponent("embed_vision");
  Embedder(b, q, "model.embed_vision", vision_vocab, vision_hidden, text_hidden);
  b.SetComponent("embed_audio");
  Embedder(b, q, "model.embed_audio", audio_vocab, audio_hidden, text_hidden);
  b.SetComponent("");
  if (b.failed()) return b.Finish();

  for (const auto& [key, cls, list] : {std::tuple{"vision", "Vision", &vision_defaults},
                                       std::tuple{"audio", "Audio", &audio_defaults}}) {
    if (list->empty()) continue;
    m.assumptions.push_back(fmt::format(
        "{}_config: fields absent, Gemma3n{}Config's defaults are used (as transformers does): {}",
        key, cls, *list));
  }
  m.assumptions.push_back(
      "vision tower: config.json names only timm's \"mobilenetv5_300m_enc\"; its tensors are "
      "timm's definition of it (equal to timm's state_dict), and no gemma-3n weight index was "
      "available to check the stored bytes against");
  if (channels != 0 && vision_hidden != channels) {
    m.assumptions.push_back(fmt::format(
        "vision_config.hidden_size = {} differs from the MobileNetV5 encoder's {} output "
        "channels: embed_vision is built on {} as transformers builds it (images would fail to "
        "embed at run time)",
        vision_hidden, channels, vision_hidden));
  }
  AppendLanguageModel(m, std::move(language), c, std::move(defaulted), "model.language_model",
                      "lm_head", "language_model");
  // Gemma3nPreTrainedModel._no_split_modules: ["Gemma3nTextDecoderLayer"].
  m.no_split_patterns = {"model.language_model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
