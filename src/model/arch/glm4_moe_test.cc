// glm4_moe (GLM-4.5 / 4.6 / 4.5-Air, an MLA row of mla_families.cc): DeepSeek-V3's MoE and MTP layers around
// grouped-query attention.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyGlm4Moe() {
  return testing::TinyDecoderWith("glm4_moe",
                                  {{"architectures", {"Glm4MoeForCausalLM"}},
                                   {"head_dim", 4},
                                   {"moe_intermediate_size", 6},
                                   {"n_routed_experts", 4},
                                   {"n_shared_experts", 1},
                                   {"num_experts_per_tok", 2},
                                   {"first_k_dense_replace", 1},
                                   {"attention_bias", true},
                                   {"num_nextn_predict_layers", 1}});
}

// Attention per layer: norms 2 x 8, q 8x8 + 8, k 8x4 + 4, v 8x4 + 4, o 8x8 (no bias): 224.
// Layer 0 dense: + 3x8x12 = 288 -> 512. Layer 1 MoE: router 4x8 = 32, experts 4 x 3x8x6 = 576,
// shared experts (1 x 6) 3x8x6 = 144 -> 976. Loaded: 512 + 976 + embed 80 + norm 8 + lm_head 80
// = 1656. MTP layer 2 (stored, not loaded): embed 80, enorm 8, hnorm 8, eh_proj 16x8 = 128, the
// MoE layer 976, shared_head norm 8 + head 80 = 1288. Stored: (1656 + 1288) x 4 + two float32
// e_score_correction_bias [4] (layers 1 and 2) = 11776 + 32 = 11808.
TEST(Glm4MoeBuilder, TinyConfigCountsByHand) {
  auto j = TinyGlm4Moe();
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 1656u);
  EXPECT_EQ(t.stored_bytes, 11808u);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0, {.moe = false});
  testing::ExpectLayer(
      m->hp, 1,
      {.attention = AttentionKind::kFull, .num_kv_heads = 1u, .head_dim_k = 4u, .moe = true});
  EXPECT_EQ(m->hp.num_mtp_layers, 1u);
  const Tensor* bias = FindTensor(*m, "model.layers.1.mlp.gate.e_score_correction_bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->dtype, Dtype::kF32);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.o_proj.bias"), nullptr);
  const Tensor* eh = FindTensor(*m, "model.layers.2.eh_proj.weight");
  ASSERT_NE(eh, nullptr);
  EXPECT_FALSE(eh->loaded);
  // partial_rotary_factor 0.5 by default: inv_freq [int(4 x 0.5) / 2].
  testing::ExpectShape(*m, "model.rotary_emb.inv_freq", {1});
  // use_qk_norm: per-head q_norm/k_norm [4] in each of the three layers: +8 loaded per layer.
  j["use_qk_norm"] = true;
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1656u + 16);
  EXPECT_NE(FindTensor(*m, "model.layers.2.self_attn.k_norm.weight"), nullptr);
}

TEST(Glm4MoeBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyGlm4Moe(), {{"hidden_size", nullptr}}, "hidden_size");
  testing::ExpectPatchRejected(TinyGlm4Moe(), {{"num_attention_heads", 0}}, "num_attention_heads");
  testing::ExpectPatchRejected(TinyGlm4Moe(), {{"num_key_value_heads", 3}}, "num_key_value_heads");
  testing::ExpectPatchRejected(TinyGlm4Moe(), {{"head_dim", 0}}, "head_dim");
  testing::ExpectPatchRejected(TinyGlm4Moe(), {{"vocab_size", uint64_t{1} << 50}}, "vocab_size");
  auto j = TinyGlm4Moe();
  j["n_routed_experts"] = uint64_t{1} << 40;
  EXPECT_FALSE(BuildJson(j));  // stops at the tensor cap
}

// zai-org/GLM-4.5-Air (config.json fields the builder reads). Loaded parameters (transformers'
// num_parameters, no MTP layer, no buffers): 106,852,245,504, the model card's "106B total
// parameters". The checkpoint also stores MTP layer 46 (3,616,573,440 parameters with its own
// embed_tokens and shared_head.head): 110,468,818,944 in all, the Hub page's "110B params".
// zai-org/GLM-4.5: 352,797,814,784 loaded (card: 355B total, which we cannot reproduce
// exactly: it is not a plain parameter count of either set) and 358,337,776,896 stored (Hub: 358B).
TEST(Glm4MoeBuilder, Glm45AirPublishedCounts) {
  const auto stored_parameters = [](const Model& m) {
    uint64_t n = 0;
    for (const auto& t : m.tensors) {
      if (t.kind == TensorKind::kParameter && t.stored && t.tied_to.empty()) n += t.numel;
    }
    return n;
  };
  struct Case {
    const char* model;
    const char* config;
    uint64_t loaded_parameters;
    uint64_t stored_parameters;
  };
  const Case kCases[] = {
      {"zai-org/GLM-4.5-Air",
       R"({"model_type":"glm4_moe","architectures":["Glm4MoeForCausalLM"],"vocab_size":151552,
         "hidden_size":4096,"intermediate_size":10944,"moe_intermediate_size":1408,
         "n_routed_experts":128,"n_shared_experts":1,"num_experts_per_tok":8,
         "first_k_dense_replace":1,"num_hidden_layers":46,"num_attention_heads":96,
         "num_key_value_heads":8,"head_dim":128,"attention_bias":true,"use_qk_norm":false,
         "partial_rotary_factor":0.5,"num_nextn_predict_layers":1,"tie_word_embeddings":false,
         "torch_dtype":"bfloat16"})",
       106852245504u, 110468818944u},
      {"zai-org/GLM-4.5",
       R"({"model_type":"glm4_moe","architectures":["Glm4MoeForCausalLM"],"vocab_size":151552,
         "hidden_size":5120,"intermediate_size":12288,"moe_intermediate_size":1536,
         "n_routed_experts":160,"n_shared_experts":1,"num_experts_per_tok":8,
         "first_k_dense_replace":3,"num_hidden_layers":92,"num_attention_heads":96,
         "num_key_value_heads":8,"head_dim":128,"attention_bias":true,"use_qk_norm":true,
         "partial_rotary_factor":0.5,"num_nextn_predict_layers":1,"tie_word_embeddings":false,
         "torch_dtype":"bfloat16"})",
       352797814784u, 358337776896u},
  };
  for (const Case& c : kCases) {
    auto m = BuildJson(nlohmann::json::parse(c.config));
    ASSERT_TRUE(m) << c.model << ": " << m.error().message;
    EXPECT_EQ(ComputeTotals(*m).parameters, c.loaded_parameters) << c.model;
    EXPECT_EQ(stored_parameters(*m), c.stored_parameters) << c.model;
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
