#pragma once
// Config keys that transformers fills from the config class's __init__ defaults when config.json
// omits them: the builder takes the same default and prints it as an assumption, so that a guess
// is never silent. Used by decoder_skeleton_read.cc (ernie4_5_moe, hunyuan_v1_moe) and
// hybrid_families.cc (falcon_h1).

#include <fmt/format.h>

#include <string_view>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"

namespace memfit::arch {

// True when `key` is absent or null (transformers then uses the class default).
inline bool Absent(const HfConfig& c, std::string_view key) {
  const auto it = c.raw().find(std::string(key));
  return it == c.raw().end() || it->is_null();
}

// Records as an assumption that `key` took `fallback`, the default of config class `cls`.
template <typename T>
void NoteDefault(ModelBuilder& b, std::string_view key, T fallback, std::string_view cls) {
  b.model().assumptions.push_back(
      fmt::format("\"{}\" absent from config.json: {}'s default {}", key, cls, fallback));
}

// The integer (boolean) at `key`, or `fallback` noted by NoteDefault when the key is absent.
inline uint64_t UintDefault(ModelBuilder& b, const HfConfig& c, std::string_view key,
                            uint64_t fallback, std::string_view cls) {
  if (!Absent(c, key)) return Get(b, c.Uint(key));
  NoteDefault(b, key, fallback, cls);
  return fallback;
}

inline bool BoolDefault(ModelBuilder& b, const HfConfig& c, std::string_view key, bool fallback,
                        std::string_view cls) {
  if (!Absent(c, key)) return Get(b, c.BoolOr(key, fallback));
  NoteDefault(b, key, fallback, cls);
  return fallback;
}

// Prints the tie ReadDecoderBasics took from the class default when config.json has no
// "tie_word_embeddings".
inline void NoteTieDefault(ModelBuilder& b, const HfConfig& c, bool tie, std::string_view cls) {
  if (Absent(c, "tie_word_embeddings")) NoteDefault(b, "tie_word_embeddings", tie, cls);
}

}  // namespace memfit::arch
