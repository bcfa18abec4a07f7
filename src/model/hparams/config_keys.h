#pragma once
// Reading a text model's fields from config.json under their aliases: the text section first,
// then the top level (multimodal configs keep "tie_word_embeddings" and "torch_dtype" there).
// The first malformed value is kept as the error, like ModelBuilder does for builders.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "memfit/hf_config.h"
#include "memfit/result.h"

namespace memfit::hparams {

// The nested object that holds the text model ("text_config", "llm_config", ...), or the config
// itself.
struct TextSection {
  const nlohmann::json* json = nullptr;
  std::string key;       // "" = top level; "thinker_config.text_config" for nested nestings
  bool guessed = false;  // found by the generic rule, not a known nesting key
  // A nested config that names only its model_type ("text_config": {"model_type": "phi3"}), or
  // one without its vocabulary or head count (gemma-3-4b-it): transformers fills the rest from
  // that config class's defaults, which these are.
  const nlohmann::json* class_defaults = nullptr;
};
TextSection FindTextSection(const HfConfig& config);

// The __init__ defaults of a config class (transformers' configuration_<type>.py) for the fields
// memfit reads, by model_type ("llama", "gemma3_text", ...); nullptr when memfit has none.
const nlohmann::json* ConfigClassDefaults(std::string_view model_type);

// True when `json` is an object with a layer count and a hidden size under any alias.
bool LooksLikeTextModel(const nlohmann::json& json);

class ConfigKeys {
 public:
  ConfigKeys(const HfConfig& config, const TextSection& section);

  // The value of the first present (non-null) key: the text section first, then the top level.
  const nlohmann::json* Find(std::initializer_list<std::string_view> keys) const;
  // The same, naming the key that was found.
  const nlohmann::json* Find(std::initializer_list<std::string_view> keys,
                             std::string_view* found) const;
  bool Has(std::initializer_list<std::string_view> keys) const { return Find(keys) != nullptr; }

  // A non-negative integer at most kMaxConfigDimension, or `fallback` when absent. A malformed
  // value records an error naming the key and returns `fallback`.
  uint64_t Uint(std::initializer_list<std::string_view> keys, uint64_t fallback = 0);
  double Number(std::initializer_list<std::string_view> keys, double fallback);
  // Booleans also accept 0/1 (some remote-code configs write them as integers).
  bool Bool(std::initializer_list<std::string_view> keys, bool fallback);
  std::string String(std::initializer_list<std::string_view> keys, std::string fallback = "");
  // An array of non-negative integers (or booleans as 0/1); nullopt when absent or not an array.
  std::optional<std::vector<uint64_t>> UintList(std::initializer_list<std::string_view> keys);
  // An array of strings; nullopt when absent or not an array of strings.
  std::optional<std::vector<std::string>> StringList(std::initializer_list<std::string_view> keys);

  // "config.json: text_config" style location for messages.
  const std::string& where() const { return where_; }
  // The keys taken from the config class's defaults (TextSection::class_defaults), in order.
  const std::vector<std::string>& defaulted() const { return defaulted_; }
  void Fail(Error error);
  bool failed() const { return !error_.message.empty(); }
  const Error& error() const { return error_; }

 private:
  const nlohmann::json* text_;
  const nlohmann::json* root_;
  const nlohmann::json* defaults_;
  std::string where_;
  mutable std::vector<std::string> defaulted_;
  Error error_;
};

}  // namespace memfit::hparams
