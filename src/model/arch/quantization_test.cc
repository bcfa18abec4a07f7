#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"
#include "formats/hf_config_json.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

nlohmann::json TinyLlama(nlohmann::json quantization) {
  auto j = TinyDecoder("llama");
  j["num_hidden_layers"] = 1;
  j["torch_dtype"] = "float16";
  j["quantization_config"] = std::move(quantization);
  return j;
}

// bitsandbytes int8, one layer in float16: linear weights int8 q 64 + k 32 + v 32 + o 64 +
// gate/up/down 3x96 = 480 bytes; SCB float32 per output row (8+4+4+8+12+12+8 = 56) = 224 bytes;
// 7 uint8 weight_format scalars; norms 2x8x2 = 32; embed 160; final norm 16; lm_head 160.
// Total 480 + 224 + 7 + 32 + 160 + 16 + 160 = 1079 bytes. Parameters are unchanged: 496+80+8+80.
TEST(Quantization, BitsAndBytesInt8AsStored) {
  auto m = BuildJson(TinyLlama({{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}}));
  ASSERT_TRUE(m) << m.error().message;
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.stored_bytes, 1079u);
  EXPECT_EQ(t.parameters, 664u);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.q_proj.weight")->dtype, Dtype::kI8);
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->dtype, Dtype::kF16);
  // accelerate's view ignores quantization_config.
  auto plain = BuildJson(TinyLlama({{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}}),
                         {.ignore_quantization = true});
  ASSERT_TRUE(plain);
  EXPECT_EQ(ComputeTotals(*plain).stored_bytes, 664u * 2);
}

// bitsandbytes nf4 without double quantization: q_proj 8x8 = 64 values -> weight uint8 [32, 1],
// absmax float32 [1] (blocks of 64), quant_map [16], and the packed JSON quant_state
// {"quant_type": "nf4", "blocksize": 64, "dtype": "float16", "shape": [8, 8]} = 75 bytes.
TEST(Quantization, BitsAndBytes4BitAsStored) {
  auto m = BuildJson(TinyLlama({{"quant_method", "bitsandbytes"}, {"load_in_4bit", true},
                                {"bnb_4bit_quant_type", "nf4"}}));
  ASSERT_TRUE(m) << m.error().message;
  testing::ExpectShape(*m, "model.layers.0.self_attn.q_proj.weight", {32, 1});
  testing::ExpectShape(*m, "model.layers.0.self_attn.q_proj.weight.absmax", {1});
  const Tensor* state =
      FindTensor(*m, "model.layers.0.self_attn.q_proj.weight.quant_state.bitsandbytes__nf4");
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->shape, (std::vector<uint64_t>{75}));
}

// GPTQ 4-bit, group 4 (2 KV heads, intermediate 16, so that every width packs): q_proj in 8 out 8 -> qweight int32 [8/8, 8], qzeros [2, 1], scales
// float16 [2, 8], g_idx [8]. AWQ: qweight [8, 1], no g_idx.
TEST(Quantization, GptqAndAwqPackedTensors) {
  auto gptq = TinyLlama({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 4}});
  gptq["num_key_value_heads"] = 2;  // k/v outputs of 8 pack into int32
  gptq["intermediate_size"] = 16;
  auto m = BuildJson(gptq);
  ASSERT_TRUE(m) << m.error().message;
  const std::string q = "model.layers.0.self_attn.q_proj.";
  EXPECT_EQ(FindTensor(*m, q + "qweight")->shape, (std::vector<uint64_t>{1, 8}));
  EXPECT_EQ(FindTensor(*m, q + "qzeros")->shape, (std::vector<uint64_t>{2, 1}));
  EXPECT_EQ(FindTensor(*m, q + "scales")->shape, (std::vector<uint64_t>{2, 8}));
  EXPECT_EQ(FindTensor(*m, q + "g_idx")->shape, (std::vector<uint64_t>{8}));
  gptq["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 4}};
  m = BuildJson(gptq);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(FindTensor(*m, q + "qweight")->shape, (std::vector<uint64_t>{8, 1}));
  EXPECT_EQ(FindTensor(*m, q + "g_idx"), nullptr);
}

TEST(Quantization, HostileQuantizationConfigs) {
  testing::ExpectError(TinyLlama({{"quant_method", "bitsandbytes"}}), "load_in_8bit");
  testing::ExpectError(TinyLlama({{"quant_method", "gptq"}, {"bits", 5}}), "bits");
  testing::ExpectError(TinyLlama({{"quant_method", "gptq"}}), "bits");
  testing::ExpectError(TinyLlama({{"quant_method", "hqq"}}), "hqq");
  testing::ExpectError(TinyLlama("nope"), "quantization_config");
  // 4-bit GPTQ packs 8 values per int32: an input width of 12 does not pack.
  testing::ExpectPatchRejected(
      TinyLlama({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 4}}),
      {{"intermediate_size", 12}}, "does not pack");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

nlohmann::json PackedInt(nlohmann::json weights, nlohmann::json ignore,
                         std::string format = "pack-quantized") {
  return {{"quant_method", "compressed-tensors"},
          {"format", format},
          {"config_groups", {{"group_0", {{"targets", {"Linear"}}, {"weights", weights}}}}},
          {"ignore", ignore}};
}

// compressed-tensors pack-quantized W4A16 (Kimi-K2.5's native INT4), group 4, symmetric, the
// attention ignored by a "re:" pattern. gate/up [12, 8]: weight_packed int32 [12, 8/8 = 1] 48 B,
// weight_scale float16 [12, 8/4 = 2] 48 B, weight_shape int64 [2] 16 B -> 112 each; down [8, 12]:
// packed [8, 2] 64, scale [8, 3] 48, shape 16 -> 128. Attention in float16 (q 64 + k 32 + v 32 +
// o 64) x 2 = 384; norms 32, embed 160, final norm 16, lm_head 160. Total 1104 bytes.
// Asymmetric: + int32 weight_zero_point [ceil(12/8) = 2, 2] 16 B (gate, up) and [1, 3] 12 B
// (down) = 1148.
TEST(Quantization, CompressedTensorsPackQuantizedInt4) {
  nlohmann::json w = {{"num_bits", 4}, {"type", "int"}, {"strategy", "group"},
                      {"group_size", 4}, {"symmetric", true}};
  auto m = BuildJson(TinyLlama(PackedInt(w, {"lm_head", "re:.*self_attn.*"})));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 1104u);
  const Tensor* packed = FindTensor(*m, "model.layers.0.mlp.down_proj.weight_packed");
  ASSERT_NE(packed, nullptr);
  EXPECT_EQ(packed->dtype, Dtype::kI32);
  EXPECT_EQ(packed->shape, (std::vector<uint64_t>{8, 2}));
  testing::ExpectShape(*m, "model.layers.0.mlp.down_proj.weight_scale", {8, 3});
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.q_proj.weight")->dtype, Dtype::kF16);
  w["symmetric"] = false;
  auto asym = BuildJson(TinyLlama(PackedInt(w, {"lm_head", "re:.*self_attn.*"})));
  ASSERT_TRUE(asym) << asym.error().message;
  EXPECT_EQ(ComputeTotals(*asym).stored_bytes, 1148u);
  testing::ExpectShape(*asym, "model.layers.0.mlp.gate_proj.weight_zero_point", {2, 2});
  // Per channel: one scale per output row. 8-bit: 4 values a word.
  w = {{"num_bits", 8}, {"type", "int"}, {"strategy", "channel"}, {"symmetric", true}};
  auto channel = BuildJson(TinyLlama(PackedInt(w, {"re:.*self_attn.*"})));
  ASSERT_TRUE(channel) << channel.error().message;
  testing::ExpectShape(*channel, "model.layers.0.mlp.up_proj.weight_packed", {12, 2});
  testing::ExpectShape(*channel, "model.layers.0.mlp.up_proj.weight_scale", {12, 1});
  // Other formats store integers differently: refused with the field named.
  auto other = BuildJson(TinyLlama(PackedInt(w, {}, "int-quantized")));
  testing::ExpectErrorContains(other, "int-quantized");
  w = {{"num_bits", 4}, {"type", "int"}, {"strategy", "group"}, {"group_size", 0}};
  auto no_group = BuildJson(TinyLlama(PackedInt(w, {})));
  testing::ExpectErrorContains(no_group, "group_size");
}

// "re:" ignore patterns: simple ones become '*' patterns (alternation expanded), others go to
// std::regex; Python's re.match anchors at the start only.
TEST(Quantization, RegexIgnorePatterns) {
  nlohmann::json w = {{"num_bits", 4}, {"type", "int"}, {"strategy", "group"},
                      {"group_size", 4}, {"symmetric", true}};
  auto alt = BuildJson(TinyLlama(PackedInt(w, {"re:.*self_attn.*", "re:.*mlp\\.(gate|up)_proj.*"})));
  ASSERT_TRUE(alt) << alt.error().message;
  EXPECT_NE(FindTensor(*alt, "model.layers.0.mlp.gate_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*alt, "model.layers.0.mlp.up_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*alt, "model.layers.0.mlp.down_proj.weight_packed"), nullptr);
  auto classes = BuildJson(TinyLlama(PackedInt(w, {"re:model\\.layers\\.[0-9]+\\.mlp\\.down_proj",
                                                   "re:.*self_attn.*"})));
  ASSERT_TRUE(classes) << classes.error().message;
  EXPECT_NE(FindTensor(*classes, "model.layers.0.mlp.down_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*classes, "model.layers.0.mlp.gate_proj.weight_packed"), nullptr);
  // Anchored at the start: "layers" alone does not match "model.layers...".
  auto anchored = BuildJson(TinyLlama(PackedInt(w, {"re:layers\\.0\\.mlp", "re:.*self_attn.*"})));
  ASSERT_TRUE(anchored) << anchored.error().message;
  EXPECT_NE(FindTensor(*anchored, "model.layers.0.mlp.gate_proj.weight_packed"), nullptr);
  // A pattern std::regex cannot read matches nothing.
  auto broken = BuildJson(TinyLlama(PackedInt(w, {"re:(unclosed", "re:.*self_attn.*"})));
  ASSERT_TRUE(broken) << broken.error().message;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
