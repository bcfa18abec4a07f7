// Phi-4-multimodal (microsoft/Phi-4-multimodal-instruct), two layouts (phi4mm_family.h).
// "phi4mm", the remote code (modeling_phi4mm.py, configuration_phi4mm.py, vision_siglip_navit.py,
// speech_conformer_encoder.py): model.embed_tokens, model.embed_tokens_extend.{image_embed,
// audio_embed}, model.layers.N (phi3's layer; head_dim = hidden / heads whatever "head_dim" says;
// one LongRoPE inv_freq per attention), model.norm, lm_head. Phi4MMForCausalLM wraps the decoder
// with PEFT (vision_lora, speech_lora: LoraConfig(r, target_modules = <x>_lora["layer"])), so each
// targeted nn.Linear is stored as <name>.base_layer.weight, <name>.lora_A.<adapter>.weight [r, in]
// and <name>.lora_B.<adapter>.weight [out, r] in the base dtype; a string target is matched by
// re.fullmatch against "layers.0.self_attn.qkv_proj", a list by name or dotted suffix.
//   image_embed: glb_GN [1, 1, D r^2], sub_GN [1, 1, 1, D r^2] (with_learnable_separator), the
//   SigLIP img_processor fixed in code (get_siglip_vision_model), img_projection Linear(D, H) or
//   Sequential(Linear(D r^2, H), GELU, Linear(H, H)) ("mlp"); r = 1 after avg_pool_2d, else 2.
//   audio_embed: encoder (phi4mm_audio.cc), audio_projection Linear(A, H) or, "mlp",
//   {speech, vision}: Sequential(Linear(A x downsample_rate, H), GELU, Linear(H, H)).
// "phi4_multimodal", transformers (models/phi4_multimodal/modeling_phi4_multimodal.py,
// configuration_phi4_multimodal.py; convert_phi4_multimodal_weights_to_hf.py drops the LoRA
// tensors, which ship as PEFT folders): the same decoder, then embed_tokens_extend.image_embed.
// {global_img_feature_extensor, sub_img_feature_extensor, img_processor, img_projection_up/down},
// audio_embed.{encoder, up/down_proj_for_speech, up/down_proj_for_vision_speech}, lm_head.

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <regex>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/phi4mm_family.h"

namespace memfit::arch {
namespace {

constexpr const char* kPrefix = "model.embed_tokens_extend";
// The decoder projections a LoRA config may target.
constexpr const char* kProjections[] = {"self_attn.qkv_proj", "self_attn.o_proj",
                                        "mlp.gate_up_proj", "mlp.down_proj"};

// The assumption line for the class defaults FillDefaults gave `j` ("" when none).
std::string DefaultsLine(nlohmann::json& j, const nlohmann::json& defaults, std::string_view what) {
  const std::string list = FillDefaults(j, defaults);
  if (list.empty()) return "";
  return fmt::format(
      "{}: fields absent, the config class's defaults are used (as transformers does): {}", what,
      list);
}

// The sub-config `key` of `c` ({} when absent) with the `defaults` of the class `what` names.
Result<HfConfig> SubWithDefaults(const HfConfig& c, std::string_view key,
                                 const nlohmann::json& defaults, std::string_view what,
                                 std::vector<std::string>& defaulted) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig sub, SubOrEmpty(c, key));
  nlohmann::json j = sub.raw();
  if (std::string line = DefaultsLine(j, defaults, what); !line.empty()) {
    defaulted.push_back(std::move(line));
  }
  return HfConfig::FromJson(std::move(j), sub.where());
}

// configuration_phi4_multimodal.py's class defaults: Phi4MultimodalConfig (the text model),
// Phi4MultimodalVisionConfig (SigLIP at 448 px, patch 14: also the tower the remote code's
// vision_siglip_navit.get_siglip_vision_model fixes in code) and Phi4MultimodalAudioConfig.
const nlohmann::json& Phi4Defaults() {
  static const nlohmann::json k = nlohmann::json::parse(R"({
    "text": {"vocab_size": 200064, "hidden_size": 3072, "intermediate_size": 8192,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
      "max_position_embeddings": 131072, "hidden_act": "silu"},
    "vision": {"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27,
      "num_attention_heads": 16, "num_channels": 3, "image_size": 448, "patch_size": 14},
    "audio": {"hidden_size": 1024, "intermediate_size": 1536, "num_blocks": 24,
      "num_attention_heads": 16, "ext_pw_out_channel": 1024, "depthwise_multiplier": 1,
      "kernel_size": 3, "input_size": 80, "time_reduction": 8, "bias_max_distance": 1000,
      "bias_symmetric": false, "nemo_conv_channels": 1024, "downsample_rate": 1}
  })");
  return k;
}

// Records an error unless `projection` is a projection_cls the remote code implements.
bool KnownProjection(ModelBuilder& b, const HfConfig& kwargs, const std::string& projection) {
  if (projection == "linear" || projection == "mlp") return true;
  b.Fail(MakeError("{}: projection_cls \"{}\" is not implemented by the remote code",
                   kwargs.where(), projection));
  return false;
}

// The phi3 decoder of the flat config: model_type phi3 and the causal-LM class, without the keys
// the Phi-4-multimodal attention does not read ("attention_bias": its qkv_proj/o_proj never have
// biases) and without the quantization, which this builder does not apply.
Result<Model> BuildText(const HfConfig& c, const BuildOptions& o, bool remote,
                        std::vector<std::string>& assumptions) {
  nlohmann::json j = c.raw();
  if (!j.is_object()) return MakeError("{}: the config is not a JSON object", c.where());
  j["model_type"] = "phi3";
  j["architectures"] = {"Phi3ForCausalLM"};
  j.erase("quantization_config");
  j.erase("attention_bias");
  BuildOptions text_options = o;
  text_options.head_class.clear();
  if (remote) {
    j.erase("head_dim");  // Phi4MMAttention: hidden_size // num_attention_heads
    // Each remote attention owns its rotary_emb (inv_freq [rotary / 2], non-persistent) in any
    // transformers version: the phi3 spec row's 4.42 layout.
    text_options.buffers = BufferConvention::kTransformers442;
  } else {
    const std::string line = DefaultsLine(j, Phi4Defaults()["text"], "Phi4MultimodalConfig");
    if (!line.empty()) assumptions.push_back(line);
  }
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, HfConfig::FromJson(std::move(j), c.where()));
  return BuildPhi3(text, text_options);
}

// One PEFT adapter of the remote code: config.<adapter>_lora {"r", "layer", ...}.
struct Adapter {
  std::string name;  // "vision", "speech"
  uint64_t rank = 0;
  std::optional<std::regex> pattern;  // a string target_modules
  std::vector<std::string> names;     // a list target_modules
};

Result<Adapter> ReadAdapter(const HfConfig& c, const std::string& name) {
  const std::string key = name + "_lora";
  if (!c.Has(key) || !c.raw()[key].is_object()) {
    return MakeError(
        "{}: \"{}\" must be an object {{\"r\", \"lora_alpha\", \"layer\", \"dp\"}}: "
        "Phi4MMForCausalLM asserts it and wraps the decoder with that PEFT adapter",
        c.where(), key);
  }
  MEMFIT_ASSIGN_OR_RETURN(HfConfig lora, c.Sub(key));
  Adapter a;
  a.name = name;
  MEMFIT_ASSIGN_OR_RETURN(a.rank, lora.Uint("r"));
  if (a.rank == 0) return MakeError("{}: \"r\" must be positive", lora.where());
  const auto& layer = lora.raw().contains("layer") ? lora.raw()["layer"] : nlohmann::json();
  if (layer.is_string()) {
    const auto text = layer.get<std::string>();
    if (text.size() > 256) {
      return MakeError("{}: \"layer\" is a pattern of {} characters; memfit reads at most 256",
                       lora.where(), text.size());
    }
    // std::regex throws on a pattern it cannot compile; the pattern is config text.
    try {
      a.pattern.emplace(text, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return MakeError("{}: \"layer\" is not a regular expression memfit reads: {}", lora.where(),
                       e.what());
    }
  } else if (layer.is_array()) {
    for (const auto& v : layer) {
      if (!v.is_string()) {
        return MakeError("{}: \"layer\" must be a string or a list of strings", lora.where());
      }
      a.names.push_back(v.get<std::string>());
    }
  } else {
    return MakeError("{}: missing required field \"layer\" (the adapter's target_modules)",
                     lora.where());
  }
  return a;
}

// peft check_target_module_exists for `key`, a module name under self.model.
bool Targets(ModelBuilder& b, const Adapter& a, const std::string& key) {
  if (a.pattern) {
    // std::regex reports a match too complex for it by throwing.
    try {
      return std::regex_match(key, *a.pattern);
    } catch (const std::regex_error& e) {
      b.Fail(MakeError("{}: {}_lora \"layer\" cannot be matched against \"{}\": {}", b.where(),
                       a.name, key, e.what()));
      return false;
    }
  }
  for (const auto& target : a.names) {
    if (key == target || key.ends_with("." + target)) return true;
  }
  return false;
}

// The module under self.model of a decoder projection's weight ("model.layers.3.mlp.down_proj.
// weight" -> "layers.3.mlp.down_proj"), or "" for any other tensor.
std::string ProjectionModule(const std::string& name) {
  if (!name.starts_with("model.layers.") || !name.ends_with(".weight")) return "";
  const std::string module = name.substr(6, name.size() - 6 - 7);
  for (const char* projection : kProjections) {
    if (module.ends_with(std::string(".") + projection)) return module;
  }
  return "";
}

// Moves the text model's tensors into `b` (component "language_model"), as PEFT leaves them:
// each targeted projection as base_layer with its lora_A / lora_B per adapter (components
// "vision_lora", "speech_lora"). `head` false moves the non-head tensors, true the head.
void MoveText(ModelBuilder& b, std::vector<Tensor>& text, const std::vector<Adapter>& adapters,
              bool head) {
  for (auto& t : text) {
    if (t.in_head != head || t.name.empty() || b.failed()) continue;
    t.component = "language_model";
    const std::string module = ProjectionModule(t.name);
    std::vector<const Adapter*> matched;
    if (!module.empty()) {
      for (const auto& a : adapters) {
        if (Targets(b, a, module)) matched.push_back(&a);
      }
    }
    const std::vector<uint64_t> shape = t.shape;  // [out, in]
    if (!matched.empty()) t.name = "model." + module + ".base_layer.weight";
    b.model().tensors.push_back(std::move(t));
    t.name.clear();
    if (matched.empty()) continue;
    // LoraLayer registers lora_A before lora_B, each a ModuleDict in adapter order.
    const std::string p = "model." + module;
    for (const Adapter* a : matched) {
      b.SetComponent(a->name + "_lora");
      b.Param(p + ".lora_A." + a->name + ".weight", {a->rank, shape[1]});
    }
    for (const Adapter* a : matched) {
      b.SetComponent(a->name + "_lora");
      b.Param(p + ".lora_B." + a->name + ".weight", {shape[0], a->rank});
    }
    b.SetComponent("");
  }
}

// The remote code's image_embed under kPrefix.image_embed; returns nothing (errors in `b`).
void RemoteImage(ModelBuilder& b, const HfConfig& kwargs, uint64_t text_hidden) {
  const std::string p = std::string(kPrefix) + ".image_embed";
  const bool hd = Get(b, kwargs.BoolOr("use_hd_transform", false));
  const bool separator = Get(b, kwargs.BoolOr("with_learnable_separator", false));
  const std::string projection = Get(b, kwargs.StringOr("projection_cls", "linear"));
  std::string compression;
  if (kwargs.Has("image_token_compression_cls") &&
      !kwargs.raw()["image_token_compression_cls"].is_null()) {
    compression = Get(b, kwargs.StringOr("image_token_compression_cls", ""));
  }
  if (b.failed()) return;
  if (hd != separator) {
    b.Fail(
        MakeError("{}: use_hd_transform and with_learnable_separator must be equal (the remote "
                  "code asserts it)",
                  kwargs.where()));
    return;
  }
  if (!compression.empty() && compression != "avg_pool_2d") {
    b.Fail(MakeError("{}: image_token_compression_cls \"{}\" is not implemented by the remote code",
                     kwargs.where(), compression));
    return;
  }
  if (!KnownProjection(b, kwargs, projection)) return;
  auto tower =
      HfConfig::FromJson(Phi4Defaults()["vision"], kwargs.where() + ": get_siglip_vision_model");
  if (!tower) {
    b.Fail(tower.error());
    return;
  }
  const uint64_t reduction = compression.empty() ? 2 : 1;  // base_feat_height_reduction
  const uint64_t dim = 1152, merged = dim * reduction * reduction;
  b.SetComponent("vision_projection");
  if (separator) {
    b.Param(p + ".glb_GN", {1, 1, merged});
    b.Param(p + ".sub_GN", {1, 1, 1, merged});
  }
  b.SetComponent("vision_tower");
  EmitClipVision(b, *tower, p + ".img_processor", /*siglip=*/true, /*position_ids=*/false);
  b.SetComponent("vision_projection");
  if (projection == "linear") {
    b.Linear(p + ".img_projection", dim, text_hidden, true);
  } else {
    b.Linear(p + ".img_projection.0", hd ? merged : dim, text_hidden, true);
    b.Linear(p + ".img_projection.2", text_hidden, text_hidden, true);
  }
  b.SetComponent("");
}

// The remote code's audio_embed under kPrefix.audio_embed.
void RemoteAudio(ModelBuilder& b, const HfConfig& c, const HfConfig& kwargs, uint64_t text_hidden) {
  const std::string p = std::string(kPrefix) + ".audio_embed";
  auto processor = c.Sub("audio_processor");
  if (!processor) {
    b.Fail(processor.error());
    return;
  }
  if (Get(b, processor->StringOr("name", "")) != "cascades") {
    b.Fail(MakeError("{}: only the \"cascades\" audio processor is implemented by the remote code",
                     processor->where()));
    return;
  }
  auto encoder = processor->Sub("config");
  if (!encoder) {
    b.Fail(encoder.error());
    return;
  }
  const uint64_t downsample = Get(b, kwargs.UintOr("downsample_rate", 1));
  const std::string projection = Get(b, kwargs.StringOr("projection_cls", "linear"));
  const ConformerDims d = ReadRemoteConformer(b, *encoder, downsample);
  if (b.failed()) return;
  if (!KnownProjection(b, kwargs, projection)) return;
  b.SetComponent("audio_tower");
  EmitConformer(b, p + ".encoder", d, /*native_names=*/false);
  b.SetComponent("audio_projection");
  if (projection == "linear") {
    b.Linear(p + ".audio_projection", d.hidden, text_hidden, true);
  } else {
    const uint64_t in = MulDims(b, d.hidden, d.downsample_rate, "attention_dim x downsample_rate");
    for (const char* mode : {"speech", "vision"}) {
      b.Linear(p + ".audio_projection." + mode + ".0", in, text_hidden, true);
      b.Linear(p + ".audio_projection." + mode + ".2", text_hidden, text_hidden, true);
    }
  }
  b.SetComponent("");
}

// What every composite does with the text model's facts once its tensors are in `m`.
void TakeTextFacts(Model& m, Model& text, std::vector<std::string>&& defaulted) {
  m.hp = text.hp;
  for (auto& a : text.assumptions) {
    if (std::find(m.assumptions.begin(), m.assumptions.end(), a) == m.assumptions.end()) {
      m.assumptions.push_back(std::move(a));
    }
  }
  for (auto& n : text.notes) m.notes.push_back(std::move(n));
  for (auto& a : defaulted) m.assumptions.push_back(std::move(a));
  m.base_model_prefix = "model.";
}

}  // namespace

Result<Model> BuildPhi4Mm(const HfConfig& c, const BuildOptions& o) {
  std::vector<std::string> defaulted;
  MEMFIT_ASSIGN_OR_RETURN(Model text, BuildText(c, o, /*remote=*/true, defaulted));
  std::vector<Adapter> adapters;
  for (const char* name : {"vision", "speech"}) {
    MEMFIT_ASSIGN_OR_RETURN(Adapter a, ReadAdapter(c, name));
    adapters.push_back(std::move(a));
  }
  ModelBuilder b(c);
  Model& m = b.model();
  if (m.architecture.empty()) m.architecture = "Phi4MMForCausalLM";
  // Phi4MMModel registers embed_tokens, embed_tokens_extend, layers, norm: the towers come right
  // after the token embeddings.
  const auto is_embed = [](const Tensor& t) { return t.name.starts_with("model.embed_tokens."); };
  for (auto& t : text.tensors) {
    if (is_embed(t)) {
      t.component = "language_model";
      m.tensors.push_back(std::move(t));
      t.name.clear();
    }
  }
  const uint64_t hidden = text.hp.hidden_size;
  const auto& raw = c.raw();
  if (raw.contains("embd_layer") && raw["embd_layer"].is_object()) {
    // Phi4MMImageAudioEmbedding(config, **embd_layer) reads both kwargs dicts.
    MEMFIT_ASSIGN_OR_RETURN(HfConfig embd, c.Sub("embd_layer"));
    MEMFIT_ASSIGN_OR_RETURN(HfConfig image, embd.Sub("image_embd_layer"));
    MEMFIT_ASSIGN_OR_RETURN(HfConfig audio, embd.Sub("audio_embd_layer"));
    RemoteImage(b, image, hidden);
    RemoteAudio(b, c, audio, hidden);
    m.notes.push_back(
        "the image encoder's dimensions are fixed by the remote code "
        "(vision_siglip_navit.get_siglip_vision_model: SigLIP hidden 1152, intermediate 4304, 27 "
        "layers, 16 heads, 448 px, patch 14), not read from config.json");
  } else {
    m.notes.push_back(c.where() +
                      ": no \"embd_layer\" object: Phi4MMModel builds no "
                      "embed_tokens_extend, only the decoder and its adapters");
  }
  MoveText(b, text.tensors, adapters, /*head=*/false);
  MoveText(b, text.tensors, adapters, /*head=*/true);
  if (b.failed()) return b.Finish();
  TakeTextFacts(m, text, std::move(defaulted));
  NoteQuantizationNotApplied(c, m);
  // Phi4MMPreTrainedModel._no_split_modules: ["Phi4MMDecoderLayer"] (the towers are plain
  // nn.Modules, not PreTrainedModels, so they add none).
  m.no_split_patterns = {"model.layers.*"};
  return b.Finish();
}

Result<Model> BuildPhi4Multimodal(const HfConfig& c, const BuildOptions& o) {
  std::vector<std::string> defaulted;
  MEMFIT_ASSIGN_OR_RETURN(Model text, BuildText(c, o, /*remote=*/false, defaulted));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision,
                          SubWithDefaults(c, "vision_config", Phi4Defaults()["vision"],
                                          "vision_config (Phi4MultimodalVisionConfig)", defaulted));
  nlohmann::json audio_defaults = Phi4Defaults()["audio"];
  // Spelled "seperable" by the first releases of the class, "separable" later.
  if (!c.raw().contains("audio_config") || !c.raw()["audio_config"].is_object() ||
      !c.raw()["audio_config"].contains("depthwise_seperable_out_channel")) {
    audio_defaults["depthwise_separable_out_channel"] = 1024;
  }
  MEMFIT_ASSIGN_OR_RETURN(HfConfig audio,
                          SubWithDefaults(c, "audio_config", audio_defaults,
                                          "audio_config (Phi4MultimodalAudioConfig)", defaulted));

  ModelBuilder b(c);
  Model& m = b.model();
  if (m.architecture.empty()) m.architecture = "Phi4MultimodalForCausalLM";
  const uint64_t hidden = text.hp.hidden_size;
  // Phi4MultimodalModel registers embed_tokens, layers, norm, then embed_tokens_extend.
  MoveText(b, text.tensors, {}, /*head=*/false);
  const std::string image = std::string(kPrefix) + ".image_embed";
  const std::string speech = std::string(kPrefix) + ".audio_embed";
  const uint64_t dim = Get(b, vision.Uint("hidden_size"));
  const ConformerDims d = ReadNativeConformer(b, audio);
  if (b.failed()) return b.Finish();
  b.SetComponent("vision_projection");
  b.Param(image + ".global_img_feature_extensor", {1, 1, dim});
  b.Param(image + ".sub_img_feature_extensor", {1, 1, 1, dim});
  b.SetComponent("vision_tower");
  EmitClipVision(b, vision, image + ".img_processor", /*siglip=*/true, /*position_ids=*/false);
  b.SetComponent("vision_projection");
  b.Linear(image + ".img_projection_up", dim, hidden, true);
  b.Linear(image + ".img_projection_down", hidden, hidden, true);
  b.SetComponent("audio_tower");
  EmitConformer(b, speech + ".encoder", d, /*native_names=*/true);
  b.SetComponent("audio_projection");
  const uint64_t in = MulDims(b, d.hidden, d.downsample_rate, "hidden_size x downsample_rate");
  b.Linear(speech + ".up_proj_for_speech", in, hidden, true);
  b.Linear(speech + ".down_proj_for_speech", hidden, hidden, true);
  b.Linear(speech + ".up_proj_for_vision_speech", in, hidden, true);
  b.Linear(speech + ".down_proj_for_vision_speech", hidden, hidden, true);
  b.SetComponent("");
  MoveText(b, text.tensors, {}, /*head=*/true);
  if (b.failed()) return b.Finish();
  TakeTextFacts(m, text, std::move(defaulted));
  NoteQuantizationNotApplied(c, m);
  m.notes.push_back(
      "the vision and speech LoRA adapters of this layout are separate PEFT folders "
      "(vision-lora/, speech-lora/), not part of this checkpoint: load them to add their tensors");
  // Phi4MultimodalPreTrainedModel._no_split_modules plus those of the two PreTrainedModel
  // towers (Phi4MultimodalVisionEncoderLayer, Phi4MultimodalAudioConformerEncoderLayer).
  m.no_split_patterns = {"model.layers.*", image + ".img_processor.encoder.layers.*",
                         speech + ".encoder.encoders.*"};
  return b.Finish();
}

}  // namespace memfit::arch
