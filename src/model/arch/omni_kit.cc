#include "model/arch/omni_kit.h"

#include <fmt/format.h>

#include <algorithm>

#include "formats/hf_config_json.h"
#include "model/arch/multimodal_kit.h"

namespace memfit::arch {

Result<OmniPart> OmniContext::Sub(
    const HfConfig& parent, std::string_view key, std::string_view label,
    std::initializer_list<std::pair<std::string_view, std::string_view>> aliases) {
  nlohmann::json sub = nlohmann::json::object();
  if (auto it = parent.raw().find(std::string(key)); it != parent.raw().end() && !it->is_null()) {
    MEMFIT_ASSIGN_OR_RETURN(HfConfig config, parent.Sub(key));
    sub = config.raw();
  }
  for (const auto& [alias, field] : aliases) {
    const std::string name(field);
    if (auto it = sub.find(std::string(alias));
        it != sub.end() && !it->is_null() && (!sub.contains(name) || sub[name].is_null())) {
      sub[name] = *it;
    }
  }
  const std::string list = FillDefaults(sub, defaults.at(std::string(label)), true);
  if (!list.empty()) {
    assumptions.push_back(fmt::format(
        "{}: fields absent, the config class's defaults are used (as transformers does): {}", label,
        list));
  }
  MEMFIT_ASSIGN_OR_RETURN(HfConfig config,
                          HfConfig::FromJson(sub, fmt::format("{}: {}", top.where(), label)));
  return OmniPart{std::move(sub), std::move(config)};
}

Result<Model> OmniContext::Decoder(OmniPart& part, std::string_view type, std::string_view cls,
                                   ArchitectureBuilderFn builder,
                                   std::initializer_list<const HfConfig*> dtypes) {
  nlohmann::json& j = part.json;
  j["model_type"] = std::string(type);
  j["architectures"] = {std::string(cls)};
  const auto dtype_of = [](const nlohmann::json& c) -> const nlohmann::json* {
    for (const char* key : {"torch_dtype", "dtype"}) {
      if (auto it = c.find(key); it != c.end() && it->is_string()) return &*it;
    }
    return nullptr;
  };
  for (const HfConfig* c : dtypes) {
    if (dtype_of(j) != nullptr) break;
    if (const nlohmann::json* dtype = dtype_of(c->raw())) j["torch_dtype"] = *dtype;
  }
  MEMFIT_ASSIGN_OR_RETURN(part.config, HfConfig::FromJson(j, part.config.where()));
  BuildOptions part_options = options;
  part_options.head_class.clear();
  part_options.buffers = BufferConvention::kCurrent;
  return builder(part.config, part_options);
}

bool OmniContext::Tie(const nlohmann::json& sub, const HfConfig& parent,
                      std::string_view untied_assumption) {
  const nlohmann::json& parent_json = parent.raw();
  for (const nlohmann::json* c : {&sub, &parent_json}) {
    if (auto it = c->find("tie_word_embeddings"); it != c->end() && it->is_boolean()) {
      return it->get<bool>();
    }
  }
  assumptions.emplace_back(untied_assumption);
  return false;
}

void AppendOmniPart(Model& into, Model&& part, const std::string& model_prefix,
                    const std::string& head_name, const std::string& component,
                    std::string_view label, std::initializer_list<std::string_view> skip) {
  const auto rename = [&](std::string& name) {
    if (name.starts_with("model.")) {
      name = model_prefix + name.substr(6);
    } else if (name.starts_with("lm_head")) {
      name = head_name + name.substr(7);
    }
  };
  into.tensors.reserve(into.tensors.size() + part.tensors.size());
  for (auto& t : part.tensors) {
    if (std::find(skip.begin(), skip.end(), t.name) != skip.end()) continue;
    rename(t.name);
    if (!t.tied_to.empty()) rename(t.tied_to);
    t.component = component;
    into.tensors.push_back(std::move(t));
  }
  for (const auto& a : part.assumptions)
    into.assumptions.push_back(fmt::format("{}: {}", label, a));
  for (const auto& n : part.notes) into.notes.push_back(fmt::format("{}: {}", label, n));
}

void SnakeBeta(ModelBuilder& b, const std::string& prefix, uint64_t channels) {
  b.Param(prefix + ".alpha", {channels});
  b.Param(prefix + ".beta", {channels});
}

void ConvTranspose1d(ModelBuilder& b, const std::string& prefix, uint64_t in, uint64_t out,
                     uint64_t kernel) {
  b.Param(prefix + ".weight", {in, out, kernel});
  b.Param(prefix + ".bias", {out});
}

namespace {

// The thinker's Whisper-style audio encoder under `p`:
// - kQwen25 (Qwen2_5OmniAudioEncoder): conv1, conv2, the sinusoidal positional_embedding buffer
//   in the model dtype (the release stores it; transformers does not load it),
//   audio_bos_eos_token [2, output_dim], layers with k_proj unbiased, ln_post, proj;
// - kQwen3 (Qwen3OmniMoeAudioEncoder): the float32 positional buffer (not persistent), layers
//   with every projection biased, ln_post, conv2d1..3 (3x3, stride 2), conv_out
//   Linear(downsample_hidden_size x mel/8, d_model) without bias, proj1, proj2.
void EmitOmniAudio(ModelBuilder& b, const HfConfig& a, OmniAudio kind, const std::string& p) {
  const bool v25 = kind == OmniAudio::kQwen25;
  const uint64_t mels = Get(b, a.Uint("num_mel_bins"));
  const uint64_t d = Get(b, a.Uint("d_model"));
  const uint64_t layers = Get(b, a.Uint("encoder_layers"));
  const uint64_t heads = Get(b, a.Uint("encoder_attention_heads"));
  const uint64_t ffn = Get(b, a.Uint("encoder_ffn_dim"));
  const uint64_t positions = Get(b, a.Uint("max_source_positions"));
  const uint64_t out = Get(b, a.Uint("output_dim"));
  const uint64_t down = v25 ? 0 : Get(b, a.Uint("downsample_hidden_size"));
  if (b.failed()) return;
  DivideExact(b, a, d, "d_model", heads, "encoder_attention_heads");
  if (d % 2 != 0) {
    b.Fail(MakeError("{}: \"d_model\" = {} must be even (sinusoidal positions)", a.where(), d));
  }
  if (b.failed()) return;
  if (v25) {
    b.Conv(p + ".conv1", mels, d, {3}, true);
    b.Conv(p + ".conv2", d, d, {3}, true);
  }
  b.Buffer(p + ".positional_embedding.positional_embedding", {positions, d},
           v25 ? b.dtype() : Dtype::kF32, v25);
  if (v25) b.Embedding(p + ".audio_bos_eos_token", 2, out);
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    const std::string l = Layer(p + ".layers", i);
    b.Linear(l + ".self_attn.k_proj", d, d, !v25);
    b.Linear(l + ".self_attn.v_proj", d, d, true);
    b.Linear(l + ".self_attn.q_proj", d, d, true);
    b.Linear(l + ".self_attn.out_proj", d, d, true);
    b.LayerNorm(l + ".self_attn_layer_norm", d);
    b.Linear(l + ".fc1", d, ffn, true);
    b.Linear(l + ".fc2", ffn, d, true);
    b.LayerNorm(l + ".final_layer_norm", d);
  }
  b.LayerNorm(p + ".ln_post", d);
  if (v25) {
    b.Linear(p + ".proj", d, out, true);
    return;
  }
  b.Conv(p + ".conv2d1", 1, down, {3, 3}, true);
  b.Conv(p + ".conv2d2", down, down, {3, 3}, true);
  b.Conv(p + ".conv2d3", down, down, {3, 3}, true);
  // The mel axis after three stride-2 convolutions (padding 1).
  const uint64_t freq = (((mels + 1) / 2 + 1) / 2 + 1) / 2;
  b.Linear(p + ".conv_out", MulDims(b, down, freq, "downsample_hidden_size x mel/8"), d, false);
  b.Linear(p + ".proj1", d, d, true);
  b.Linear(p + ".proj2", d, out, true);
}

}  // namespace

Result<Model> BuildOmni(const HfConfig& c, const BuildOptions& o, const OmniFamily& f) {
  OmniContext x{.top = c, .options = o, .defaults = f.defaults()};
  MEMFIT_ASSIGN_OR_RETURN(HfConfig thinker, SubOrEmpty(c, "thinker_config"));
  MEMFIT_ASSIGN_OR_RETURN(OmniPart text,
                          x.Sub(thinker, "text_config", "thinker_config.text_config"));
  text.json["tie_word_embeddings"] = x.Tie(text.json, thinker, f.tie_assumption);
  MEMFIT_ASSIGN_OR_RETURN(
      Model language, x.Decoder(text, f.text_type, f.text_class, f.text_builder, {&thinker, &c}));
  MEMFIT_ASSIGN_OR_RETURN(OmniPart vision,
                          x.Sub(thinker, "vision_config", "thinker_config.vision_config"));
  MEMFIT_ASSIGN_OR_RETURN(OmniPart audio,
                          x.Sub(thinker, "audio_config", "thinker_config.audio_config"));
  MEMFIT_ASSIGN_OR_RETURN(bool audio_output, c.BoolOr("enable_audio_output", true));

  ModelBuilder b(c, text.config.torch_dtype().value_or(Dtype::kF32));
  Model& m = b.model();
  if (m.architecture.empty()) m.architecture = f.architecture;
  m.hp = language.hp;
  m.hp.text_config_key = "thinker_config.text_config";
  AppendOmniPart(m, std::move(language), "thinker.model.", "thinker.lm_head", "language_model",
                 "thinker_config.text_config");
  b.SetComponent("vision_tower");
  EmitQwenVision(b, vision.config, f.vision, "thinker.visual", m.hp.hidden_size);
  b.SetComponent("audio_tower");
  EmitOmniAudio(b, audio.config, f.audio, "thinker.audio_tower");
  if (b.failed()) return b.Finish();
  if (audio_output) {
    for (const auto& append : f.append_output) MEMFIT_RETURN_IF_ERROR(append(b, x));
    if (!f.output_assumption.empty()) m.assumptions.emplace_back(f.output_assumption);
    m.notes.emplace_back(f.output_note);
  } else {
    m.notes.emplace_back(f.no_output_note);
  }
  for (auto& a : x.assumptions) m.assumptions.push_back(std::move(a));
  NoteQuantizationNotApplied(c, m);
  m.no_split_patterns.assign(f.no_split.begin(), f.no_split.end());
  return b.Finish();
}

}  // namespace memfit::arch
