// Logical parameter counts of quantized layouts (issue 15): a packed weight counts the out x in
// parameters of its layer, scales / zero points / g_idx none, while bytes stay as stored. Each
// case is one tensor counted by hand, then the whole tiny model against its unquantized build.
#include <gtest/gtest.h>

#include "formats/hf_config_json.h"
#include "memfit/hf_quant_config.h"
#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

// One layer, hidden 8, 2 heads of 4, 2 KV heads, intermediate 16, float16: q_proj is in 8 x out 8
// (64 parameters), down_proj in 16 x out 8 (128).
nlohmann::json TinyLlama(nlohmann::json quantization) {
  auto j = TinyDecoder("llama");
  j["num_hidden_layers"] = 1;
  j["num_key_value_heads"] = 2;
  j["intermediate_size"] = 16;
  j["torch_dtype"] = "float16";
  j["quantization_config"] = std::move(quantization);
  return j;
}

struct Expected {
  std::string name;
  uint64_t logical_params;
  uint64_t bytes;
};

void ExpectLogical(const nlohmann::json& quantization, const std::vector<Expected>& tensors) {
  SCOPED_TRACE(quantization.dump());
  auto m = BuildJson(TinyLlama(quantization));
  ASSERT_TRUE(m) << m.error().message;
  for (const auto& e : tensors) {
    const Tensor* t = FindTensor(*m, e.name);
    ASSERT_NE(t, nullptr) << e.name;
    EXPECT_EQ(LogicalParams(*t), e.logical_params) << e.name;
    EXPECT_EQ(t->bytes, e.bytes) << e.name;
  }
  // The whole model counts what the unquantized model counts: q 64, k 64, v 64, o 64, gate,
  // up, down 3 x 128, norms 16, embed 80, final norm 8, lm_head 80 = 824.
  auto plain = BuildJson(TinyLlama(quantization), {.ignore_quantization = true});
  ASSERT_TRUE(plain);
  EXPECT_EQ(ComputeTotals(*plain).parameters, 824u);
  EXPECT_EQ(ComputeTotals(*m).parameters, 824u);
}

const std::string kQ = "model.layers.0.self_attn.q_proj.";
const std::string kDown = "model.layers.0.mlp.down_proj.";

// NVFP4: weight uint8 [8, 8/2] = 32 B stands for 64 parameters; weight_scale float8_e4m3
// [8, 8/16 -> 1] = 8 B, weight_scale_2 and input_scale float32 scalars = 4 B each: none.
TEST(LogicalParams, Nvfp4) {
  ExpectLogical({{"quant_method", "modelopt"}, {"quant_algo", "NVFP4"}, {"ignore", {"lm_head"}}},
                {{kQ + "weight", 64, 32},
                 {kQ + "weight_scale", 0, 8},
                 {kQ + "weight_scale_2", 0, 4},
                 {kQ + "input_scale", 0, 4}});
}

// FP8 per tensor: weight float8 [8, 8] is one element a parameter; the scales are none.
TEST(LogicalParams, Fp8PerTensor) {
  ExpectLogical({{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"ignore", {"lm_head"}}},
                {{kQ + "weight", 64, 64}, {kQ + "weight_scale", 0, 4}, {kQ + "input_scale", 0, 4}});
}

// FP8 with 4x4 blocks: weight_scale_inv float32 [2, 2] = 16 B, no parameters.
TEST(LogicalParams, Fp8Block) {
  ExpectLogical({{"quant_method", "fp8"}, {"weight_block_size", {4, 4}}},
                {{kQ + "weight", 64, 64}, {kQ + "weight_scale_inv", 0, 16}});
}

// bitsandbytes nf4: weight uint8 [64/2, 1] = 32 B stands for 64; absmax etc. are buffers.
TEST(LogicalParams, BitsAndBytes4Bit) {
  ExpectLogical({{"quant_method", "bitsandbytes"}, {"load_in_4bit", true},
                 {"bnb_4bit_quant_type", "nf4"}},
                {{kQ + "weight", 64, 32}, {kQ + "weight.absmax", 1, 4}});
}

// GPTQ 4-bit, group 4: qweight int32 [8/8, 8] = 32 B stands for 64; qzeros int32 [2, 1] = 8 B,
// scales float16 [2, 8] = 32 B, g_idx int32 [8] = 32 B: none. AWQ: qweight [8, 8/8] = 32 B.
TEST(LogicalParams, GptqAndAwq) {
  ExpectLogical({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 4}},
                {{kQ + "qweight", 64, 32},
                 {kQ + "qzeros", 0, 8},
                 {kQ + "scales", 0, 32},
                 {kQ + "g_idx", 0, 32},
                 {kDown + "qweight", 128, 64}});
  ExpectLogical({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 4}},
                {{kQ + "qweight", 64, 32}, {kQ + "qzeros", 0, 8}, {kQ + "scales", 0, 32}});
}

// compressed-tensors pack-quantized int4, group 4: down_proj weight_packed int32 [8, 16/8] =
// 64 B stands for 128; weight_scale float16 [8, 4] = 64 B and weight_shape int64 [2] = 16 B: none.
TEST(LogicalParams, PackQuantizedInt4) {
  ExpectLogical({{"quant_method", "compressed-tensors"},
                 {"format", "pack-quantized"},
                 {"config_groups",
                  {{"group_0",
                    {{"targets", {"Linear"}},
                     {"weights", {{"num_bits", 4}, {"type", "int"}, {"strategy", "group"},
                                  {"group_size", 4}, {"symmetric", true}}}}}}},
                 {"ignore", {"lm_head"}}},
                {{kDown + "weight_packed", 128, 64},
                 {kDown + "weight_scale", 0, 64},
                 {kDown + "weight_shape", 0, 16}});
}

// MXFP4 (gpt-oss), hidden 32, intermediate 32, 1 expert: gate_up_proj_blocks uint8
// [1, 64, 1, 16] = 1024 B stands for 1 x 64 x 32 = 2048; the uint8 scales [1, 64, 1] none.
TEST(LogicalParams, Mxfp4) {
  auto j = TinyDecoder("gpt_oss");
  j["head_dim"] = 4;
  j["hidden_size"] = 32;
  j["intermediate_size"] = 32;
  j["num_local_experts"] = 1;
  j["num_experts_per_tok"] = 1;
  j["sliding_window"] = 4;
  auto plain = BuildJson(j);
  j["quantization_config"] = {{"quant_method", "mxfp4"},
                              {"modules_to_not_convert", {"model.layers.*.self_attn", "lm_head"}}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(plain) << plain.error().message;
  const Tensor* blocks = FindTensor(*m, "model.layers.0.mlp.experts.gate_up_proj_blocks");
  ASSERT_NE(blocks, nullptr);
  EXPECT_EQ(blocks->bytes, 1024u);
  EXPECT_EQ(LogicalParams(*blocks), 2048u);
  const Tensor* scales = FindTensor(*m, "model.layers.0.mlp.experts.gate_up_proj_scales");
  EXPECT_EQ(scales->bytes, 64u);
  EXPECT_EQ(LogicalParams(*scales), 0u);
  EXPECT_EQ(ComputeTotals(*m).parameters, ComputeTotals(*plain).parameters);
  EXPECT_LT(ComputeTotals(*m).stored_bytes, ComputeTotals(*plain).stored_bytes);
}

// A release folder of ../shared/eval built with its hf_quant_config.json merged in, when it has
// one; nullopt when the folder is absent.
std::optional<Model> BuildEvalRelease(const std::string& sub) {
  auto config = testing::ParseEvalConfig(sub);
  if (!config) return std::nullopt;
  if (auto quant = testing::ReadEvalFile(sub, "hf_quant_config.json")) {
    auto merged = MergeHfQuantConfig(*config, *quant, sub + "/hf_quant_config.json");
    EXPECT_TRUE(merged) << merged.error().message;
    if (!merged) return std::nullopt;
    config = std::move(*merged);
  }
  return testing::BuildOrFail(*config);
}

// NVIDIA's NVFP4 releases count the parameters of their bf16 siblings; the stored bytes shrink.
TEST(LogicalParams, Nvfp4ReleasesMatchTheirBf16Siblings) {
  const std::pair<const char*, const char*> pairs[] = {
      {"recent/nvidia__Qwen3-235B-A22B-NVFP4", "recent/Qwen__Qwen3-235B-A22B"},
      {"recent/nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4",
       "recent/nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"},
  };
  for (const auto& [fp4_dir, bf16_dir] : pairs) {
    SCOPED_TRACE(fp4_dir);
    auto fp4 = BuildEvalRelease(fp4_dir);
    auto bf16 = BuildEvalRelease(bf16_dir);
    if (!fp4 || !bf16) GTEST_SKIP() << fp4_dir << " or " << bf16_dir << " absent";
    ASSERT_NE(fp4->quantization_config, nullptr);
    const auto a = ComputeTotals(*fp4), b = ComputeTotals(*bf16);
    EXPECT_EQ(a.parameters, b.parameters);
    EXPECT_LT(a.stored_bytes, b.stored_bytes * 2 / 5);
  }
}

// gpt-oss-20b (MXFP4 experts): the same count as its config built unquantized, 20.9B as the
// model card states ("21B parameters").
TEST(LogicalParams, GptOss20bCountsTheUnquantizedModel) {
  auto mx = BuildEvalRelease("recent/openai__gpt-oss-20b");
  if (!mx) GTEST_SKIP() << "openai__gpt-oss-20b absent";
  auto plain =
      testing::BuildEvalConfig("recent/openai__gpt-oss-20b", {.ignore_quantization = true});
  ASSERT_TRUE(plain);
  const uint64_t params = ComputeTotals(*mx).parameters;
  EXPECT_EQ(params, ComputeTotals(*plain).parameters);
  EXPECT_GE(params, 20'850'000'000u);
  EXPECT_LT(params, 20'950'000'000u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
