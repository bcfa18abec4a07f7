// BuildDecoder over a spec that no registered family uses (the example of docs/ARCHITECTURE.md):
// what a new row gets from the skeleton, counted by hand. The registered rows are checked
// against the builders they replaced by model_digest_test.cc and by their families' tests.

#include "model/arch/decoder_spec.h"

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// A Llama variant with biased q/k/v/o, per-head q/k norms and a tied head.
constexpr DecoderSpec kFoo{.tie_default = true, .bias_default = true,
                           .qk_norm = QkNorm::kPerHead, .rope = Rope::kModelLevel};

Result<Model> BuildFoo(const nlohmann::json& j, const BuildOptions& o = {}) {
  auto config = HfConfig::FromJson(j, "config.json");
  if (!config) return config.error();
  return BuildDecoder(*config, o, kFoo);
}

TEST(DecoderSkeletonTest, ANewRowCountedByHand) {
  auto m = BuildFoo(testing::TinyDecoder("foo"));
  ASSERT_TRUE(m) << m.error().message;
  // Per layer (H 8, 2 heads of 4, 1 KV head, I 12): input norm 8; q 8x8 + 8 = 72; k and v
  // 8x4 + 4 = 36 each; o 8x8 + 8 = 72; q_norm, k_norm 4 each; gate, up, down 96 each;
  // post-attention norm 8: 528. Two layers 1,056 + embed 10x8 = 80 + final norm 8 = 1,144;
  // lm_head tied, counted once.
  EXPECT_EQ(ComputeTotals(*m).parameters, 1144u);
  // 1 embed + 2 x 15 + norm + inv_freq + lm_head.
  EXPECT_EQ(m->tensors.size(), 34u);
  const Tensor* q_norm = arch_test::FindTensor(*m, "model.layers.1.self_attn.q_norm.weight");
  ASSERT_NE(q_norm, nullptr);
  EXPECT_EQ(q_norm->shape, (std::vector<uint64_t>{4}));
  const Tensor* inv_freq = arch_test::FindTensor(*m, "model.rotary_emb.inv_freq");
  ASSERT_NE(inv_freq, nullptr);
  EXPECT_EQ(inv_freq->shape, (std::vector<uint64_t>{2}));  // head_dim / 2
  const Tensor* head = arch_test::FindTensor(*m, "lm_head.weight");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->tied_to, "model.embed_tokens.weight");
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->hp.layers[0].intermediate_size, 12u);
  // kModelLevel: the same single buffer under transformers 4.42.
  BuildOptions tf442;
  tf442.buffers = BufferConvention::kTransformers442;
  auto old = BuildFoo(testing::TinyDecoder("foo"), tf442);
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_EQ(old->tensors.size(), 34u);
}

TEST(DecoderSkeletonTest, TheSpecsSwitchesAreReadFromTheirKeys) {
  nlohmann::json j = testing::TinyDecoder("foo");
  j["attention_bias"] = false;
  j["tie_word_embeddings"] = false;
  auto m = BuildFoo(j);
  ASSERT_TRUE(m) << m.error().message;
  // Without the 4 biases (8 + 4 + 4 + 8 = 24 per layer) and with an untied head 10x8 = 80:
  // 1,144 - 48 + 80.
  EXPECT_EQ(ComputeTotals(*m).parameters, 1176u);
  EXPECT_EQ(arch_test::FindTensor(*m, "model.layers.0.self_attn.q_proj.bias"), nullptr);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
