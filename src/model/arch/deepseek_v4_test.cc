#include <gtest/gtest.h>

#include "formats/hf_config_json.h"
#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildEvalConfig;
using testing::BuildJson;
using testing::ExpectError;
using testing::FindTensor;

// hidden 8, 2 heads of head_dim 8 (rope 4), q_lora 4, o_groups 2 x o_lora 3, indexer 2 heads of
// 4, 2 experts of width 4 (top 1), hc_mult 2, one hash layer, one MTP layer; layer 0 compresses
// by 4 (CSA with indexer), layer 1 by 2 (HCA), the MTP layer is window-only.
nlohmann::json TinyV4() {
  return {{"model_type", "deepseek_v4"},
          {"architectures", {"DeepseekV4ForCausalLM"}},
          {"vocab_size", 10},
          {"hidden_size", 8},
          {"num_hidden_layers", 2},
          {"num_attention_heads", 2},
          {"num_key_value_heads", 1},
          {"head_dim", 8},
          {"qk_rope_head_dim", 4},
          {"q_lora_rank", 4},
          {"o_groups", 2},
          {"o_lora_rank", 3},
          {"index_n_heads", 2},
          {"index_head_dim", 4},
          {"index_topk", 2},
          {"n_routed_experts", 2},
          {"num_experts_per_tok", 1},
          {"n_shared_experts", 1},
          {"moe_intermediate_size", 4},
          {"hc_mult", 2},
          {"num_hash_layers", 1},
          {"num_nextn_predict_layers", 1},
          {"sliding_window", 4},
          {"compress_ratios", {4, 2, 0}},
          {"torch_dtype", "bfloat16"}};
}

// Elements (bf16 unless marked f32). mix = (2 + hc) x hc = 8.
// Every layer: attn_norm, ffn_norm 16; hc_attn/ffn fn 2 x [8, 16] = 256, base 2 x 8 = 16,
// scale 2 x 3 = 6 (278 f32); attn wq_a 4x8 = 32, q_norm 4, wq_b 16x4 = 64, wkv 8x8 = 64,
// kv_norm 8, wo_a [6, 8] = 48, wo_b [8, 6] = 48 (268), attn_sink 2 (f32); gate.weight 2x8 = 16,
// experts 2 x 3 x 32 = 192, shared 3 x 32 = 96 (304).
// Layer 0 (ratio 4, c = 2): compressor wkv, wgate [16, 8] = 256, norm 8 (264), ape [4, 16] = 64
//   f32; indexer wq_b [8, 4] = 32, weights_proj [2, 8] = 16, its compressor wkv, wgate [8, 8] =
//   128, norm 4 (180), ape [4, 8] = 32 f32. bf16 16 + 268 + 304 + 264 + 180 = 1032, f32 278 + 2
//   + 64 + 32 = 376: 1408 parameters, 2064 + 1504 = 3568 bytes + tid2eid [10, 1] int64 80 = 3648.
// Layer 1 (ratio 2, c = 1): compressor wkv, wgate [8, 8] = 128, norm 8 (136), ape [2, 8] = 16
//   f32. bf16 724, f32 296: 1020 parameters, 1448 + 1184 + gate.bias [2] f32 8 = 2640 bytes.
// Model: embed 80, norm 8, head 80 (168 bf16), hc_head fn [2, 16] 32 + base 2 + scale 1 (35
//   f32): 203 parameters, 476 bytes. Loaded parameters 1408 + 1020 + 203 = 2631.
// MTP (window only, routed): bf16 16 + 268 + 304 + e_proj, h_proj 128 + enorm, hnorm, norm 24
//   = 740, f32 278 + 2 + hc_head 35 = 315; 1480 + 1260 + gate.bias 8 = 2748 bytes, not loaded.
// Stored: 3648 + 2640 + 476 + 2748 = 9512 bytes.
TEST(DeepseekV4Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyV4(), 2631u, 9512u);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0,
                       {.attention = AttentionKind::kSliding,
                        .head_dim_k = 8u,
                        .window_tokens = 4u,
                        .indexer_head_dim = 4u,
                        .compress_ratio = 4u,
                        .k_eq_v = true});
  testing::ExpectLayer(m->hp, 1, {.indexer_head_dim = 0u, .compress_ratio = 2u});
  const Tensor* tid = FindTensor(*m, "layers.0.ffn.gate.tid2eid");
  ASSERT_NE(tid, nullptr);
  EXPECT_EQ(tid->dtype, Dtype::kI64);
  EXPECT_EQ(FindTensor(*m, "layers.0.ffn.gate.bias"), nullptr);
  EXPECT_NE(FindTensor(*m, "layers.1.ffn.gate.bias"), nullptr);
  EXPECT_EQ(FindTensor(*m, "layers.1.attn.indexer.wq_b.weight"), nullptr);
  const Tensor* e = FindTensor(*m, "mtp.0.e_proj.weight");
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->loaded);
  EXPECT_EQ(FindTensor(*m, "mtp.0.attn.compressor.wkv.weight"), nullptr);
}

// Block FP8 with float8_e8m0fnu scales and FP4 experts (hidden 32, expert width 32):
// attn.wq_a [4, 32] -> float8 weight 128 bytes + scale [1, 1] (1 byte); experts.0.w1 [32, 32]
// -> int8 [32, 16] (two E2M1 values a byte) + scale [32, 1]; w2 [32, 32] likewise; the shared
// expert stays block FP8; gate.weight and the compressor projections stay bfloat16.
TEST(DeepseekV4Builder, NativeFp8AndFp4Experts) {
  auto j = TinyV4();
  j["hidden_size"] = 32;
  j["moe_intermediate_size"] = 32;
  j["expert_dtype"] = "fp4";
  j["quantization_config"] = {
      {"quant_method", "fp8"}, {"weight_block_size", {128, 128}}, {"scale_fmt", "ue8m0"}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  const Tensor* wq = FindTensor(*m, "layers.0.attn.wq_a.weight");
  ASSERT_NE(wq, nullptr);
  EXPECT_EQ(wq->dtype, Dtype::kF8E4M3);
  EXPECT_EQ(wq->bytes, 128u);
  const Tensor* wqs = FindTensor(*m, "layers.0.attn.wq_a.scale");
  ASSERT_NE(wqs, nullptr);
  EXPECT_EQ(wqs->dtype, Dtype::kF8E8M0);
  EXPECT_EQ(wqs->bytes, 1u);
  const Tensor* w1 = FindTensor(*m, "layers.1.ffn.experts.0.w1.weight");
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(w1->dtype, Dtype::kI8);
  EXPECT_EQ(w1->shape, (std::vector<uint64_t>{32, 16}));
  const Tensor* w1s = FindTensor(*m, "layers.1.ffn.experts.0.w1.scale");
  ASSERT_NE(w1s, nullptr);
  EXPECT_EQ(w1s->shape, (std::vector<uint64_t>{32, 1}));
  EXPECT_EQ(w1s->dtype, Dtype::kF8E8M0);
  EXPECT_EQ(FindTensor(*m, "layers.1.ffn.shared_experts.w2.weight")->dtype, Dtype::kF8E4M3);
  EXPECT_EQ(FindTensor(*m, "mtp.0.ffn.experts.1.w3.weight")->dtype, Dtype::kI8);
  EXPECT_EQ(FindTensor(*m, "layers.1.ffn.gate.weight")->dtype, Dtype::kBF16);
  EXPECT_EQ(FindTensor(*m, "layers.0.attn.compressor.wkv.weight")->dtype, Dtype::kBF16);
  EXPECT_EQ(FindTensor(*m, "layers.0.attn.indexer.wq_b.weight")->dtype, Dtype::kF8E4M3);
  EXPECT_EQ(FindTensor(*m, "layers.0.attn.indexer.weights_proj.weight")->dtype, Dtype::kBF16);
  // Without expert_dtype (SGLang's FP8 releases) the routed experts are block FP8 too.
  j.erase("expert_dtype");
  j["model_type"] = "deepseek_ref";
  auto fp8 = BuildJson(j);
  ASSERT_TRUE(fp8) << fp8.error().message;
  EXPECT_EQ(FindTensor(*fp8, "layers.1.ffn.experts.0.w1.weight")->dtype, Dtype::kF8E4M3);
  testing::ExpectShape(*fp8, "layers.1.ffn.experts.0.w1.scale", {1, 1});
}

TEST(DeepseekV4Builder, HostileConfigsNameTheField) {
  // Each case: the keys set on TinyV4 (a null value erases the key), and the field the error names.
  const nlohmann::json fp8_blocks = {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}};
  const struct {
    nlohmann::json changes;
    const char* field;
  } kCases[] = {
      {{{"hidden_size", nullptr}}, "hidden_size"},
      {{{"num_attention_heads", 0}}, "num_attention_heads"},
      {{{"o_groups", 3}}, "o_groups"},
      {{{"vocab_size", uint64_t{1} << 50}}, "vocab_size"},
      {{{"num_hidden_layers", "two"}}, "num_hidden_layers"},
      {{{"compress_ratios", {4}}}, "compress_ratios"},
      {{{"compress_ratios", nullptr}}, "compress_ratios"},
      {{{"compress_ratios", {4, -1, 0}}}, "compress_ratios"},
      {{{"qk_rope_head_dim", 16}}, "qk_rope_head_dim"},
      {{{"num_key_value_heads", 2}}, "num_key_value_heads"},
      // hidden 8 does not split into FP4 scale blocks of 32
      {{{"expert_dtype", "fp4"}, {"quantization_config", fp8_blocks}}, "hidden_size"},
      {{{"quantization_config", {{"quant_method", "gptq"}}}}, "quant_method"},
      {{{"quantization_config", {{"quant_method", "fp8"}}}}, "weight_block_size"},
  };
  for (const auto& c : kCases) {
    auto j = TinyV4();
    for (const auto& [key, value] : c.changes.items()) {
      if (value.is_null()) {
        j.erase(key);
      } else {
        j[key] = value;
      }
    }
    SCOPED_TRACE(c.changes.dump());
    ExpectError(j, c.field);
  }
}

// The logical parameters of a DeepSeek-V4 config, from the shapes in deepseek_v4.cc's header
// (FP4 values counted one each, scales and the routing buffers not counted): the reference
// formula the real configs are checked against.
uint64_t ReferenceLogical(const nlohmann::json& c, bool mtp) {
  const uint64_t V = c["vocab_size"], H = c["hidden_size"], L = c["num_hidden_layers"],
                 n = c["num_attention_heads"], D = c["head_dim"], q = c["q_lora_rank"],
                 g = c["o_groups"], ro = c["o_lora_rank"], ni = c["index_n_heads"],
                 di = c["index_head_dim"], E = c["n_routed_experts"],
                 I = c["moe_intermediate_size"], hc = c["hc_mult"];
  const uint64_t mix = (2 + hc) * hc;
  auto layer = [&](uint64_t r) {
    uint64_t x = 2 * H + 2 * (mix * hc * H + mix + 3) +
                 (H * q + q + q * n * D + H * D + D + (n * D / g) * g * ro + g * ro * H + n) +
                 E * H + (E + 1) * 3 * H * I;
    const uint64_t cc = r == 4 ? 2 : 1;
    if (r > 0) x += 2 * cc * D * H + r * cc * D + D;
    if (r == 4) x += q * ni * di + H * ni + 2 * 2 * di * H + 4 * 2 * di + di;
    return x;
  };
  const auto& ratios = c["compress_ratios"];
  uint64_t p = 2 * V * H + H + hc * hc * H + hc + 1;
  for (uint64_t i = 0; i < L; ++i) p += layer(ratios[i].get<uint64_t>());
  if (mtp) {
    const uint64_t id = L;
    p += layer(id < ratios.size() ? ratios[id].get<uint64_t>() : 0) + 2 * H * H + 3 * H +
         hc * hc * H + hc + 1;
  }
  return p;
}

// The same count over the built tensors: packed FP4 (int8) expert weights count two values a
// byte; scales, tid2eid and gate.bias are not parameters.
uint64_t BuiltLogical(const Model& m, bool mtp) {
  uint64_t p = 0;
  for (const auto& t : m.tensors) {
    if (t.kind != TensorKind::kParameter || !t.stored) continue;
    if (!mtp && !t.loaded) continue;
    if (t.name.ends_with(".scale") && t.dtype == Dtype::kF8E8M0) continue;
    p += t.dtype == Dtype::kI8 ? 2 * t.numel : t.numel;
  }
  return p;
}

// deepseek-ai/DeepSeek-V4-Flash@60d8d70770c6776ff598c94bb586a859a38244f1: a published census of
// its safetensors tensors (name, shape, dtype of each) counts 69,187 tensors,
// 159,609,485,896 bytes and 158,069,433,298 stored elements; 290,942,289,362 logical values
// with the MTP layer and gate.bias. The model card states 284B parameters (13B activated).
TEST(DeepseekV4Builder, FlashMatchesItsCheckpointManifest) {
  const std::string sub = "recent/deepseek-ai__DeepSeek-V4-Flash";
  auto m = BuildEvalConfig(sub);
  auto j = testing::EvalConfigJson(sub);
  if (!m || !j) GTEST_SKIP() << sub << " is absent: the real-config check needs ../shared/eval";
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.stored_bytes, 159609485896u);
  uint64_t tensors = 0, elements = 0, gate_bias = 0;
  for (const auto& x : m->tensors) {
    if (!x.stored) continue;
    ++tensors;
    elements += x.numel;
    if (x.name.ends_with(".gate.bias")) gate_bias += x.numel;
  }
  EXPECT_EQ(tensors, 69187u);
  EXPECT_EQ(elements, 158069433298u);
  EXPECT_EQ(BuiltLogical(*m, true) + gate_bias, 290942289362u);
  EXPECT_EQ(BuiltLogical(*m, true), ReferenceLogical(*j, true));
  const uint64_t logical = BuiltLogical(*m, false);
  EXPECT_EQ(logical, ReferenceLogical(*j, false));
  EXPECT_EQ(logical, 284332230231u);  // card: 284B
  EXPECT_EQ(t.parameters, logical);     // the reported count is the logical one (issue 15)
  // One tensor of each stored kind, derived by hand.
  const Tensor* w1 = FindTensor(*m, "layers.5.ffn.experts.7.w1.weight");  // FP4 [2048, 4096]
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(w1->bytes, 2048u * 2048u);
  EXPECT_EQ(FindTensor(*m, "layers.5.ffn.experts.7.w1.scale")->bytes, 2048u * 128u);
  const Tensor* wo_a = FindTensor(*m, "layers.5.attn.wo_a.weight");  // FP8 [8192, 4096]
  ASSERT_NE(wo_a, nullptr);
  EXPECT_EQ(wo_a->bytes, 8192u * 4096u);
  testing::ExpectShape(*m, "layers.5.attn.wo_a.scale", {64, 32});
  EXPECT_EQ(FindTensor(*m, "layers.2.attn.compressor.ape")->bytes, 4u * 1024u * 4u);
  EXPECT_EQ(FindTensor(*m, "layers.3.attn.compressor.ape")->bytes, 128u * 512u * 4u);
  EXPECT_EQ(FindTensor(*m, "layers.0.hc_attn_fn")->bytes, 24u * 16384u * 4u);
}

// The re-releases keep the shapes: SGLang's FP8 (routed experts block FP8, no expert_dtype) and
// NVIDIA's NVFP4 (routed experts of layers.* NVFP4; mtp.* and the rest as released).
TEST(DeepseekV4Builder, QuantizedReleases) {
  const std::string sgl = "recent/sgl-project__DeepSeek-V4-Flash-FP8";
  auto fp8 = BuildEvalConfig(sgl);
  if (!fp8) GTEST_SKIP() << sgl << " is absent: the real-config check needs ../shared/eval";
  // experts.0.w1 [2048, 4096]: float8 8,388,608 bytes + e8m0 scale [16, 32].
  const Tensor* w = FindTensor(*fp8, "layers.3.ffn.experts.0.w1.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, Dtype::kF8E4M3);
  EXPECT_EQ(w->bytes, 8388608u);
  EXPECT_EQ(FindTensor(*fp8, "layers.3.ffn.experts.0.w1.scale")->bytes, 16u * 32u);
  auto j = testing::EvalConfigJson(sgl);
  ASSERT_TRUE(j);
  EXPECT_EQ(BuiltLogical(*fp8, false), ReferenceLogical(*j, false));

  // DeepSeek-V4-Pro (SGLang's FP8 config): 1,572,997,179,491 logical parameters by the formula
  // (card: 1.6T total, 49B activated).
  const std::string pro = "recent/sgl-project__DeepSeek-V4-Pro-FP8";
  if (auto p = BuildEvalConfig(pro)) {
    auto pj = testing::EvalConfigJson(pro);
    ASSERT_TRUE(pj);
    EXPECT_EQ(BuiltLogical(*p, false), ReferenceLogical(*pj, false));
    EXPECT_EQ(BuiltLogical(*p, false), 1572997179491u);
    EXPECT_EQ(ComputeTotals(*p).parameters, 1572997179491u);
  }

  const std::string nv = "recent/nvidia__DeepSeek-V4-Flash-NVFP4";
  auto nvfp4 = BuildEvalConfig(nv);
  if (!nvfp4) GTEST_SKIP() << nv << " is absent";
  // experts.0.w2 [4096, 2048]: uint8 [4096, 1024] + E4M3 weight_scale [4096, 128] + two float32
  // scalars.
  const Tensor* w2 = FindTensor(*nvfp4, "layers.3.ffn.experts.0.w2.weight");
  ASSERT_NE(w2, nullptr);
  EXPECT_EQ(w2->dtype, Dtype::kU8);
  EXPECT_EQ(w2->shape, (std::vector<uint64_t>{4096, 1024}));
  testing::ExpectShape(*nvfp4, "layers.3.ffn.experts.0.w2.weight_scale", {4096, 128});
  EXPECT_NE(FindTensor(*nvfp4, "layers.3.ffn.experts.0.w2.weight_scale_2"), nullptr);
  EXPECT_EQ(FindTensor(*nvfp4, "mtp.0.ffn.experts.0.w2.weight")->dtype, Dtype::kI8);
  EXPECT_EQ(FindTensor(*nvfp4, "layers.3.attn.wq_b.weight")->dtype, Dtype::kF8E4M3);
  EXPECT_FALSE(nvfp4->assumptions.empty());
  // Logical parameters: those of the native release (284,332,230,231), bytes as stored.
  EXPECT_EQ(ComputeTotals(*nvfp4).parameters, 284332230231u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
