#include "model/hparams/config_keys.h"

#include <algorithm>
#include <cmath>

#include "formats/json.h"

namespace memfit::hparams {
namespace {

// Known nestings of the text model, in the order they are tried. Sources: transformers'
// configuration_*.py of each family (LlavaConfig.text_config, InternVLChatConfig.llm_config,
// DeepseekVLV2Config.language_config, Qwen2_5OmniConfig.thinker_config.text_config, ...).
constexpr std::string_view kNestings[] = {"text_config",   "llm_config",    "language_config",
                                          "thinker_config", "text_model",   "language_model",
                                          "decoder",        "llm",          "lm_config",
                                          "decoder_config"};

const std::initializer_list<std::string_view> kLayerKeys = {"num_hidden_layers", "n_layer",
                                                            "num_layers", "n_layers"};
const std::initializer_list<std::string_view> kHiddenKeys = {"hidden_size", "n_embd", "n_embed",
                                                             "d_model", "dim", "model_dim"};

bool HasAny(const nlohmann::json& json, std::initializer_list<std::string_view> keys);

// The defaults of the config classes a nested text config may name without giving its fields
// (transformers' configuration_<type>.py __init__ defaults: the family's reference model).
const nlohmann::json& AllClassDefaults() {
  static const nlohmann::json kDefaults = {
      {"phi3", {{"vocab_size", 32064}, {"hidden_size", 3072}, {"intermediate_size", 8192},
                {"num_hidden_layers", 32}, {"num_attention_heads", 32},
                {"max_position_embeddings", 4096}, {"tie_word_embeddings", false}}},
      {"llama", {{"vocab_size", 32000}, {"hidden_size", 4096}, {"intermediate_size", 11008},
                 {"num_hidden_layers", 32}, {"num_attention_heads", 32},
                 {"max_position_embeddings", 2048}, {"tie_word_embeddings", false}}},
      {"mistral", {{"vocab_size", 32000}, {"hidden_size", 4096}, {"intermediate_size", 14336},
                   {"num_hidden_layers", 32}, {"num_attention_heads", 32},
                   {"num_key_value_heads", 8}, {"max_position_embeddings", 131072},
                   {"sliding_window", 4096}, {"tie_word_embeddings", false}}},
      {"qwen2", {{"vocab_size", 151936}, {"hidden_size", 4096}, {"intermediate_size", 22016},
                 {"num_hidden_layers", 32}, {"num_attention_heads", 32},
                 {"num_key_value_heads", 32}, {"max_position_embeddings", 32768},
                 {"tie_word_embeddings", false}}},
      {"gemma", {{"vocab_size", 256000}, {"hidden_size", 3072}, {"intermediate_size", 24576},
                 {"num_hidden_layers", 28}, {"num_attention_heads", 16},
                 {"num_key_value_heads", 16}, {"head_dim", 256},
                 {"max_position_embeddings", 8192}, {"tie_word_embeddings", true}}},
      // Gemma2Config (configuration_gemma2.py): PaliGemma 2's text_config.
      {"gemma2", {{"vocab_size", 256000}, {"hidden_size", 2304}, {"intermediate_size", 9216},
                  {"num_hidden_layers", 26}, {"num_attention_heads", 8},
                  {"num_key_value_heads", 4}, {"head_dim", 256},
                  {"hidden_activation", "gelu_pytorch_tanh"}, {"max_position_embeddings", 8192},
                  {"sliding_window", 4096}, {"query_pre_attn_scalar", 256},
                  {"tie_word_embeddings", true}}},
      // Gemma3TextConfig (configuration_gemma3.py): gemma-3-4b-it's text_config gives only
      // hidden_size, intermediate_size, num_hidden_layers, rope_scaling and sliding_window.
      {"gemma3_text", {{"vocab_size", 262208}, {"hidden_size", 2304}, {"intermediate_size", 9216},
                       {"num_hidden_layers", 26}, {"num_attention_heads", 8},
                       {"num_key_value_heads", 4}, {"head_dim", 256},
                       {"hidden_activation", "gelu_pytorch_tanh"},
                       {"max_position_embeddings", 131072}, {"sliding_window", 4096},
                       {"sliding_window_pattern", 6}, {"query_pre_attn_scalar", 256},
                       {"rope_theta", 1000000.0}, {"rope_local_base_freq", 10000.0},
                       {"tie_word_embeddings", true}}},
      // Gemma3nTextConfig (configuration_gemma3n.py, the E4B): the per-layer embedding, AltUp,
      // LAuReL and KV-sharing fields gemma3n.cc reads besides the usual ones.
      {"gemma3n_text", {{"vocab_size", 262400}, {"hidden_size", 2048}, {"intermediate_size", 16384},
                        {"num_hidden_layers", 35}, {"num_attention_heads", 8},
                        {"num_key_value_heads", 2}, {"head_dim", 256},
                        {"hidden_activation", "gelu_pytorch_tanh"},
                        {"max_position_embeddings", 32768}, {"sliding_window", 512},
                        {"vocab_size_per_layer_input", 262144},
                        {"hidden_size_per_layer_input", 256}, {"altup_num_inputs", 4},
                        {"laurel_rank", 64}, {"num_kv_shared_layers", 15},
                        {"tie_word_embeddings", true}}},
  };
  return kDefaults;
}

const nlohmann::json* ClassDefaults(const nlohmann::json& section) {
  auto type = section.find("model_type");
  if (type == section.end() || !type->is_string()) return nullptr;
  return ConfigClassDefaults(type->get<std::string>());
}

// A nested text config that has layers and a hidden size but lacks the vocabulary or the head
// count leaves them to its config class (gemma-3-4b-it's text_config).
bool OmitsCoreFields(const nlohmann::json& json) {
  return !HasAny(json, {"vocab_size", "padded_vocab_size", "n_vocab"}) ||
         !HasAny(json, {"num_attention_heads", "n_head", "num_heads", "n_heads"});
}

bool HasAny(const nlohmann::json& json, std::initializer_list<std::string_view> keys) {
  for (auto key : keys) {
    auto it = json.find(key);
    if (it != json.end() && it->is_number()) return true;
  }
  return false;
}

}  // namespace

const nlohmann::json* ConfigClassDefaults(std::string_view model_type) {
  const nlohmann::json& all = AllClassDefaults();
  auto it = all.find(model_type);
  return it == all.end() ? nullptr : &*it;
}

bool LooksLikeTextModel(const nlohmann::json& json) {
  return json.is_object() && HasAny(json, kLayerKeys) && HasAny(json, kHiddenKeys);
}

TextSection FindTextSection(const HfConfig& config) {
  const nlohmann::json& root = config.raw();
  for (auto key : kNestings) {
    auto it = root.find(key);
    if (it == root.end() || !it->is_object()) continue;
    // Omni models nest once more: thinker_config.text_config.
    if (auto inner = it->find("text_config"); inner != it->end() && LooksLikeTextModel(*inner)) {
      return {&*inner, std::string(key) + ".text_config", false};
    }
    if (LooksLikeTextModel(*it)) {
      return {&*it, std::string(key), false, OmitsCoreFields(*it) ? ClassDefaults(*it) : nullptr};
    }
    if (const auto* defaults = ClassDefaults(*it)) {
      return {&*it, std::string(key), false, defaults};
    }
  }
  if (LooksLikeTextModel(root)) return {&root, "", false};
  // An unknown nesting: the one object-valued key that looks like a text model, preferring keys
  // that name text ("text", "llm", "language", "lm").
  const nlohmann::json* best = nullptr;
  std::string best_key;
  int best_score = -1;
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (!LooksLikeTextModel(*it)) continue;
    const std::string& key = it.key();
    int score = key.find("vision") != std::string::npos || key.find("audio") != std::string::npos
                    ? 0
                    : 1;
    if (key.find("text") != std::string::npos || key.find("llm") != std::string::npos ||
        key.find("language") != std::string::npos || key.find("lm") != std::string::npos) {
      score = 2;
    }
    if (score > best_score) {
      best = &*it;
      best_key = key;
      best_score = score;
    }
  }
  if (best && best_score > 0) return {best, best_key, true};
  return {&root, "", false};
}

ConfigKeys::ConfigKeys(const HfConfig& config, const TextSection& section)
    : text_(section.json ? section.json : &config.raw()),
      root_(&config.raw()),
      defaults_(section.class_defaults),
      where_(section.key.empty() ? config.where() : config.where() + ": " + section.key) {}

const nlohmann::json* ConfigKeys::Find(std::initializer_list<std::string_view> keys) const {
  return Find(keys, nullptr);
}

const nlohmann::json* ConfigKeys::Find(std::initializer_list<std::string_view> keys,
                                       std::string_view* found) const {
  for (const nlohmann::json* scope : {text_, root_, defaults_}) {
    if (!scope) continue;
    for (auto key : keys) {
      auto it = scope->find(key);
      if (it != scope->end() && !it->is_null()) {
        if (found) *found = key;
        if (scope == defaults_ &&
            std::find(defaulted_.begin(), defaulted_.end(), key) == defaulted_.end()) {
          defaulted_.emplace_back(key);
        }
        return &*it;
      }
    }
  }
  return nullptr;
}

void ConfigKeys::Fail(Error error) {
  if (error_.message.empty()) error_ = std::move(error);
}

uint64_t ConfigKeys::Uint(std::initializer_list<std::string_view> keys, uint64_t fallback) {
  std::string_view key;
  const nlohmann::json* v = Find(keys, &key);
  if (!v) return fallback;
  // Parsed text gives unsigned numbers; JSON built in code may hold signed ones.
  if (v->is_number_unsigned() || (v->is_number_integer() && v->get<int64_t>() >= 0)) {
    uint64_t x = v->get<uint64_t>();
    if (x <= kMaxConfigDimension) return x;
    Fail(MakeError("{}: field \"{}\" = {} is absurdly large (limit 2^40)", where_, key, x));
    return fallback;
  }
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (d >= 0 && d == std::floor(d) && d <= static_cast<double>(kMaxConfigDimension)) {
      return static_cast<uint64_t>(d);
    }
  }
  Fail(MakeError("{}: field \"{}\" must be a non-negative integer, got {}", where_, key,
                 v->is_number() ? DumpJson(*v, -1) : std::string(JsonTypeName(*v))));
  return fallback;
}

double ConfigKeys::Number(std::initializer_list<std::string_view> keys, double fallback) {
  std::string_view key;
  const nlohmann::json* v = Find(keys, &key);
  if (!v) return fallback;
  if (v->is_number()) return v->get<double>();
  Fail(MakeError("{}: field \"{}\" must be a number, got {}", where_, key, JsonTypeName(*v)));
  return fallback;
}

bool ConfigKeys::Bool(std::initializer_list<std::string_view> keys, bool fallback) {
  std::string_view key;
  const nlohmann::json* v = Find(keys, &key);
  if (!v) return fallback;
  if (v->is_boolean()) return v->get<bool>();
  if (v->is_number_integer() && (v->get<int64_t>() == 0 || v->get<int64_t>() == 1)) {
    return v->get<int64_t>() == 1;
  }
  Fail(MakeError("{}: field \"{}\" must be true or false, got {}", where_, key, JsonTypeName(*v)));
  return fallback;
}

std::string ConfigKeys::String(std::initializer_list<std::string_view> keys,
                               std::string fallback) {
  const nlohmann::json* v = Find(keys);
  if (!v || !v->is_string()) return fallback;
  return v->get<std::string>();
}

std::optional<std::vector<uint64_t>> ConfigKeys::UintList(
    std::initializer_list<std::string_view> keys) {
  std::string_view key;
  const nlohmann::json* v = Find(keys, &key);
  if (!v || !v->is_array()) return std::nullopt;
  std::vector<uint64_t> out;
  out.reserve(std::min<size_t>(v->size(), 1 << 16));
  for (const auto& x : *v) {
    if (x.is_boolean()) {
      out.push_back(x.get<bool>() ? 1 : 0);
    } else if (x.is_number_unsigned() && x.get<uint64_t>() <= kMaxConfigDimension) {
      out.push_back(x.get<uint64_t>());
    } else if (x.is_number_integer() && x.get<int64_t>() >= 0) {
      out.push_back(static_cast<uint64_t>(x.get<int64_t>()));
    } else {
      Fail(MakeError("{}: field \"{}\" must be a list of non-negative integers", where_, key));
      return std::nullopt;
    }
  }
  return out;
}

std::optional<std::vector<std::string>> ConfigKeys::StringList(
    std::initializer_list<std::string_view> keys) {
  const nlohmann::json* v = Find(keys);
  if (!v || !v->is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& x : *v) {
    if (!x.is_string()) return std::nullopt;
    out.push_back(x.get<std::string>());
  }
  return out;
}

}  // namespace memfit::hparams
