// ChatGLM2/3 and GLM-4 (chatglm): counted by hand on a tiny config, and byte-exact against a
// real GLM-4-9B index (every tensor name and the total_size).

#include <set>

#include <gtest/gtest.h>

#include "memfit/hf_config.h"
#include "memfit/safetensors.h"
#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyGlm() {
  return {{"model_type", "chatglm"}, {"architectures", {"ChatGLMForConditionalGeneration"}},
          {"padded_vocab_size", 12}, {"vocab_size", 12}, {"hidden_size", 8}, {"num_layers", 2},
          {"num_attention_heads", 2}, {"kv_channels", 4}, {"multi_query_attention", true},
          {"multi_query_group_num", 1}, {"ffn_hidden_size", 6}, {"add_qkv_bias", true},
          {"add_bias_linear", false}, {"rmsnorm", true}, {"post_layer_norm", true},
          {"torch_dtype", "float32"}};
}

// Per layer: input and post-attention RMSNorms 2 x 8; query_key_value [2 x 4 + 2 x 1 x 4 = 16, 8]
// 128 + bias 16; dense [8, 8] 64; dense_h_to_4h [12, 8] 96; dense_4h_to_h [8, 6] 48 -> 368, two
// layers 736; embedding 12 x 8 = 96, final norm 8, output_layer 96 -> 936 parameters. The
// persistent inv_freq [kv_channels / 4 = 1] float32 is stored too: 936 x 4 + 4 = 3748 bytes.
TEST(ChatGlmBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyGlm(), 936u, 3748u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "transformer.encoder.layers.1.self_attention.query_key_value.weight",
                       {16, 8});
  EXPECT_EQ(m->hp.layers[0].num_kv_heads, 1u);
  // LayerNorm variant: weight and bias per norm; hostile group counts are named.
  auto j = TinyGlm();
  j["rmsnorm"] = false;
  auto ln = BuildJson(j);
  ASSERT_TRUE(ln) << ln.error().message;
  EXPECT_NE(FindTensor(*ln, "transformer.encoder.final_layernorm.bias"), nullptr);
  j = TinyGlm();
  j["multi_query_group_num"] = 3;
  auto bad = BuildJson(j);
  testing::ExpectErrorContains(bad, "multi_query_group_num");
  // The v1 layout (ChatGLM-6B) goes to the generic builder, which says so.
  nlohmann::json v1 = {{"model_type", "chatglm"}, {"architectures", {"ChatGLMModel"}},
                       {"hidden_size", 8}, {"inner_hidden_size", 16}, {"num_layers", 2},
                       {"num_attention_heads", 2}, {"vocab_size", 12}, {"torch_dtype", "float16"}};
  auto old = BuildJson(v1);
  ASSERT_TRUE(old) << old.error().message;
  bool approximate = false;
  for (const auto& a : old->assumptions) approximate = approximate || a.find("approximate") != std::string::npos;
  EXPECT_TRUE(approximate);
}

// GLM-4-9B (a fine-tune's re-save, DERIVED in shared/eval's SOURCES.md): 40 layers, h 4096, 32
// heads of 128 with 2 query groups, ffn 13696, padded vocabulary 151552, bf16: embedding and
// output_layer 2 x 151552 x 4096 x 2 = 2483027968; per layer norms 16384, query_key_value
// [4608, 4096] 37748736 + bias 9216, dense 33554432, dense_h_to_4h [27392, 4096] 224395264,
// dense_4h_to_h 112197632 -> 407921664 x 40; final norm 8192; inv_freq [32] bf16 64:
// 18,799,902,784 = the index's total_size, and the same 284 tensor names.
TEST(ChatGlmBuilder, Glm4IndexByteExact) {
  auto m = testing::BuildEvalConfig("models/DERIVED__glm-4-9b-chat-sft");
  auto index_text =
      testing::ReadEvalFile("models/DERIVED__glm-4-9b-chat-sft", "model.safetensors.index.json");
  if (!m || !index_text) GTEST_SKIP() << "../shared/eval/models/DERIVED__glm-4-9b-chat-sft absent";
  auto index = ParseWeightIndex(*index_text, "index");
  ASSERT_TRUE(index) << index.error().message;
  ASSERT_TRUE(index->total_size);
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, *index->total_size);
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 18799902784u);
  std::set<std::string> built, indexed;
  for (const auto& t : m->tensors) {
    if (t.stored) built.insert(t.name);
  }
  for (const auto& entry : index->weight_map) indexed.insert(std::string(entry.first));
  EXPECT_EQ(built, indexed);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
