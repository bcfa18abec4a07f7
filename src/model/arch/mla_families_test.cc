// Hand-counted MLA families of issue 30: glm4_moe_lite, minicpm3, longcat_flash and
// longcat_flash_ngram (mla_families.cc), and the KV cache their MLA layers give (the latent, as
// DeepSeek's).

#include <gtest/gtest.h>

#include "memfit/estimate_inference.h"
#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace {
namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

// Two layers, hidden 8, two heads; MLA q_lora 4, kv_lora 4, qk_nope 2, qk_rope 2; float32.
nlohmann::json TinyMla(const std::string& model_type) {
  return testing::TinyDecoderWith(model_type, {{"q_lora_rank", 4},
                                               {"kv_lora_rank", 4},
                                               {"qk_nope_head_dim", 2},
                                               {"qk_rope_head_dim", 2},
                                               {"num_key_value_heads", nullptr}});
}

nlohmann::json TinyGlm4MoeLite() {
  auto j = TinyMla("glm4_moe_lite");
  j["v_head_dim"] = 2;
  j["moe_intermediate_size"] = 3;
  j["n_routed_experts"] = 2;
  j["n_shared_experts"] = 1;
  j["num_experts_per_tok"] = 1;
  j["num_nextn_predict_layers"] = 1;
  // No "first_k_dense_replace" and a "topk_method" that would drop DeepSeek-V3's bias: the
  // class still makes layer 0 dense ("mlp_layer_types" default) and registers the bias.
  j["topk_method"] = "greedy";
  return j;
}

// Attention a layer: input norm 8, q_a 8x4 = 32, q_a norm 4, q_b 4x(2x4) = 32, kv_a 8x(4+2) = 48,
// kv_a norm 4, kv_b 4x(2x(2+2)) = 32, o 4x8 = 32, post norm 8: 200. Layer 0 dense 3x8x12 = 288
// -> 488; layer 1 MoE: gate 2x8 = 16, experts 2x(3x8x3) = 144, shared 3x8x3 = 72 -> 432.
// Loaded: 488 + 432 + embed 80 + norm 8 + lm_head 80 = 1088. MTP layer 2 (stored, not loaded):
// embed 80, enorm 8, hnorm 8, eh_proj 16x8 = 128, MoE layer 432, shared_head norm 8 + head 80 =
// 744. Stored: (1088 + 744) x 4 + two float32 e_score_correction_bias [2] = 7328 + 16 = 7344.
TEST(Glm4MoeLiteBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyGlm4MoeLite(), 1088u, 7344u);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0, {.attention = AttentionKind::kMla, .moe = false});
  testing::ExpectLayer(m->hp, 1, {.moe = true});
  EXPECT_NE(FindTensor(*m, "model.layers.2.mlp.gate.e_score_correction_bias"), nullptr);
  const Tensor* head = FindTensor(*m, "model.layers.2.shared_head.head.weight");
  ASSERT_NE(head, nullptr);
  EXPECT_FALSE(head->loaded);
  // transformers 5's class: one model-level inv_freq [qk_rope / 2], even under the 4.42
  // convention (no remote-code per-layer cos/sin caches as DeepSeek-V3's).
  auto old = BuildJson(TinyGlm4MoeLite(), {.buffers = BufferConvention::kTransformers442});
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_EQ(FindTensor(*old, "model.layers.0.self_attn.rotary_emb.cos_cached"), nullptr);
  testing::ExpectShape(*old, "model.rotary_emb.inv_freq", {1});
}

// zai-org/GLM-4.7-Flash's config.json (transformers_version 5.0.0rc0), as a public report of the
// checkpoint prints it together with its tensor list: 48 safetensors files, 9,703 tensors,
// 31,221,488,576 elements, 58.15 GiB. (A previous session noted that the index's metadata
// total_size is that element count, not a byte count; the index itself was not available here.)
nlohmann::json Glm47Flash() {
  return nlohmann::json::parse(R"({
    "architectures": ["Glm4MoeLiteForCausalLM"], "attention_bias": false,
    "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 10240,
    "max_position_embeddings": 202752, "model_type": "glm4_moe_lite",
    "moe_intermediate_size": 1536, "topk_method": "noaux_tc", "norm_topk_prob": true,
    "num_attention_heads": 20, "n_group": 1, "topk_group": 1, "n_routed_experts": 64,
    "n_shared_experts": 1, "routed_scaling_factor": 1.8, "num_experts_per_tok": 4,
    "first_k_dense_replace": 1, "num_hidden_layers": 47, "num_key_value_heads": 20,
    "num_nextn_predict_layers": 1, "partial_rotary_factor": 1.0, "rms_norm_eps": 1e-05,
    "rope_scaling": null, "rope_theta": 1000000, "tie_word_embeddings": false,
    "dtype": "bfloat16", "q_lora_rank": 768, "kv_lora_rank": 512, "qk_nope_head_dim": 192,
    "qk_rope_head_dim": 64, "v_head_dim": 256, "vocab_size": 154880})");
}

// Attention: q_a 2048x768 = 1,572,864 + 768 + q_b 768x(20x256) = 3,932,160 + kv_a 2048x576 =
// 1,179,648 + 512 + kv_b 512x(20x448) = 4,587,520 + o 5120x2048 = 10,485,760 = 21,759,232; norms
// 4,096. Dense layer 0: + 3x2048x10240 = 62,914,560 -> 84,677,888. MoE layer: + gate 64x2048 =
// 131,072 + experts 64x3x2048x1536 = 603,979,776 + shared 3x2048x1536 = 9,437,184 ->
// 635,311,424. Loaded: 84,677,888 + 46 x 635,311,424 + embed and lm_head 2 x 317,194,240 + norm
// 2,048 = 29,943,390,976. MTP layer 47: 635,311,424 + embed 317,194,240 + enorm/hnorm 4,096 +
// eh_proj 4096x2048 = 8,388,608 + shared_head 2,048 + 317,194,240 = 1,278,094,656 (with its
// 64-element router bias). Elements: 29,943,390,976 + 1,278,094,656 + 46 x 64 = 31,221,488,576,
// the report's count; memfit counts the 47 float32 biases as buffers: 31,221,485,568 bf16
// elements x 2 + 3,008 x 4 = 62,442,983,168 bytes (58.15 GiB). Tensors: 3 + 48 x 9 + 3 +
// 47 x (2 + 192 + 3) + 6 = 9,703.
TEST(Glm4MoeLiteBuilder, Glm47FlashMatchesItsTensorList) {
  auto m = testing::BuildCounted(Glm47Flash(), 29'943'390'976u, 62'442'983'168u);
  ASSERT_TRUE(m);
  uint64_t stored_tensors = 0, elements = 0;
  for (const auto& x : m->tensors) {
    if (!x.stored) continue;
    stored_tensors += x.copies;
    elements += x.numel * x.copies;
  }
  EXPECT_EQ(stored_tensors, 9'703u);
  EXPECT_EQ(elements, 31'221'488'576u);
  EXPECT_EQ(m->hp.layers.size(), 47u);
  EXPECT_EQ(m->hp.kv_lora_rank, 512u);
  EXPECT_EQ(m->hp.qk_rope_head_dim, 64u);
}

// MiniCPM3, v_head_dim absent: hidden / heads = 4. A layer: input norm 8, q_a 32, q_a norm 4, q_b
// 4x(2x4) = 32, kv_a 48, kv_a norm 4, kv_b 4x(2x(2+4)) = 48, o (2x4)x8 = 64, MLP 3x8x12 = 288,
// post norm 8: 536. Tied (MiniCPM3Config's default): 2 x 536 + embed 80 + norm 8 = 1160;
// stored 1160 x 4 = 4640 (embed_scale and inv_freq are not persistent). Untied: + lm_head 80.
TEST(MiniCpm3Builder, TinyConfigCountsByHand) {
  auto j = TinyMla("minicpm3");
  j["scale_emb"] = 12;
  j["scale_depth"] = 1.4;
  j["dim_model_base"] = 256;
  auto m = testing::BuildCounted(j, 1160u, 4640u);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hp.v_head_dim, 4u);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kMla);
  EXPECT_EQ(m->hp.layers[1].intermediate_size, 12u);
  EXPECT_NE(FindTensor(*m, "model.embed_tokens.embed_scale"), nullptr);
  const Tensor* lm = FindTensor(*m, "lm_head.weight");
  ASSERT_NE(lm, nullptr);
  EXPECT_EQ(lm->tied_to, "model.embed_tokens.weight");
  j["tie_word_embeddings"] = false;
  j["v_head_dim"] = 2;  // kv_b 4x(2x4) = 32 and o 4x8 = 32: 48 less a layer
  auto untied = testing::BuildCounted(j, 1160u + 80 - 2 * 48);
  ASSERT_TRUE(untied);
}

// openbmb/MiniCPM3-4B's dimensions (MiniCPM3Config's documented defaults for that checkpoint:
// vocab 73448, hidden 2560, 62 layers, 40 heads, intermediate 6400, q_lora 768, kv_lora 256,
// qk_nope 64, qk_rope 32, v = 2560 / 40 = 64, tied). Attention: 2560x768 = 1,966,080 + 768 +
// 768x(40x96) = 2,949,120 + 2560x288 = 737,280 + 256 + 256x(40x128) = 1,310,720 + 2560x2560 =
// 6,553,600 = 13,517,824; + norms 5,120 + MLP 3x2560x6400 = 49,152,000 -> 62,674,944 a layer.
// 62 layers + embed 73448x2560 = 188,026,880 + norm 2,560 = 4,073,875,968 ("4B").
TEST(MiniCpm3Builder, MiniCpm3FourBByHand) {
  auto j = nlohmann::json::parse(R"({"model_type": "minicpm3", "vocab_size": 73448,
    "hidden_size": 2560, "num_hidden_layers": 62, "num_attention_heads": 40,
    "num_key_value_heads": 40, "intermediate_size": 6400, "q_lora_rank": 768,
    "kv_lora_rank": 256, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32,
    "max_position_embeddings": 32768, "torch_dtype": "bfloat16"})");
  auto m = testing::BuildCounted(j, 4'073'875'968u);
  ASSERT_TRUE(m);
}

nlohmann::json TinyLongcat() {
  auto j = TinyMla("longcat_flash");
  j.erase("num_hidden_layers");
  j.erase("intermediate_size");
  j["num_layers"] = 2;
  j["ffn_hidden_size"] = 12;
  j["v_head_dim"] = 2;
  j["n_routed_experts"] = 2;
  j["zero_expert_num"] = 1;
  j["expert_ffn_hidden_size"] = 3;
  j["moe_topk"] = 1;
  return j;
}

// Attention 184 (as the glm4_moe_lite case without its norms: 32 + 4 + 32 + 48 + 4 + 32 + 32).
// Sublayer: input norm 8 + 184 + post norm 8 + mlps.s 3x8x12 = 288 -> 488. Layer: 2 x 488 +
// router classifier (2 + 1 zero expert) x 8 = 24 + experts 2 x (3x8x3) = 144 -> 1144. Loaded:
// 2 x 1144 + embed 80 + norm 8 + lm_head 80 = 2456. MTP (stored, not loaded): embed 80, eh_proj
// 16x8 = 128, enorm.m 8, hnorm.m 8, input norm 8, attention 184, post norm 8, MLP 288, norm 8 =
// 720. Stored: (2456 + 720) x 4 + two float32 e_score_correction_bias [3] = 12704 + 24 = 12728.
TEST(LongcatFlashBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyLongcat(), 2456u, 12728u);
  ASSERT_TRUE(m);
  // Two attention sublayers a layer, each with its own cache; the MoE on the first.
  ASSERT_EQ(m->hp.layers.size(), 4u);
  EXPECT_EQ(m->hp.num_layers, 4u);
  EXPECT_TRUE(m->hp.layers[0].moe);
  EXPECT_FALSE(m->hp.layers[1].moe);
  EXPECT_EQ(m->hp.layers[3].attention, AttentionKind::kMla);
  testing::ExpectShape(*m, "model.layers.1.mlp.router.classifier.weight", {3, 8});
  EXPECT_EQ(FindTensor(*m, "model.layers.1.mlp.experts.2.gate_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.1.self_attn.1.kv_b_proj.weight"), nullptr);
  const Tensor* mtp = FindTensor(*m, "model.mtp.layers.0.transformer_layer.mlp.up_proj.weight");
  ASSERT_NE(mtp, nullptr);
  EXPECT_FALSE(mtp->loaded);
}

// The latent cache, as DeepSeek's under vLLM/SGLang: kv_lora 4 + qk_rope 2 = 6 elements a token
// and attention sublayer, 4 sublayers, bfloat16 (2 bytes), 10 tokens: 6 x 4 x 2 x 10 = 480; per
// token 6 x 4 x 2 = 48.
TEST(LongcatFlashBuilder, CachesTheLatentOfEachSublayer) {
  auto m = BuildJson(TinyLongcat());
  ASSERT_TRUE(m) << m.error().message;
  auto kv = EstimateKvCache(*m, KvCacheOptions{.context_tokens = 10, .mla_latent = true});
  ASSERT_TRUE(kv) << kv.error().message;
  EXPECT_EQ(kv->bytes, 480u);
  EXPECT_EQ(kv->bytes_per_token, 48u);
}

// LongcatFlashConfig's documented LongCat-Flash dimensions (vocab 131072, hidden 6144, 28 layers,
// 64 heads, ffn 12288, q_lora 1536, kv_lora 512, qk_nope 128, qk_rope 64, v 128, 512 experts of
// 2048 + 256 zero experts). Attention: 6144x1536 = 9,437,184 + 1,536 + 1536x(64x192) =
// 18,874,368 + 6144x576 = 3,538,944 + 512 + 512x(64x256) = 8,388,608 + 8192x6144 = 50,331,648 =
// 90,572,800. Layer: 2 x (90,572,800 + 12,288 norms + 3x6144x12288 = 226,492,416) + router
// 768x6144 = 4,718,592 + experts 512x3x6144x2048 = 19,327,352,832 = 19,966,226,432. Loaded: 28
// layers + embed and lm_head 2 x 805,306,368 + norm 6,144 = 560,664,958,976 (card: 560B).
TEST(LongcatFlashBuilder, LongcatFlashChatByHand) {
  auto j = nlohmann::json::parse(R"({"model_type": "longcat_flash", "vocab_size": 131072,
    "hidden_size": 6144, "num_layers": 28, "num_attention_heads": 64, "ffn_hidden_size": 12288,
    "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "v_head_dim": 128, "n_routed_experts": 512, "zero_expert_num": 256,
    "expert_ffn_hidden_size": 2048, "moe_topk": 12, "torch_dtype": "bfloat16"})");
  auto m = BuildJson(j, {.compact_repeats = true});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 560'664'958'976u);
  EXPECT_EQ(m->hp.layers.size(), 56u);
}

nlohmann::json TinyLongcatNgram() {
  auto j = TinyLongcat();
  j.merge_patch({{"model_type", "longcat_flash_ngram"},
                 {"ngram_vocab_size_ratio", 2},
                 {"emb_neighbor_num", 3},
                 {"emb_split_num", 2}});
  return j;
}

// TinyLongcat (2456 loaded, 12728 bytes) plus the n-gram embedding: k 2 x (n 3 - 1) = 4 tables of
// H 8 / 4 = 2 columns, m = 2 x vocab 10 = 20, rows 21, 23, 25, 27 = 96 -> 192; post_projs 4 x
// (8x2) = 64. Loaded 2456 + 256 = 2712; stored 12728 + 256 x 4 = 13752.
TEST(LongcatFlashNgramBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyLongcatNgram(), 2712u, 13752u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.ngram_embeddings.embedders.0.weight", {21, 2});
  testing::ExpectShape(*m, "model.ngram_embeddings.embedders.3.weight", {27, 2});
  testing::ExpectShape(*m, "model.ngram_embeddings.post_projs.3.weight", {8, 2});
  EXPECT_EQ(FindTensor(*m, "model.ngram_embeddings.embedders.4.weight"), nullptr);
  EXPECT_EQ(m->hp.layers.size(), 4u);
  const Tensor* mtp = FindTensor(*m, "model.mtp.embed_tokens.weight");
  ASSERT_NE(mtp, nullptr);
  EXPECT_FALSE(mtp->loaded);
  // A fractional ratio (a FLASHLocal config has 28.8): int(m + 2i + 1) as Python truncates, m =
  // 0.25 x 10 = 2.5: rows 3, 5, 7, 9 = 24 -> 48, 144 less than with ratio 2.
  auto j = TinyLongcatNgram();
  j["ngram_vocab_size_ratio"] = 0.25;
  auto fractional = testing::BuildCounted(j, 2712u - 144);
  ASSERT_TRUE(fractional);
  testing::ExpectShape(*fractional, "model.ngram_embeddings.embedders.1.weight", {5, 2});
}

// meituan-longcat/LongCat-Flash-Lite's config.json (the keys memfit reads, as public ports of the
// model quote it; the index was not available). Layer: 2 sublayers of MLA (3072x1536 =
// 4,718,592 + 1,536 + 1536x(32x192) = 9,437,184 + 3072x576 = 1,769,472 + 512 + 512x(32x256) =
// 4,194,304 + 4096x3072 = 12,582,912 = 32,704,512) + norms 6,144 + mlps 3x3072x6144 = 56,623,104
// = 89,333,760, + router 384x3072 = 1,179,648 + experts 256x3x3072x1024 = 2,415,919,104 =
// 2,595,766,272; 14 layers 36,340,727,808. Embed and lm_head 2 x 402,653,184 + norm 3,072. N-gram:
// m = 78 x 131072 = 10,223,616, 12 tables of 256 columns, (12 m + 144) x 256 = 31,406,985,216 +
// post_projs 12 x 3072x256 = 9,437,184 = 31,416,422,400 (card: "31.4B" in n-gram embeddings).
// Loaded 68,562,459,648 (card: 68.5B total). MTP (stored, not loaded): embed 402,653,184 +
// eh_proj 18,874,368 + 4 norms 12,288 + MLA 32,704,512 + MLP 56,623,104 + norm 3,072 =
// 510,870,528.
TEST(LongcatFlashNgramBuilder, LongcatFlashLiteMatchesTheCard) {
  auto j = nlohmann::json::parse(R"({"architectures": ["LongcatFlashNgramForCausalLM"],
    "model_type": "longcat_flash_ngram", "vocab_size": 131072, "hidden_size": 3072,
    "ffn_hidden_size": 6144, "expert_ffn_hidden_size": 1024, "num_layers": 14,
    "num_attention_heads": 32, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128, "n_routed_experts": 256, "moe_topk": 12,
    "routed_scaling_factor": 6.0, "zero_expert_num": 128, "ngram_vocab_size_ratio": 78,
    "emb_neighbor_num": 4, "emb_split_num": 4, "rope_theta": 5000000.0, "rms_norm_eps": 1e-5,
    "max_position_embeddings": 327680, "eos_token_id": 2, "torch_dtype": "bfloat16"})");
  auto m = BuildJson(j, {.compact_repeats = true});
  ASSERT_TRUE(m) << m.error().message;
  const auto totals = ComputeTotals(*m);
  EXPECT_EQ(totals.parameters, 68'562'459'648u);
  uint64_t ngram = 0, stored = 0;
  for (const auto& x : m->tensors) {
    if (x.name.starts_with("model.ngram_embeddings.")) ngram += x.numel * x.copies;
    if (x.stored) stored += x.numel * x.copies;
  }
  EXPECT_EQ(ngram, 31'416'422'400u);
  EXPECT_EQ(stored, 68'562'459'648u + 510'870'528u + 14 * 384);  // + MTP, float32 biases
  EXPECT_EQ(m->hp.layers.size(), 28u);
}

TEST(MlaFamilies, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyLongcat(), {{"num_layers", nullptr}}, "num_layers");
  testing::ExpectPatchRejected(TinyLongcat(), {{"expert_ffn_hidden_size", nullptr}},
                               "expert_ffn_hidden_size");
  testing::ExpectPatchRejected(TinyLongcat(), {{"zero_expert_num", UINT64_MAX}}, "zero_expert_num");
  const auto ngram = TinyLongcatNgram();
  testing::ExpectPatchRejected(ngram, {{"ngram_vocab_size_ratio", nullptr}},
                               "ngram_vocab_size_ratio");
  testing::ExpectPatchRejected(ngram, {{"ngram_vocab_size_ratio", "78"}}, "ngram_vocab_size_ratio");
  testing::ExpectPatchRejected(ngram, {{"ngram_vocab_size_ratio", 1e300}},
                               "ngram_vocab_size_ratio");
  testing::ExpectPatchRejected(ngram, {{"emb_neighbor_num", nullptr}}, "emb_neighbor_num");
  testing::ExpectPatchRejected(ngram, {{"emb_neighbor_num", 1}}, "emb_neighbor_num");
  testing::ExpectPatchRejected(ngram, {{"emb_neighbor_num", uint64_t{1} << 40}},
                               "emb_neighbor_num");
  testing::ExpectPatchRejected(ngram, {{"emb_split_num", 0}}, "emb_split_num");
  testing::ExpectPatchRejected(ngram, {{"emb_split_num", 5}}, "emb_split_num");  // 10 tables > H 8
  testing::ExpectPatchRejected(ngram, {{"num_layers", uint64_t{1} << 40}},
                               "num_layers");  // at once
  testing::ExpectPatchRejected(TinyMla("minicpm3"), {{"kv_lora_rank", 0}}, "kv_lora_rank");
  testing::ExpectPatchRejected(TinyMla("minicpm3"), {{"hidden_size", uint64_t{1} << 45}},
                               "hidden_size");
  testing::ExpectPatchRejected(TinyGlm4MoeLite(), {{"qk_rope_head_dim", nullptr}},
                               "qk_rope_head_dim");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
