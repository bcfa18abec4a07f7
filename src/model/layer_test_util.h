#pragma once
// Test helper: expect the LayerInfo fields a test names, and only those.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "memfit/model.h"

namespace memfit::testing {

// What a test expects of one layer, in LayerInfo's field order (RecurrentState's fields where
// LayerInfo has `state`), so that designated initializers name only the fields it checks:
//   ExpectLayer(m->hp, 0, {.attention = AttentionKind::kNone, .mixer = LayerMixer::kMamba2,
//                          .recurrent = true, .conv_channels = 12, .conv_kernel = 3});
// A field left empty is not checked.
struct LayerExpect {
  std::optional<AttentionKind> attention = std::nullopt;
  std::optional<LayerMixer> mixer = std::nullopt;
  std::optional<uint64_t> num_heads = std::nullopt;
  std::optional<uint64_t> num_kv_heads = std::nullopt;
  std::optional<uint64_t> head_dim_k = std::nullopt;
  std::optional<uint64_t> head_dim_v = std::nullopt;
  std::optional<uint64_t> window_tokens = std::nullopt;
  std::optional<bool> moe = std::nullopt;
  std::optional<uint64_t> intermediate_size = std::nullopt;
  std::optional<bool> cross_attention = std::nullopt;
  std::optional<bool> recurrent = std::nullopt;
  // LayerInfo::state (RecurrentState).
  std::optional<uint64_t> conv_channels = std::nullopt;
  std::optional<uint64_t> conv_kernel = std::nullopt;
  std::optional<uint64_t> state_heads = std::nullopt;  // state.heads
  std::optional<uint64_t> elements_per_head = std::nullopt;
  std::optional<uint32_t> state_bits = std::nullopt;
  std::optional<uint64_t> indexer_head_dim = std::nullopt;
  std::optional<uint64_t> compress_ratio = std::nullopt;
  std::optional<bool> k_eq_v = std::nullopt;
  std::optional<bool> kv_shared = std::nullopt;
};

// Expects layer `index` of `hp` to have every field `want` states; a failure names the layer,
// the field and the calling line.
// The calling line comes from __builtin_FILE/__builtin_LINE: clang 14 with libstdc++ 12 (the
// sanitizer build) has no std::source_location.
inline void ExpectLayer(const Hyperparameters& hp, size_t index, const LayerExpect& want,
                        const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::testing::ScopedTrace trace(file, line, "layer " + std::to_string(index));
  ASSERT_LT(index, hp.layers.size());
  const LayerInfo& got = hp.layers[index];
  auto check = [](const char* field, const auto& expected, const auto& actual) {
    if (expected) {
      EXPECT_EQ(actual, *expected) << field;
    }
  };
  check("attention", want.attention, got.attention);
  check("mixer", want.mixer, got.mixer);
  check("num_heads", want.num_heads, got.num_heads);
  check("num_kv_heads", want.num_kv_heads, got.num_kv_heads);
  check("head_dim_k", want.head_dim_k, got.head_dim_k);
  check("head_dim_v", want.head_dim_v, got.head_dim_v);
  check("window_tokens", want.window_tokens, got.window_tokens);
  check("moe", want.moe, got.moe);
  check("intermediate_size", want.intermediate_size, got.intermediate_size);
  check("cross_attention", want.cross_attention, got.cross_attention);
  check("recurrent", want.recurrent, got.recurrent);
  check("state.conv_channels", want.conv_channels, got.state.conv_channels);
  check("state.conv_kernel", want.conv_kernel, got.state.conv_kernel);
  check("state.heads", want.state_heads, got.state.heads);
  check("state.elements_per_head", want.elements_per_head, got.state.elements_per_head);
  check("state.state_bits", want.state_bits, got.state.state_bits);
  check("indexer_head_dim", want.indexer_head_dim, got.indexer_head_dim);
  check("compress_ratio", want.compress_ratio, got.compress_ratio);
  check("k_eq_v", want.k_eq_v, got.k_eq_v);
  check("kv_shared", want.kv_shared, got.kv_shared);
}

}  // namespace memfit::testing
