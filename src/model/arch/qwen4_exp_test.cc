// Qwen4-Exp (qwen4_exp.cc): a tiny text config counted by hand, the composite with its vision
// tower, the KV/indexer cache per layer kind, Qwen3.8-Flash-Next's published shapes, bad configs.

#include <gtest/gtest.h>

#include "memfit/estimate_inference.h"
#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

// Four layers, hidden 8, float32: layers 0-2 gated delta-net, layer 3 indexed attention
// (full_attention_interval 4), PLE on layer 2 one-indexed (= layer 1), one MTP layer.
nlohmann::json TinyText() {
  return {{"model_type", "qwen4_exp_text"},
          {"architectures", {"Qwen4ExpForCausalLM"}},
          {"torch_dtype", "float32"},
          {"tie_word_embeddings", false},
          {"vocab_size", 10},
          {"hidden_size", 8},
          {"num_hidden_layers", 4},
          {"num_attention_heads", 2},
          {"num_key_value_heads", 1},
          {"head_dim", 4},
          {"rope_parameters", {{"rope_type", "default"}, {"partial_rotary_factor", 0.5}}},
          {"linear_num_key_heads", 1},
          {"linear_num_value_heads", 2},
          {"linear_key_head_dim", 2},
          {"linear_value_head_dim", 2},
          {"linear_conv_kernel_dim", 2},
          {"num_experts", 2},
          {"num_experts_per_tok", 1},
          {"moe_intermediate_size", 4},
          {"shared_expert_intermediate_size", 4},
          {"hc_count", 2},
          {"hc_lowrank", 3},
          {"indexer_n_heads", 2},
          {"indexer_kv_heads", 1},
          {"indexer_head_dim", 4},
          {"indexer_budget", 8},
          {"indexer_compress_ratio", 4},
          {"ple_layer_ids", {2}},
          {"ple_embed_dim", 4},
          {"ple_conv_kernel_size", 2},
          {"ngram_size", 3},
          {"heads_per_ngram", 1},
          {"ngram_vocab_size_base", 11},
          {"make_ngram_vocab_size_divisible_by", 4},
          {"split_ngram_parts", 5},
          {"eos_token_id", 1},
          {"mtp_num_hidden_layers", 1}};
}

// Streams hc x H = 16. A gated residual: hc_norm 16, input_mix_weight_down 3 x 16 = 48, up 48,
// block_inject 2 x 16 = 32: 144 (112 without the inject). Delta-net layer (key dim 2, value dim
// 4, conv dim 8): in_proj_qkv 64, in_proj_z 32, in_proj_b 16, in_proj_a 16, conv1d 8 x 2 = 16,
// dt_bias 2, A_log 2, norm 2, out_proj 32: 182. Attention layer: q_proj 8 x 16 = 128, k 32, v 32,
// o 64, q/k norms 8, indexer index_qk_proj 8 x 3 x 4 = 96, q/k layernorms 8: 368. MoE: router
// 16, two experts 3 x 4 x 8 = 96 each, shared expert 96, its gate 8: 312. PLE: 2 n-gram heads of
// primes 11 and 13 = 24 rows (a multiple of 4) x width 4 / 2 = 2: 48 in ceil(24 / 5) = 5-row
// shards (5, 5, 5, 5, 4), key_proj 4 x 16 = 64, value_proj 32, three norms 48, conv1d 16 x 2 =
// 32: 224, plus 3 + 2 + 2 int64 buffers (56 bytes). Layers: 3 x (182 + 312 + 288) + 224 +
// (368 + 312 + 288) = 3538; embeddings 80, the stream mixer 112, lm_head 80: 3810 parameters.
// MTP (stored only): fc_embedding 64, fc_hidden 64, pre-fc norms 8 + 16, mixer 112, one layer of
// 368 + MoE 312 (fused: gate_up [2, 8, 8], down [2, 8, 4]) + 288: 1232.
TEST(Qwen4ExpBuilder, TinyTextConfigCountsByHand) {
  auto m = BuildJson(TinyText());
  ASSERT_TRUE(m) << m.error().message;
  const auto totals = ComputeTotals(*m);
  EXPECT_EQ(totals.parameters, 3810u);
  EXPECT_EQ(totals.stored_bytes, (3810u + 1232u) * 4 + 7 * 8);
  // No norms in the layers: the streams' hc_norm stands in for them; no final norm.
  EXPECT_EQ(FindTensor(*m, "model.layers.0.input_layernorm.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.norm.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.hyper_connection_mixer.hc_norm.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.hyper_connection_mixer.block_inject_weight.weight"), nullptr);
  testing::ExpectShape(*m, "model.layers.3.mlp_hyper_connection.block_inject_weight.weight",
                       {2, 16});
  // PLE on the one-indexed layer 2: zero-based layer 1 only.
  const std::string e = "model.layers.1.ple.ple_embedding.ngram_embedding.shard_";
  ASSERT_NE(FindTensor(*m, e + "4.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, e + "4.weight")->shape, (std::vector<uint64_t>{4, 2}));
  EXPECT_EQ(FindTensor(*m, e + "0.weight")->shape, (std::vector<uint64_t>{5, 2}));
  EXPECT_EQ(FindTensor(*m, e + "5.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.2.ple.key_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.1.ple.ple_embedding.ngram_heads_offsets")->dtype,
            Dtype::kI64);
  // Routed experts per expert in the layers, fused in the MTP layer; MTP not loaded.
  EXPECT_NE(FindTensor(*m, "model.layers.0.mlp.experts.1.down_proj.weight"), nullptr);
  const Tensor* mtp = FindTensor(*m, "mtp.layers.0.mlp.experts.gate_up_proj");
  ASSERT_NE(mtp, nullptr);
  EXPECT_FALSE(mtp->loaded);
  testing::ExpectShape(*m, "mtp.pre_fc_norm_hidden.weight", {16});
  // Layer kinds: three recurrent delta-net layers, one attention layer with the indexer's cache
  // of key 4 + cos 2 + sin 2 = 8 elements per token.
  ASSERT_EQ(m->hp.layers.size(), 4u);
  testing::ExpectLayer(
      m->hp, 1, {.mixer = LayerMixer::kGatedDeltaNet, .recurrent = true, .conv_channels = 8u});
  testing::ExpectLayer(m->hp, 3,
                       {.attention = AttentionKind::kFull, .moe = true, .indexer_head_dim = 8u});
  EXPECT_EQ(m->hp.num_mtp_layers, 1u);
}

// The KV cache at 100 tokens, float32, one sequence: layer 3 caches K and V of 1 head x 4 (8
// elements, 3200 bytes) and the indexer's 8 (3200 bytes); the delta-net layers cache no tokens,
// only their fixed state.
TEST(Qwen4ExpBuilder, OnlyTheAttentionLayerCachesTokens) {
  auto m = BuildJson(TinyText());
  ASSERT_TRUE(m) << m.error().message;
  auto kv = EstimateKvCache(
      *m, KvCacheOptions{.context_tokens = 100, .batch = 1, .model_dtype = Dtype::kF32});
  ASSERT_TRUE(kv) << kv.error().message;
  uint64_t full = 0, indexer = 0;
  for (const auto& l : kv->layers) {
    if (l.kind == "full") full += l.bytes;
    if (l.kind == "indexer") indexer += l.bytes;
  }
  EXPECT_EQ(full, 3200u);
  EXPECT_EQ(indexer, 3200u);
  EXPECT_EQ(kv->bytes, 6400u + kv->state_bytes);
  EXPECT_GT(kv->state_bytes, 0u);
}

// Qwen4ExpForConditionalGeneration: the same text model under model.language_model, the Qwen3.5
// vision tower under model.visual, lm_head at the top.
TEST(Qwen4ExpBuilder, CompositeHasTheTextModelAndTheVisionTower) {
  nlohmann::json text = TinyText();
  text["model_type"] = "qwen4_exp_text";
  text.erase("architectures");
  text.erase("torch_dtype");
  nlohmann::json j = {{"model_type", "qwen4_exp"},
                      {"architectures", {"Qwen4ExpForConditionalGeneration"}},
                      {"torch_dtype", "float32"},
                      {"tie_word_embeddings", false},
                      {"text_config", text},
                      {"vision_config",
                       {{"depth", 1}, {"hidden_size", 8}, {"intermediate_size", 16},
                        {"num_heads", 2}, {"in_channels", 3}, {"patch_size", 2},
                        {"spatial_merge_size", 2}, {"temporal_patch_size", 2},
                        {"out_hidden_size", 8}, {"num_position_embeddings", 4}}}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_NE(FindTensor(*m, "model.language_model.layers.1.ple.conv1d.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.visual.blocks.0.attn.qkv.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "lm_head.weight"), nullptr);
  const auto by = ComputeTotals(*m);
  EXPECT_GT(by.parameters, 3810u);  // the tower adds to the text model's 3810
  EXPECT_EQ(m->model_type, "qwen4_exp");
}

// Qwen/Qwen3.8-Flash-Next's text model (config values as its config.json gives them). Published
// shapes: the n-gram table [320,001,536, 160] in 128 shards of [2,500,012, 160] (16 heads of the
// primes after 19,999,999: 20,000,003 ... 20,000,171, 320,001,446 rows padded to 128); the BF16
// checkpoint's 31 mtp.* tensors, 5.214 GB; o_proj [2560, 6144], index_qk_proj [640, 2560].
// By hand: delta-net layer 57,958,624, attention 49,807,872 + indexer 1,638,656, MoE
// 2,522,810,880, gated residual 6,604,800 (x 2 per layer), PLE 51,233,085,440, embeddings and
// lm_head 635,699,200 each, the stream mixer 6,563,840: 176,943,899,520 loaded parameters, of
// which 125,743,653,760 without the n-gram table ("125B-A6B MoE + 51B n-gram"). MTP
// 2,607,150,848 parameters; the PLE buffers 3 + 16 + 16 int64.
TEST(Qwen4ExpBuilder, FlashNextMatchesItsPublishedShapes) {
  nlohmann::json j = {
      {"model_type", "qwen4_exp_text"}, {"architectures", {"Qwen4ExpForCausalLM"}},
      {"torch_dtype", "bfloat16"}, {"tie_word_embeddings", false}, {"vocab_size", 248320},
      {"hidden_size", 2560}, {"num_hidden_layers", 48}, {"num_attention_heads", 24},
      {"num_key_value_heads", 2}, {"head_dim", 256},
      {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000000},
                           {"partial_rotary_factor", 0.25}}},
      {"linear_num_key_heads", 16}, {"linear_num_value_heads", 48},
      {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128},
      {"linear_conv_kernel_dim", 4}, {"full_attention_interval", 4}, {"num_experts", 512},
      {"num_experts_per_tok", 10}, {"moe_intermediate_size", 640},
      {"shared_expert_intermediate_size", 640}, {"hc_count", 4}, {"hc_lowrank", 320},
      {"indexer_n_heads", 4}, {"indexer_kv_heads", 1}, {"indexer_head_dim", 128},
      {"indexer_budget", 2048}, {"indexer_compress_ratio", 4}, {"ple_layer_ids", {2}},
      {"ple_embed_dim", 2560}, {"ple_conv_kernel_size", 4}, {"ngram_size", 3},
      {"heads_per_ngram", 8}, {"ngram_vocab_size_base", 20000000},
      {"make_ngram_vocab_size_divisible_by", 128}, {"split_ngram_parts", 128},
      {"eos_token_id", 248044}, {"mtp_num_hidden_layers", 1}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  const auto totals = ComputeTotals(*m);
  EXPECT_EQ(totals.parameters, 176943899520u);
  EXPECT_EQ(totals.stored_bytes, (176943899520u + 2607150848u) * 2 + 35 * 8);
  const std::string e = "model.layers.1.ple.ple_embedding.ngram_embedding.shard_";
  EXPECT_EQ(FindTensor(*m, e + "127.weight")->shape, (std::vector<uint64_t>{2500012, 160}));
  EXPECT_EQ(FindTensor(*m, e + "128.weight"), nullptr);
  testing::ExpectShape(*m, "model.layers.3.self_attn.o_proj.weight", {2560, 6144});
  testing::ExpectShape(*m, "model.layers.3.self_attn.indexer.index_qk_proj.weight", {640, 2560});
  uint64_t full = 0;
  for (const auto& l : m->hp.layers) full += l.attention == AttentionKind::kFull;
  EXPECT_EQ(full, 12u);
  // The indexer caches key 128 + cos 64 + sin 64 per token (rotary 256 x 0.25 = 64).
  EXPECT_EQ(m->hp.layers[3].indexer_head_dim, 256u);
}

// Bad configs: one line naming the field, no crash, no huge search or allocation.
TEST(Qwen4ExpBuilder, BadConfigsNameTheField) {
  const auto fails_naming = [](nlohmann::json j, const std::string& field) {
    auto m = BuildJson(j);
    ASSERT_FALSE(m) << field;
    EXPECT_NE(m.error().message.find(field), std::string::npos) << m.error().message;
  };
  auto j = TinyText();
  j["hc_count"] = 1;
  fails_naming(j, "hc_count");
  j = TinyText();
  j.erase("indexer_n_heads");
  fails_naming(j, "indexer_n_heads");
  j = TinyText();
  j["ple_layer_ids"] = {4};  // layer 4 (one-indexed) is the attention layer
  fails_naming(j, "ple_layer_ids");
  j = TinyText();
  j["ple_layer_ids"] = {0};
  fails_naming(j, "ple_layer_ids");
  j = TinyText();
  j["ple_embed_dim"] = 5;
  fails_naming(j, "ple_embed_dim");
  j = TinyText();
  j["ngram_vocab_size_base"] = 1000000000000000ull;
  fails_naming(j, "ngram_vocab_size_base");
  j = TinyText();
  j["heads_per_ngram"] = 1000000;
  fails_naming(j, "n-gram heads");
  j = TinyText();
  j["layer_types"] = {"linear_attention", "linear_attention", "sliding_attention",
                      "full_attention"};
  fails_naming(j, "layer_types");
  j = TinyText();
  j["num_experts_per_tok"] = 3;
  fails_naming(j, "num_experts_per_tok");
}

// Every name "layer_types" accepts is named by the error for one it does not (the three
// transformers validates and the two more the builder takes), and each of them builds.
TEST(Qwen4ExpBuilder, UnknownLayerTypeErrorNamesEveryAcceptedType) {
  auto j = TinyText();
  j["layer_types"] = {"linear_attention", "linear_attention", "linear_attention",
                      "sliding_attention"};
  auto m = BuildJson(j);
  ASSERT_FALSE(m);
  const std::string& message = m.error().message;
  EXPECT_NE(message.find("\"layer_types\"[3]"), std::string::npos) << message;
  for (const char* type : {"linear_attention", "deepseek_sparse_attention", "hybrid_indexed",
                           "full_attention", "qwen_sparse_attention"}) {
    EXPECT_NE(message.find(std::string("\"") + type + "\""), std::string::npos)
        << type << ": " << message;
    if (std::string_view(type) == "linear_attention") continue;
    j["layer_types"][3] = type;
    auto ok = BuildJson(j);
    ASSERT_TRUE(ok) << type << ": " << ok.error().message;
    EXPECT_EQ(ok->hp.layers[3].mixer, LayerMixer::kAttention) << type;
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
