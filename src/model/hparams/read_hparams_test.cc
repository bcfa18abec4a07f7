// ReadTextHyperparameters on configs written in code: nestings, aliases, every layer-pattern key,
// MoE patterns, recurrent state dims, Python's NaN/Infinity, and hostile values.

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error_test_util.h"
#include "memfit/text_hparams.h"
#include "formats/hf_config_json.h"
#include "model/layer_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

Result<TextHyperparameters> Read(const nlohmann::json& j) {
  auto config = HfConfig::FromJson(j, "config.json");
  if (!config) return config.error();
  return ReadTextHyperparameters(*config);
}

Result<TextHyperparameters> ReadText(std::string_view text) {
  auto config = HfConfig::Parse(text, "config.json");
  if (!config) return config.error();
  return ReadTextHyperparameters(*config);
}

nlohmann::json Small() {
  return {{"model_type", "newthing"}, {"hidden_size", 64}, {"num_hidden_layers", 4},
          {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"vocab_size", 100},
          {"intermediate_size", 128}, {"tie_word_embeddings", false}};
}

TEST(TextHparams, TopLevelDecoder) {
  auto t = Read(Small());
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->hp.hidden_size, 64u);
  EXPECT_EQ(t->hp.head_dim, 16u);  // 64 / 4
  ASSERT_EQ(t->hp.layers.size(), 4u);
  testing::ExpectLayer(
      t->hp, 3, {.attention = AttentionKind::kFull, .num_kv_heads = 2u, .intermediate_size = 128u});
  EXPECT_EQ(t->hp.text_config_key, "");
}

TEST(TextHparams, KnownNestingsAndTopLevelTie) {
  for (const char* key : {"text_config", "llm_config", "language_config", "decoder"}) {
    nlohmann::json j = {{"model_type", "vlm"}, {"tie_word_embeddings", true},
                        {"vision_config", {{"hidden_size", 32}, {"num_hidden_layers", 2}}}};
    j[key] = Small();
    j[key].erase("tie_word_embeddings");
    auto t = Read(j);
    ASSERT_TRUE(t) << key << ": " << t.error().message;
    EXPECT_EQ(t->hp.text_config_key, key);
    EXPECT_EQ(t->hp.num_layers, 4u) << key;
    EXPECT_TRUE(t->hp.tie_word_embeddings) << key;  // from the top level
  }
  // Omni: thinker_config.text_config.
  nlohmann::json omni = {{"thinker_config", {{"text_config", Small()}}}};
  auto t = Read(omni);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->hp.text_config_key, "thinker_config.text_config");
}

TEST(TextHparams, UnknownNestingIsFoundAndSaid) {
  nlohmann::json j = {{"vision_cfg", {{"hidden_size", 32}, {"num_hidden_layers", 2}}},
                      {"my_llm_settings", Small()}};
  auto t = Read(j);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->hp.text_config_key, "my_llm_settings");
  ASSERT_FALSE(t->assumptions.empty());
  EXPECT_NE(t->assumptions.front().find("my_llm_settings"), std::string::npos);
}

// A config that spells the standard keys its own way, and the model-wide values it reads as
// (a field left empty is not checked).
struct SpellingCase {
  std::string name;
  nlohmann::json config;
  std::optional<uint64_t> hidden_size = std::nullopt;
  std::optional<uint64_t> num_kv_heads = std::nullopt;
  std::optional<uint64_t> head_dim = std::nullopt;
  std::optional<uint64_t> vocab_size = std::nullopt;
  std::optional<uint64_t> intermediate_size = std::nullopt;
  std::optional<uint64_t> max_position_embeddings = std::nullopt;
  std::optional<bool> gated_mlp = std::nullopt;
};

TEST(TextHparams, OtherSpellingsOfTheStandardKeys) {
  const SpellingCase cases[] = {
      {.name = "GPT-style aliases and multi-query",
       .config = {{"model_type", "gpt_bigcode"}, {"n_embd", 48}, {"n_layer", 3}, {"n_head", 6},
                  {"multi_query", true}, {"vocab_size", 10}, {"n_positions", 2048},
                  {"activation_function", "gelu_new"}},
       .hidden_size = 48u,
       .num_kv_heads = 1u,
       .head_dim = 8u,
       .intermediate_size = 4u * 48,  // absent: 4 x hidden, said
       .max_position_embeddings = 2048u,
       .gated_mlp = false},
      {.name = "ChatGLM kv_channels and groups",
       .config = {{"model_type", "chatglm"}, {"hidden_size", 4096}, {"num_layers", 40},
                  {"num_attention_heads", 32}, {"kv_channels", 128},
                  {"multi_query_attention", true}, {"multi_query_group_num", 2},
                  {"padded_vocab_size", 151552}, {"ffn_hidden_size", 13696}},
       .num_kv_heads = 2u,
       .head_dim = 128u,
       .vocab_size = 151552u,
       .intermediate_size = 13696u},
  };
  for (const SpellingCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto t = Read(c.config);
    ASSERT_TRUE(t) << t.error().message;
    auto check = [](const char* field, const auto& expected, const auto& actual) {
      if (expected) {
        EXPECT_EQ(actual, *expected) << field;
      }
    };
    check("hidden_size", c.hidden_size, t->hp.hidden_size);
    check("num_kv_heads", c.num_kv_heads, t->hp.num_kv_heads);
    check("head_dim", c.head_dim, t->hp.head_dim);
    check("vocab_size", c.vocab_size, t->hp.vocab_size);
    check("intermediate_size", c.intermediate_size, t->hp.intermediate_size);
    check("max_position_embeddings", c.max_position_embeddings, t->hp.max_position_embeddings);
    check("gated_mlp", c.gated_mlp, t->hp.gated_mlp);
  }
}

TEST(TextHparams, NemotronHybridPatternWithInfinity) {
  // The pattern is one character per layer: M Mamba2 (no MLP), * attention (no MLP), - MLP,
  // E MoE. time_step_limit holds Python's Infinity, as the real config does.
  std::string text = R"({"model_type": "nemotron_h", "hidden_size": 64, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 10,
    "intermediate_size": 96, "hybrid_override_pattern": "M*-E", "mamba_num_heads": 8,
    "mamba_head_dim": 16, "n_groups": 2, "ssm_state_size": 32, "conv_kernel": 4,
    "mamba_ssm_cache_dtype": "float32", "n_routed_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 24, "time_step_limit": [0.0, Infinity], "tie_word_embeddings": false})";
  auto t = ReadText(text);
  ASSERT_TRUE(t) << t.error().message;
  const auto& L = t->hp.layers;
  ASSERT_EQ(L.size(), 4u);
  testing::ExpectLayer(
      t->hp, 0,
      {.attention = AttentionKind::kNone, .mixer = LayerMixer::kMamba2, .recurrent = true});
  // conv channels = d_inner (8 x 16) + 2 x groups x d_state = 128 + 128 = 256.
  testing::ExpectLayer(t->hp, 0,
                       {.intermediate_size = 0u,
                        .conv_channels = 256u,
                        .conv_kernel = 4u,
                        .state_heads = 8u,
                        .elements_per_head = 16u * 32,
                        .state_bits = 32u});
  testing::ExpectLayer(t->hp, 1, {.attention = AttentionKind::kFull, .intermediate_size = 0u});
  testing::ExpectLayer(t->hp, 2, {.mixer = LayerMixer::kNone, .intermediate_size = 96u});
  testing::ExpectLayer(t->hp, 3, {.moe = true});
}

// The Mamba-2 SSD chunk per config class: Mamba2Config / Zamba2Config "chunk_size" (256),
// FalconH1Config "mamba_chunk_size" (256), NemotronHConfig "chunk_size" (128); absent: the
// default, said.
TEST(TextHparams, Mamba2ChunkSizePerConfigClass) {
  nlohmann::json mamba2 = {{"model_type", "mamba2"}, {"hidden_size", 64},
                           {"num_hidden_layers", 2}, {"vocab_size", 10}, {"num_heads", 2},
                           {"head_dim", 64}, {"state_size", 16}, {"n_groups", 1}};
  auto a = Read(mamba2);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_EQ(a->hp.layers.at(0).mixer, LayerMixer::kMamba2);
  EXPECT_EQ(a->hp.ssm_chunk_size, 256u);
  EXPECT_EQ(a->hp.ssm_state_size, 16u);
  EXPECT_TRUE(std::any_of(a->assumptions.begin(), a->assumptions.end(), [](const auto& s) {
    return s.find("no \"chunk_size\": the config class's default 256") != std::string::npos;
  }));
  mamba2["chunk_size"] = 128;
  auto b = Read(mamba2);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->hp.ssm_chunk_size, 128u);
  mamba2["chunk_size"] = 0;
  auto zero = Read(mamba2);
  testing::ExpectErrorContains(zero, "chunk_size");
  std::string nemotron = R"({"model_type": "nemotron_h", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 10,
    "hybrid_override_pattern": "M*", "mamba_num_heads": 8, "mamba_head_dim": 16, "n_groups": 2,
    "ssm_state_size": 32})";
  auto n = ReadText(nemotron);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(n->hp.ssm_chunk_size, 128u);
  // A model without Mamba-2 layers has no chunk.
  auto plain = Read(Small());
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->hp.ssm_chunk_size, 0u);
}

TEST(TextHparams, PythonConstantsParseAsTransformersReadsThem) {
  auto config = HfConfig::Parse(R"({"a": [NaN, Infinity, -Infinity], "s": "NaN Infinity"})");
  ASSERT_TRUE(config) << config.error().message;
  const auto& a = config->raw()["a"];
  EXPECT_TRUE(std::isnan(a[0].get<double>()));
  EXPECT_TRUE(std::isinf(a[1].get<double>()) && a[1].get<double>() > 0);
  EXPECT_TRUE(std::isinf(a[2].get<double>()) && a[2].get<double>() < 0);
  EXPECT_EQ(config->raw()["s"], "NaN Infinity");  // inside strings nothing changes
  EXPECT_FALSE(HfConfig::Parse(R"({"a": Nonsense})"));
}

// A layer-pattern config: the keys set on Small() (4 layers, 64 wide, 4 heads of 16, 2 KV heads,
// MLP 128) and what some of its layers hold.
struct PatternCase {
  std::string name;
  nlohmann::json keys;
  std::vector<std::pair<size_t, testing::LayerExpect>> layers;
  std::function<void(const Hyperparameters&)> more = nullptr;  // model-wide checks
};

std::vector<PatternCase> PatternCases() {
  return {
      {.name = "gated delta-net, every fourth layer full",
       .keys = {{"model_type", "qwen3_next"}, {"full_attention_interval", 4},
                {"linear_num_key_heads", 2}, {"linear_num_value_heads", 4},
                {"linear_key_head_dim", 8}, {"linear_value_head_dim", 16},
                {"linear_conv_kernel_dim", 4}},
       .layers = {{0, {.mixer = LayerMixer::kGatedDeltaNet}},
                  {2, {.mixer = LayerMixer::kGatedDeltaNet}},
                  {3, {.mixer = LayerMixer::kAttention}},
                  // conv channels 2 x 2 x 8 + 4 x 16 = 96; state 4 heads of 8 x 16.
                  {0, {.conv_channels = 96u, .state_heads = 4u, .elements_per_head = 128u}}}},
      {.name = "layer_types words and windows",
       .keys = {{"layer_types",
                 {"sliding_attention", "full_attention", "linear_attention", "conv"}},
                {"sliding_window", 512},
                {"model_type", "qwen3_5_text"}},
       .layers = {{0, {.attention = AttentionKind::kSliding, .window_tokens = 512u}},
                  {1, {.attention = AttentionKind::kFull}},
                  {2, {.mixer = LayerMixer::kGatedDeltaNet}},
                  {3, {.mixer = LayerMixer::kShortConv}}}},
      {.name = "LFM2 full_attn_idxs",
       .keys = {{"model_type", "lfm2"}, {"full_attn_idxs", {1, 3}}, {"conv_L_cache", 3}},
       .layers = {{0, {.mixer = LayerMixer::kShortConv, .conv_channels = 64u, .conv_kernel = 3u}},
                  {1, {.mixer = LayerMixer::kAttention}}}},
      {.name = "Kimi Linear, one-based layers",
       .keys = {{"model_type", "kimi_linear"},
                {"linear_attn_config",
                 {{"kda_layers", {1, 2, 3}}, {"full_attn_layers", {4}}, {"num_heads", 4},
                  {"head_dim", 8}, {"short_conv_kernel_size", 4}}},
                {"kv_lora_rank", 16}, {"qk_rope_head_dim", 4}, {"qk_nope_head_dim", 8},
                {"v_head_dim", 8}},
       .layers = {{0, {.mixer = LayerMixer::kKimiDelta, .conv_channels = 3u * 4 * 8,
                       .state_bits = 32u}},
                  {3, {.attention = AttentionKind::kMla, .head_dim_k = 12u}}}},
      {.name = "Llama 4's default chunked pattern",
       .keys = {{"model_type", "llama4_text"}, {"attention_chunk_size", 8192},
                {"num_local_experts", 4}, {"interleave_moe_layer_step", 2},
                {"intermediate_size_mlp", 256}},
       .layers = {// intermediate_size: dense layers use intermediate_size_mlp
                  {0, {.attention = AttentionKind::kChunked, .window_tokens = 8192u, .moe = false,
                       .intermediate_size = 256u}},
                  // attention: every 4th layer is global (NoPE)
                  {3, {.attention = AttentionKind::kFull}},
                  {1, {.moe = true}}},
       .more =
           [](const Hyperparameters& hp) {
             EXPECT_EQ(hp.moe_intermediate_size, 128u);  // experts use intermediate_size
           }},
      {.name = "DeepSeek MLA, DSA and dense leading layers",
       .keys = {{"model_type", "deepseek_v32"}, {"kv_lora_rank", 32}, {"qk_rope_head_dim", 8},
                {"qk_nope_head_dim", 16}, {"v_head_dim", 16}, {"index_head_dim", 8},
                {"n_routed_experts", 8}, {"first_k_dense_replace", 1}, {"moe_layer_freq", 1},
                {"num_nextn_predict_layers", 1}},
       .layers = {{0, {.attention = AttentionKind::kMla, .moe = false, .indexer_head_dim = 8u}},
                  {1, {.moe = true}}},
       .more = [](const Hyperparameters& hp) { EXPECT_EQ(hp.num_mtp_layers, 1u); }},
      {.name = "DeepSeek-V4 compressed layers",
       .keys = {{"model_type", "deepseek_v4"}, {"num_key_value_heads", 1}, {"head_dim", 32},
                {"sliding_window", 128}, {"compress_ratios", {0, 4, 128, 4}},
                {"index_head_dim", 8}},
       .layers = {{0, {.attention = AttentionKind::kSliding, .compress_ratio = 0u}},
                  {1, {.indexer_head_dim = 8u, .compress_ratio = 4u}},
                  {2, {.indexer_head_dim = 0u, .k_eq_v = true}}}},
      {.name = "MiMo's sliding layers use their own heads",
       .keys = {{"hybrid_layer_pattern", {0, 1, 1, 0}}, {"sliding_window", 128},
                {"swa_num_key_value_heads", 1}, {"swa_head_dim", 24}, {"swa_v_head_dim", 8}},
       .layers = {{0, {.attention = AttentionKind::kFull}},
                  {1, {.attention = AttentionKind::kSliding, .num_kv_heads = 1u,
                       .head_dim_k = 24u, .head_dim_v = 8u}}}},
      {.name = "Gemma's global layers and shared KV",
       .keys = {{"layer_types",
                 {"sliding_attention", "full_attention", "sliding_attention", "full_attention"}},
                {"sliding_window", 1024}, {"global_head_dim", 32}, {"attention_k_eq_v", true},
                {"num_global_key_value_heads", 1}, {"num_kv_shared_layers", 2}},
       .layers = {{0, {.head_dim_k = 16u}},
                  {1, {.num_kv_heads = 1u, .head_dim_k = 32u, .kv_shared = false}},
                  {2, {.kv_shared = true}},
                  {3, {.kv_shared = true}}}},
  };
}

TEST(TextHparams, LayerPatternKeys) {
  for (const PatternCase& c : PatternCases()) {
    SCOPED_TRACE(c.name);
    nlohmann::json j = Small();
    j.update(c.keys);
    auto t = Read(j);
    ASSERT_TRUE(t) << t.error().message;
    for (const auto& [index, want] : c.layers) testing::ExpectLayer(t->hp, index, want);
    if (c.more) c.more(t->hp);
  }
}

TEST(TextHparams, Qwen2MaxWindowLayersAndDisabledWindow) {
  nlohmann::json j = Small();
  j["sliding_window"] = 4096;
  j["use_sliding_window"] = false;
  auto off = Read(j);
  ASSERT_TRUE(off);
  EXPECT_EQ(off->hp.layers[0].attention, AttentionKind::kFull);
  j["use_sliding_window"] = true;
  j["max_window_layers"] = 2;
  auto on = Read(j);
  ASSERT_TRUE(on);
  EXPECT_EQ(on->hp.layers[1].attention, AttentionKind::kFull);
  EXPECT_EQ(on->hp.layers[2].attention, AttentionKind::kSliding);
}

TEST(TextHparams, MissingAndHostileFieldsAreOneLineErrors) {
  auto none = Read({{"model_type", "x"}, {"vocab_size", 10}});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no number of layers"), std::string::npos);
  nlohmann::json j = Small();
  j["num_hidden_layers"] = -3;
  auto neg = Read(j);
  ASSERT_FALSE(neg);
  EXPECT_NE(neg.error().message.find("num_hidden_layers"), std::string::npos);
  j = Small();
  j["hidden_size"] = uint64_t{1} << 50;
  auto huge = Read(j);
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("absurdly large"), std::string::npos);
  j = Small();
  j["num_hidden_layers"] = uint64_t{1} << 30;
  EXPECT_FALSE(Read(j));
  j = Small();
  j["layer_types"] = {"full_attention"};  // wrong length: ignored and said
  auto short_list = Read(j);
  ASSERT_TRUE(short_list);
  EXPECT_FALSE(short_list->assumptions.empty());
  for (const auto* r : {&none, &neg, &huge}) {
    if (!*r) {
      EXPECT_EQ(r->error().message.find('\n'), std::string::npos);
    }
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
