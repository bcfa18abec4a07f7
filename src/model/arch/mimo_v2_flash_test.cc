#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "memfit/build_exact.h"
#include "memfit/estimate_inference.h"
#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace {
namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

// Two layers: layer 0 global attention with a dense MLP, layer 1 sliding window (4 tokens) with
// two routed experts; one MTP layer stated.
nlohmann::json TinyMiMoV2() {
  return testing::TinyDecoderWith("mimo_v2_flash", {{"architectures", {"MiMoV2FlashForCausalLM"}},
                                                    {"head_dim", 4},
                                                    {"v_head_dim", 2},
                                                    {"swa_num_attention_heads", 2},
                                                    {"swa_num_key_value_heads", 2},
                                                    {"swa_head_dim", 4},
                                                    {"swa_v_head_dim", 2},
                                                    {"sliding_window_size", 4},
                                                    {"hybrid_layer_pattern", {0, 1}},
                                                    {"moe_layer_freq", {0, 1}},
                                                    {"n_routed_experts", 2},
                                                    {"num_experts_per_tok", 1},
                                                    {"moe_intermediate_size", 3},
                                                    {"add_swa_attention_sink_bias", true},
                                                    {"add_full_attention_sink_bias", false},
                                                    {"num_nextn_predict_layers", 1},
                                                    {"tie_word_embeddings", false},
                                                    {"max_position_embeddings", nullptr}});
}

// Layer 0 (global, dense): norms 2x8 = 16; q 8x(2x4) = 64, k 8x(1x4) = 32, v 8x(1x2) = 16,
//   o (2x2)x8 = 32; MLP 3x8x12 = 288: 448.
// Layer 1 (sliding, MoE): norms 16; q 64, k 8x(2x4) = 64, v 8x(2x2) = 32, o 32, sink bias 2;
//   router 2x8 = 16, experts 2x(3x8x3) = 144: 370 (+ e_score_correction_bias, 2 float32 buffer).
// Loaded parameters: embed 80 + 448 + 370 + norm 8 + lm_head 80 = 986.
// MTP layer (stored, not loaded): enorm 8, hnorm 8, eh_proj 16x8 = 128, input norm 8, the
//   sliding attention 194, pre_mlp_layernorm 8, dense MLP 288, final_layernorm 8: 650.
// Stored: (986 + 650) x 4 + 2 x 4 = 6552 bytes.
TEST(MiMoV2FlashBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyMiMoV2(), 986u, 6552u);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0,
                       {.attention = AttentionKind::kFull,
                        .num_kv_heads = 1u,
                        .head_dim_k = 4u,
                        .head_dim_v = 2u,
                        .moe = false});
  testing::ExpectLayer(
      m->hp, 1,
      {.attention = AttentionKind::kSliding, .num_kv_heads = 2u, .window_tokens = 4u, .moe = true});
  testing::ExpectShape(*m, "model.layers.1.self_attn.attention_sink_bias", {2});
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.attention_sink_bias"), nullptr);
  testing::ExpectShape(*m, "model.layers.1.self_attn.v_proj.weight", {4, 8});
  const Tensor* eh = FindTensor(*m, "model.mtp.layers.0.eh_proj.weight");
  ASSERT_NE(eh, nullptr);
  EXPECT_EQ(eh->shape, (std::vector<uint64_t>{8, 16}));
  EXPECT_FALSE(eh->loaded);
  EXPECT_NE(FindTensor(*m, "model.mtp.layers.0.pre_mlp_layernorm.weight"), nullptr);
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
}

// KV cache for 8 tokens, one sequence, float32: layer 0 keeps K 1x4 + V 1x2 = 6 elements (24
// bytes) per token for all 8 tokens = 192; layer 1 keeps K 2x4 + V 2x2 = 12 elements (48 bytes)
// per token for its 4-token window = 192. Total 384 bytes; the MTP layer is not counted.
TEST(MiMoV2FlashBuilder, KvCacheByHand) {
  auto m = BuildJson(TinyMiMoV2());
  ASSERT_TRUE(m) << m.error().message;
  auto kv = EstimateKvCache(
      *m, KvCacheOptions{.context_tokens = 8, .batch = 1, .model_dtype = Dtype::kF32});
  ASSERT_TRUE(kv) << kv.error().message;
  ASSERT_EQ(kv->layers.size(), 2u);
  EXPECT_EQ(kv->layers[0].bytes, 192u);
  EXPECT_EQ(kv->layers[1].kind, "sliding");
  EXPECT_EQ(kv->layers[1].tokens, 4u);
  EXPECT_EQ(kv->layers[1].bytes, 192u);
  EXPECT_EQ(kv->bytes, 384u);
}

// Without num_nextn_predict_layers the three MTP layers of the release are assumed, and said so.
TEST(MiMoV2FlashBuilder, UnstatedMtpLayersAreAnAssumption) {
  auto j = TinyMiMoV2();
  j.erase("num_nextn_predict_layers");
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.num_mtp_layers, 3u);
  EXPECT_NE(FindTensor(*m, "model.mtp.layers.2.final_layernorm.weight"), nullptr);
  bool said = false;
  for (const auto& a : m->assumptions)
    said = said || a.find("3 MTP layers assumed") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, (986u + 3 * 650u) * 4 + 8);
}

TEST(MiMoV2FlashBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"hybrid_layer_pattern", nullptr}},
                               "hybrid_layer_pattern");
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"hybrid_layer_pattern", {0}}},
                               "hybrid_layer_pattern");
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"moe_layer_freq", {0, 2}}}, "moe_layer_freq");
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"n_routed_experts", 0}}, "n_routed_experts");
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"sliding_window_size", 0}}, "sliding_window_size");
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"swa_head_dim", 0}}, "head dims");
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"num_hidden_layers", uint64_t{1} << 40}}, "");
}

// XiaomiMiMo/MiMo-V2-Flash (block FP8 release): built exactly; its logical parameters without the
// MTP layers round to the model card's "309B total parameters" (MiMo-V2-Flash README, "Total
// Params 309B"), and each of its three MTP layers to the card's "0.33B params/block". No weight
// index of this release was available: stored bytes are checked against the formula only.
TEST(MiMoV2FlashBuilder, RealConfigMatchesTheModelCard) {
  auto config = testing::ParseEvalConfig("recent/XiaomiMiMo__MiMo-V2-Flash");
  if (!config) GTEST_SKIP() << "recent/XiaomiMiMo__MiMo-V2-Flash/config.json is absent";
  auto m = BuildExactFromConfig(*config, BuildOptions{});
  ASSERT_TRUE(m) << m.error().message;
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  const auto t = ComputeTotals(*m);
  // By hand (H 4096, 64 heads of 192 / v 128): global attention 4096 x (12288 + 768 + 512) +
  // 8192 x 4096 = 89,128,960 (9 layers); sliding attention 4096 x (12288 + 1536 + 1024) + 8192 x
  // 4096 + 64 sinks = 94,371,904 (39 layers); 47 MoE MLPs of 256 x 3 x 4096 x 2048 + router
  // 256 x 4096 = 6,443,499,520; one dense MLP 3 x 4096 x 16384 = 201,326,592; embeddings and
  // head 2 x 152,576 x 4096 = 1,249,902,592; 97 norms of 4096 = 397,312.
  const uint64_t main =
      9ull * 89128960 + 39ull * 94371904 + 47ull * 6443499520 + 201326592 + 1249902592 + 397312;
  EXPECT_EQ(t.parameters, main);
  EXPECT_EQ((t.parameters + 500'000'000) / 1'000'000'000, 309u);
  // MTP: enorm, hnorm, input, pre-MLP and final norms 5 x 4096, eh_proj 4096 x 8192, sliding
  // attention 94,371,904, dense MLP 201,326,592 = 329,273,408 each (card: 0.33B).
  uint64_t mtp = 0;
  for (const auto& x : m->tensors) {
    if (x.name.starts_with("model.mtp.")) mtp += LogicalParams(x);
  }
  EXPECT_EQ(mtp, 3ull * 329273408);
  ASSERT_EQ(m->hp.layers.size(), 48u);
  uint64_t sliding = 0;
  for (const auto& l : m->hp.layers) sliding += l.attention == AttentionKind::kSliding;
  EXPECT_EQ(sliding, 39u);
  // Block FP8: every expert weight float8 with a float32 [16, 32] weight_scale_inv.
  const Tensor* w = FindTensor(*m, "model.layers.1.mlp.experts.0.gate_proj.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, Dtype::kF8E4M3);
  testing::ExpectShape(*m, "model.layers.1.mlp.experts.0.gate_proj.weight_scale_inv", {16, 32});
}

// --- mimo_v2 (MiMo-V2.5 / V2.6: MiMoV2ForCausalLM) -----------------------------------------

// TinyMiMoV2 as a mimo_v2 release stores it: bfloat16, a fused qkv_proj, block FP8 of 4 x 4 with
// the o_proj listed in "ignored_layers", MXFP4 experts of 32, the router in float32 (vLLM's
// default "moe_router_dtype").
nlohmann::json TinyMiMoV2Release() {
  auto j = TinyMiMoV2();
  j.merge_patch({{"model_type", "mimo_v2"},
                 {"architectures", {"MiMoV2ForCausalLM"}},
                 {"torch_dtype", "bfloat16"},
                 {"attention_projection_layout", "fused_qkv"},
                 {"moe_intermediate_size", 32},
                 {"quantization_config",
                  {{"quant_method", "fp8"},
                   {"weight_block_size", {4, 4}},
                   {"store_dtype", "mxfp4"},
                   {"ignored_layers",
                    {"model.layers.0.self_attn.o_proj", "model.layers.1.self_attn.o_proj"}}}}});
  return j;
}

// One shard (num_key_value_heads 1). Layer 0: norms 16 (32 B); qkv_proj [2x4 + 4 + 2 = 14, 8]
// FP8 112 B + scale_inv [ceil(14/4) = 4, 2] float32 32 B; o_proj bf16 [8, 4] 32 (64 B); MLP FP8
// 288 B + scales 3 x 6 float32 72 B: 448 parameters, 600 B. Layer 1: norms 32 B; qkv_proj [2x4 +
// 2x4 + 2x2 = 20, 8] 160 B + scale_inv [5, 2] 40 B; o_proj 64 B; sinks 2 (4 B); router float32
// [2, 8] 16 (64 B); e_score_correction_bias 8 B; 2 MXFP4 experts, each gate/up weight [32, 4] +
// weight_scale [32, 1] uint8 (160 B) and down [8, 16] + [8, 1] (136 B), 3 x 256 logical: 1536
// parameters, 912 B. Layer 1: 16 + 160 + 32 + 2 + 16 + 1536 = 1762 parameters, 1284 B. Loaded
// 80 + 448 + 1762 + 8 + 80 = 2378. MTP (stored): norms 5 x 16 B, eh_proj 256 B, qkv 200 B,
// o_proj unquantized 64 B, sinks 4 B, MLP 360 B = 964 B. Stored: 600 + 1284 + embed 160 + norm 16
// + lm_head 160 + 964 = 3184 B.
TEST(MiMoV2Builder, TinyReleaseCountsByHand) {
  auto m = testing::BuildCounted(TinyMiMoV2Release(), 2378u, 3184u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.1.self_attn.qkv_proj.weight", {20, 8});
  testing::ExpectShape(*m, "model.layers.1.self_attn.qkv_proj.weight_scale_inv", {5, 2});
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.q_proj.weight"), nullptr);
  const auto dtype_of = [&](const std::string& name) {
    const Tensor* x = FindTensor(*m, name);
    return x ? std::optional<Dtype>(x->dtype) : std::nullopt;
  };
  EXPECT_EQ(dtype_of("model.layers.0.self_attn.o_proj.weight"), Dtype::kBF16);
  EXPECT_EQ(dtype_of("model.mtp.layers.0.self_attn.o_proj.weight"), Dtype::kBF16);
  EXPECT_EQ(dtype_of("model.layers.1.mlp.gate.weight"), Dtype::kF32);
  const Tensor* w = FindTensor(*m, "model.layers.1.mlp.experts.1.down_proj.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, Dtype::kU8);
  EXPECT_EQ(w->shape, (std::vector<uint64_t>{8, 16}));
  testing::ExpectShape(*m, "model.layers.1.mlp.experts.1.down_proj.weight_scale", {8, 1});
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kSliding);
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
}

// XiaomiMiMo/MiMo-V2.5-Pro's config.json as a public model report prints it (with its tensor
// list: 34 files, 159,581 tensors, 1,023,244,718,976 elements, 962.40 GiB): 70 layers, global
// attention every 7th or 8th layer, layer 0 dense, FP8 experts (no "store_dtype").
nlohmann::json MiMoV25Pro() {
  nlohmann::json hybrid = nlohmann::json::array(), moe = nlohmann::json::array();
  for (int i = 0; i < 70; ++i) {  // global: 0, 7, 15, 23, 31, 39, 47, 55, 62, 69
    hybrid.push_back(
        i == 0 || i == 7 || (i >= 15 && i <= 55 && (i - 15) % 8 == 0) || i == 62 || i == 69 ? 0
                                                                                            : 1);
    moe.push_back(i == 0 ? 0 : 1);
  }
  nlohmann::json ignored = nlohmann::json::array();
  for (int i = 0; i < 70; ++i)
    ignored.push_back(fmt::format("model.layers.{}.self_attn.o_proj", i));
  ignored.push_back("model.decoder.self_attn.o_proj");
  auto j = nlohmann::json::parse(R"({"architectures": ["MiMoV2ForCausalLM"],
    "model_type": "mimo_v2", "add_full_attention_sink_bias": false,
    "add_swa_attention_sink_bias": true, "attention_bias": false,
    "attention_projection_layout": "fused_qkv", "head_dim": 192, "hidden_act": "silu",
    "hidden_size": 6144, "intermediate_size": 16384, "max_position_embeddings": 1048576,
    "moe_intermediate_size": 2048, "n_routed_experts": 384, "num_attention_heads": 128,
    "num_experts_per_tok": 8, "num_hidden_layers": 70, "num_key_value_heads": 8,
    "sliding_window": 128, "sliding_window_size": 128, "swa_head_dim": 192,
    "swa_num_attention_heads": 128, "swa_num_key_value_heads": 8, "swa_v_head_dim": 128,
    "tie_word_embeddings": false, "torch_dtype": "bfloat16", "v_head_dim": 128,
    "vocab_size": 152576, "quantization_config": {"activation_scheme": "dynamic",
    "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}})");
  j["hybrid_layer_pattern"] = hybrid;
  j["moe_layer_freq"] = moe;
  j["quantization_config"]["ignored_layers"] = ignored;
  return j;
}

struct StoredByDtype {
  uint64_t tensors = 0, elements = 0;
  std::map<Dtype, uint64_t> by_dtype;  // stored elements
};

StoredByDtype CountStored(const Model& m) {
  StoredByDtype s;
  for (const auto& x : m.tensors) {
    if (!x.stored) continue;
    s.tensors += x.copies;
    s.elements += x.numel * x.copies;
    s.by_dtype[x.dtype] += x.numel * x.copies;
  }
  return s;
}

// The report's tensor list, as built: qkv_proj [27136 = 8 x (16 x 192 + 192 + 128), 6144] FP8 with
// scale_inv [216 = 8 shards x 27, 48] in all 73 layers (70 + 3 MTP); o_proj bf16; layer 0 and the
// MTP layers a dense FP8 MLP; 69 x 384 FP8 experts with [16, 48] / [48, 16] scales; the router
// float32 [384, 6144]; 60 + 3 attention_sink_bias [128].
TEST(MiMoV2Builder, MiMoV25ProMatchesItsTensorList) {
  auto m = BuildJson(MiMoV25Pro(), {.compact_repeats = true});
  ASSERT_TRUE(m) << m.error().message;
  const auto s = CountStored(*m);
  EXPECT_EQ(s.tensors, 159'581u);
  EXPECT_EQ(s.elements, 1'023'244'718'976u);
  // bf16 9,450,733,440 x 2 + float32 224,695,296 x 4 + FP8 1,013,569,290,240 (the elements
  // above) = 1,033,369,538,304 bytes: the report's 962.40 GiB.
  EXPECT_EQ(s.by_dtype.at(Dtype::kBF16), 9'450'733'440u);
  EXPECT_EQ(s.by_dtype.at(Dtype::kF32), 224'695'296u);
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 1'033'369'538'304u);
  testing::ExpectShape(*m, "model.layers.3.self_attn.qkv_proj.weight_scale_inv", {216, 48});
  testing::ExpectShape(*m, "model.mtp.layers.2.self_attn.qkv_proj.weight", {27136, 6144});
  EXPECT_EQ(FindTensor(*m, "model.layers.69.self_attn.attention_sink_bias"), nullptr);
  EXPECT_EQ(m->hp.layers.size(), 70u);
}

// MiMo-V2.6-Pro-RL and MiMo-V2.6-Flash-RL: their config.json (V2.6-Flash-RL's as a public test
// pins the release's fields; V2.6-Pro-RL's as V2.5-Pro's with the V2.6 quantization fields) and
// the per-dtype element sums of their safetensors headers (a public comparison of the two). Both
// store vision and audio towers, which memfit does not build: F32, F8_E4M3 and U8 (scales, the
// FP8 layers, the MXFP4 experts) match the headers exactly; BF16 falls short by the towers.
TEST(MiMoV2Builder, MiMoV26MatchesItsHeaderTotals) {
  auto pro = MiMoV25Pro();
  pro.merge_patch({{"moe_router_dtype", "bfloat16"},
                   {"num_nextn_predict_layers", 3},
                   {"vision_config", nlohmann::json::object()},
                   {"audio_config", nlohmann::json::object()},
                   {"quantization_config", {{"store_dtype", "mxfp4"}, {"mxfp4_block_size", 32}}}});
  auto m = BuildJson(pro, {.compact_repeats = true});
  ASSERT_TRUE(m) << m.error().message;
  auto s = CountStored(*m);
  EXPECT_EQ(s.by_dtype[Dtype::kF32], 857'088u);
  EXPECT_EQ(s.by_dtype[Dtype::kF8E4M3], 13'378'781'184u);
  EXPECT_EQ(s.by_dtype[Dtype::kU8], 531'351'207'936u);
  EXPECT_EQ(s.by_dtype[Dtype::kBF16], 10'647'286'656u - 1'033'761'792u);  // headers less towers
  EXPECT_NE(m->source.find("approximate"), std::string::npos);
  EXPECT_TRUE(testing::HasLine(m->assumptions, "approximate: the vision and audio towers"));

  // V2.6-Flash-RL: 48 layers, global attention (4 KV heads: 4 shards) at 0, 5, 11, ..., 47,
  // sliding attention with 8 KV heads (2 a shard: scale_inv [4 x 29 = 116, 32]).
  auto flash = pro;
  nlohmann::json hybrid = nlohmann::json::array(), moe = nlohmann::json::array(), ignored;
  for (int i = 0; i < 48; ++i) {
    hybrid.push_back(i == 0 || i % 6 == 5 ? 0 : 1);
    moe.push_back(i == 0 ? 0 : 1);
    ignored.push_back(fmt::format("model.layers.{}.self_attn.o_proj", i));
  }
  flash.merge_patch({{"hidden_size", 4096},
                     {"num_hidden_layers", 48},
                     {"num_attention_heads", 64},
                     {"num_key_value_heads", 4},
                     {"swa_num_attention_heads", 64},
                     {"n_routed_experts", 256},
                     {"hybrid_layer_pattern", hybrid},
                     {"moe_layer_freq", moe},
                     {"quantization_config", {{"ignored_layers", ignored}}}});
  m = BuildJson(flash, {.compact_repeats = true});
  ASSERT_TRUE(m) << m.error().message;
  s = CountStored(*m);
  EXPECT_EQ(s.by_dtype[Dtype::kF32], 248'192u);
  EXPECT_EQ(s.by_dtype[Dtype::kF8E4M3], 3'859'808'256u);
  EXPECT_EQ(s.by_dtype[Dtype::kU8], 160'859'947'008u);
  EXPECT_EQ(s.by_dtype[Dtype::kBF16], 4'101'308'032u - 989'721'600u);
  testing::ExpectShape(*m, "model.layers.1.self_attn.qkv_proj.weight_scale_inv", {116, 32});
  testing::ExpectShape(*m, "model.layers.0.self_attn.qkv_proj.weight_scale_inv", {108, 32});
}

TEST(MiMoV2Builder, HostileConfigsNameTheField) {
  const auto j = TinyMiMoV2Release();
  testing::ExpectPatchRejected(j, {{"attention_projection_layout", "fused"}},
                               "attention_projection_layout");
  testing::ExpectPatchRejected(j, {{"attention_projection_layout", 3}},
                               "attention_projection_layout");
  testing::ExpectPatchRejected(j, {{"moe_router_dtype", "float99"}}, "moe_router_dtype");
  testing::ExpectPatchRejected(j, {{"num_key_value_heads", 3}}, "num_key_value_heads");
  testing::ExpectPatchRejected(j, {{"num_hidden_layers", uint64_t{1} << 40}}, "");
  testing::ExpectPatchRejected(j, {{"hybrid_layer_pattern", "0,1"}}, "hybrid_layer_pattern");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
