// Quantized multimodal releases as stored (issue 15): the composite builders hand the
// quantization_config to their language model with the checkpoint's module names
// (multimodal_kit.h CarryQuantization, Quantization::module_aliases), quantize the towers' linears
// only where the exclusion list does not name them, and keep parameter counts logical.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::HasLine;

// The quantization_config of Qwen's fine-grained FP8 releases (Qwen/Qwen3-30B-A3B-FP8's, in
// ../shared/eval/recent: "fp8", e4m3, dynamic activations, 128 x 128 blocks, every norm and router
// of the language model and lm_head in "modules_to_not_convert"), with the Qwen3-VL names: the
// language model under model.language_model., and the vision tower's linears listed one by one.
// The text of the Qwen3-VL FP8 releases' own list was not found in a public mirror: this is its
// assumed form (verl's SGLang FP8 ignore list for Qwen3-VL names the same vision modules).
nlohmann::json QwenVlFp8Config(uint64_t layers, uint64_t vision_depth, uint64_t deepstack) {
  nlohmann::json skip = {"lm_head"};
  for (uint64_t i = 0; i < layers; ++i) {
    const std::string l = "model.language_model.layers." + std::to_string(i);
    for (const char* m : {".input_layernorm", ".mlp.gate", ".post_attention_layernorm"}) {
      skip.push_back(l + m);
    }
  }
  for (uint64_t i = 0; i < vision_depth; ++i) {
    const std::string l = "model.visual.blocks." + std::to_string(i);
    for (const char* m : {".attn.proj", ".attn.qkv", ".mlp.linear_fc1", ".mlp.linear_fc2"}) {
      skip.push_back(l + m);
    }
  }
  skip.push_back("model.visual.merger.linear_fc1");
  skip.push_back("model.visual.merger.linear_fc2");
  for (uint64_t i = 0; i < deepstack; ++i) {
    const std::string l = "model.visual.deepstack_merger_list." + std::to_string(i);
    skip.push_back(l + ".linear_fc1");
    skip.push_back(l + ".linear_fc2");
  }
  return {{"activation_scheme", "dynamic"}, {"fmt", "e4m3"}, {"quant_method", "fp8"},
          {"weight_block_size", {128, 128}}, {"modules_to_not_convert", skip}};
}

struct Built {
  Model quantized;
  Model logical;  // the same config with the quantization ignored (the bf16 release)
};

std::optional<Built> BuildBoth(const nlohmann::json& j) {
  auto q = BuildJson(j);
  EXPECT_TRUE(q) << q.error().message;
  BuildOptions plain;
  plain.ignore_quantization = true;
  auto p = BuildJson(j, plain);
  EXPECT_TRUE(p) << p.error().message;
  if (!q || !p) return std::nullopt;
  return Built{std::move(*q), std::move(*p)};
}

// Qwen/Qwen3-VL-30B-A3B-Instruct-FP8: the eval set's Qwen3-VL-30B-A3B-Instruct config plus the
// FP8 quantization_config. One tensor of each kind, by hand:
// - layers.0.self_attn.q_proj: weight float8 [32 x 128, 2048] = 8,388,608 B; weight_scale_inv
//   float32 [4096/128, 2048/128] = [32, 16] = 512 x 4 = 2048 B;
// - an expert, layers.0.mlp.experts.0.gate_proj: float8 [768, 2048] = 1,572,864 B, scales
//   [ceil(768/128) = 6, 16] x 4 = 384 B (experts one module per expert);
// - the router layers.0.mlp.gate (excluded): bfloat16 [128, 2048] = 524,288 B;
// - the vision blocks.0.attn.qkv (excluded): bfloat16 [3 x 1152, 1152] = 7,962,624 B.
// Whole model, against the bf16 build of the same config (the reference formula): every quantized
// linear stores one byte an element instead of two, plus 4 bytes a 128 x 128 block. A layer's
// quantized elements: q 4096x2048 + k 512x2048 + v 512x2048 + o 2048x4096 = 18,874,368, experts
// 128 x (768x2048 x 2 + 2048x768) = 603,979,776: 622,854,144, x 48 layers = 29,896,998,912.
// Blocks a layer: q 32x16 + k 4x16 + v 4x16 + o 16x32 = 1152, experts 128 x (6x16 x 2 + 16x6) =
// 36,864: 38,016, x 48 = 1,824,768 blocks = 7,299,072 B. Stored = bf16 - 29,896,998,912 +
// 7,299,072 = bf16 - 29,889,699,840.
TEST(VlmQuantization, Qwen3Vl30bA3bFp8) {
  auto base = testing::EvalConfigJson("recent/Qwen__Qwen3-VL-30B-A3B-Instruct");
  if (!base) GTEST_SKIP() << "../shared/eval is absent: Qwen3-VL-30B-A3B config not available";
  nlohmann::json j = *base;
  j["quantization_config"] = QwenVlFp8Config(48, 27, 3);
  auto built = BuildBoth(j);
  ASSERT_TRUE(built);
  const Model& m = built->quantized;
  const Tensor* q = FindTensor(m, "model.language_model.layers.0.self_attn.q_proj.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->dtype, Dtype::kF8E4M3);
  EXPECT_EQ(q->bytes, 8388608u);
  const Tensor* qs = FindTensor(m, "model.language_model.layers.0.self_attn.q_proj.weight_scale_inv");
  ASSERT_NE(qs, nullptr);
  EXPECT_EQ(qs->shape, (std::vector<uint64_t>{32, 16}));
  EXPECT_EQ(qs->bytes, 2048u);
  const Tensor* ex = FindTensor(m, "model.language_model.layers.0.mlp.experts.0.gate_proj.weight");
  ASSERT_NE(ex, nullptr);
  EXPECT_EQ(ex->bytes, 1572864u);
  EXPECT_EQ(FindTensor(m, "model.language_model.layers.0.mlp.experts.0.gate_proj.weight_scale_inv")
                ->bytes, 384u);
  EXPECT_EQ(FindTensor(m, "model.language_model.layers.0.mlp.experts.gate_up_proj"), nullptr);
  const Tensor* router = FindTensor(m, "model.language_model.layers.0.mlp.gate.weight");
  ASSERT_NE(router, nullptr);
  EXPECT_EQ(router->dtype, Dtype::kBF16);
  EXPECT_EQ(router->bytes, 524288u);
  const Tensor* qkv = FindTensor(m, "model.visual.blocks.0.attn.qkv.weight");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->dtype, Dtype::kBF16);
  EXPECT_EQ(qkv->bytes, 7962624u);
  EXPECT_EQ(FindTensor(m, "lm_head.weight")->dtype, Dtype::kBF16);
  EXPECT_TRUE(HasLine(m.assumptions, "one module per expert"));
  EXPECT_FALSE(HasLine(m.notes, "not applied"));

  const auto quantized = ComputeTotals(m);
  const auto logical = ComputeTotals(built->logical);
  EXPECT_EQ(quantized.parameters, logical.parameters);  // logical counts (issue 15)
  EXPECT_EQ(quantized.stored_bytes, logical.stored_bytes - 29889699840u);
}

// Qwen/Qwen3-VL-235B-A22B-Instruct-FP8, the same way. A layer: q 8192x4096 + k 512x4096 +
// v 512x4096 + o 4096x8192 = 71,303,168, experts 128 x (1536x4096 x 2 + 4096x1536) =
// 2,415,919,104: 2,487,222,272 elements, x 94 = 233,798,893,568. Blocks: q 64x32 + k 4x32 +
// v 4x32 + o 32x64 = 4352, experts 128 x (12x32 x 3) = 147,456: 151,808, x 94 = 14,269,952 =
// 57,079,808 B. Stored = bf16 - 233,798,893,568 + 57,079,808 = bf16 - 233,741,813,760. The
// down_proj of an expert: float8 [4096, 1536] = 6,291,456 B, scales [32, 12] x 4 = 1536 B.
TEST(VlmQuantization, Qwen3Vl235bA22bFp8) {
  auto base = testing::EvalConfigJson("recent/Qwen__Qwen3-VL-235B-A22B-Instruct");
  if (!base) GTEST_SKIP() << "../shared/eval is absent: Qwen3-VL-235B-A22B config not available";
  nlohmann::json j = *base;
  j["quantization_config"] = QwenVlFp8Config(94, 27, 3);
  auto built = BuildBoth(j);
  ASSERT_TRUE(built);
  const Model& m = built->quantized;
  const std::string down = "model.language_model.layers.93.mlp.experts.127.down_proj";
  ASSERT_NE(FindTensor(m, down + ".weight"), nullptr);
  EXPECT_EQ(FindTensor(m, down + ".weight")->bytes, 6291456u);
  EXPECT_EQ(FindTensor(m, down + ".weight_scale_inv")->bytes, 1536u);
  EXPECT_EQ(FindTensor(m, "model.language_model.layers.93.mlp.gate.weight")->dtype, Dtype::kBF16);
  EXPECT_EQ(FindTensor(m, "model.visual.deepstack_merger_list.2.linear_fc2.weight")->dtype,
            Dtype::kBF16);
  const auto quantized = ComputeTotals(m);
  const auto logical = ComputeTotals(built->logical);
  EXPECT_EQ(quantized.parameters, logical.parameters);
  EXPECT_EQ(quantized.stored_bytes, logical.stored_bytes - 233741813760u);
}

// A list that does not name the vision tower: transformers' fp8 loader replaces every nn.Linear
// it does not exclude, so the tower's linears are stored quantized too. Tiny Qwen3-VL (dense),
// vision width 128: blocks.0.attn.qkv float8 [384, 128] = 49,152 B + scales [3, 1] x 4 = 12 B.
TEST(VlmQuantization, QwenVisionQuantizedWhereTheListDoesNotExcludeIt) {
  nlohmann::json text = {{"model_type", "qwen3_vl_text"}, {"vocab_size", 16}, {"hidden_size", 128},
                         {"num_hidden_layers", 1}, {"num_attention_heads", 1},
                         {"num_key_value_heads", 1}, {"head_dim", 128},
                         {"intermediate_size", 256}, {"dtype", "bfloat16"}};
  nlohmann::json vision = {{"depth", 1}, {"hidden_size", 128}, {"intermediate_size", 256},
                           {"num_heads", 1}, {"out_hidden_size", 128}, {"patch_size", 2},
                           {"temporal_patch_size", 1}, {"spatial_merge_size", 1},
                           {"in_channels", 1}, {"num_position_embeddings", 4},
                           {"deepstack_visual_indexes", nlohmann::json::array()}};
  nlohmann::json j = {{"model_type", "qwen3_vl"}, {"architectures", {"Qwen3VLForConditionalGeneration"}},
                      {"tie_word_embeddings", false}, {"text_config", text},
                      {"vision_config", vision},
                      {"quantization_config", {{"quant_method", "fp8"},
                                               {"weight_block_size", {128, 128}},
                                               {"modules_to_not_convert", {"lm_head"}}}}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  const Tensor* qkv = FindTensor(*m, "model.visual.blocks.0.attn.qkv.weight");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->dtype, Dtype::kF8E4M3);
  EXPECT_EQ(qkv->bytes, 49152u);
  EXPECT_EQ(FindTensor(*m, "model.visual.blocks.0.attn.qkv.weight_scale_inv")->bytes, 12u);
  // With the tower named ("model.visual" as a substring, transformers' match), it stays bf16.
  j["quantization_config"]["modules_to_not_convert"] = {"lm_head", "model.visual"};
  auto kept = BuildJson(j);
  ASSERT_TRUE(kept);
  EXPECT_EQ(FindTensor(*kept, "model.visual.blocks.0.attn.qkv.weight")->dtype, Dtype::kBF16);
  EXPECT_EQ(FindTensor(*kept, "model.language_model.layers.0.mlp.down_proj.weight")->dtype,
            Dtype::kF8E4M3);
}

// A Qwen2.5-VL AWQ release (Qwen/Qwen2.5-VL-7B-Instruct-AWQ's form): AutoAWQ's
// Qwen2_5_VLAWQForCausalLM saves "modules_to_not_convert": ["visual"] (casper-hansen/AutoAWQ
// awq/models/qwen2_5_vl.py), 4-bit GEMM, group 128, zero point, float16. Tiny flat config (the
// pre-4.52 layout the release uses: model.layers.*, visual.*), text width 32, group 32, one layer:
// - q_proj [32, 32] with bias: qweight int32 [32, 32/8 = 4] = 512 B, qzeros [32/32 = 1, 4] = 16 B,
//   scales float16 [1, 32] = 64 B, bias float16 [32] = 64 B;
// - visual.blocks.0.attn.qkv (excluded by "visual"): float16 [3 x 8, 8] = 384 B + bias 48 B;
// - lm_head float16 [16, 32] = 1024 B (transformers never converts the output embeddings).
nlohmann::json TinyQwen25VlAwq() {
  nlohmann::json vision = {{"depth", 1}, {"hidden_size", 8}, {"intermediate_size", 16},
                           {"num_heads", 2}, {"out_hidden_size", 32}, {"patch_size", 2},
                           {"temporal_patch_size", 1}, {"spatial_merge_size", 1},
                           {"in_chans", 1}};
  return {{"model_type", "qwen2_5_vl"}, {"architectures", {"Qwen2_5_VLForConditionalGeneration"}},
          {"vocab_size", 16}, {"hidden_size", 32}, {"num_hidden_layers", 1},
          {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"intermediate_size", 64},
          {"tie_word_embeddings", false}, {"torch_dtype", "float16"}, {"vision_config", vision},
          {"quantization_config", {{"bits", 4}, {"group_size", 32},
                                   {"modules_to_not_convert", {"visual"}},
                                   {"quant_method", "awq"}, {"version", "gemm"},
                                   {"zero_point", true}}}};
}

TEST(VlmQuantization, Qwen25VlAwq) {
  auto built = BuildBoth(TinyQwen25VlAwq());
  ASSERT_TRUE(built);
  const Model& m = built->quantized;
  const std::string q = "model.layers.0.self_attn.q_proj";
  ASSERT_NE(FindTensor(m, q + ".qweight"), nullptr);
  EXPECT_EQ(FindTensor(m, q + ".qweight")->shape, (std::vector<uint64_t>{32, 4}));
  EXPECT_EQ(FindTensor(m, q + ".qweight")->bytes, 512u);
  EXPECT_EQ(FindTensor(m, q + ".qzeros")->bytes, 16u);
  EXPECT_EQ(FindTensor(m, q + ".scales")->bytes, 64u);
  EXPECT_EQ(FindTensor(m, q + ".bias")->bytes, 64u);
  const Tensor* qkv = FindTensor(m, "visual.blocks.0.attn.qkv.weight");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->dtype, Dtype::kF16);
  EXPECT_EQ(qkv->bytes, 384u);
  EXPECT_EQ(FindTensor(m, "lm_head.weight")->bytes, 1024u);
  EXPECT_EQ(ComputeTotals(m).parameters, ComputeTotals(built->logical).parameters);
}

// The same release saved by transformers >= 4.52 (a "text_config", model.language_model.*): a
// list naming a language module by its checkpoint name reaches the text builder's "model.*"
// module, while another layout's name for it ("language_model.model.*") does not. (Plain names
// match as substrings, as transformers matches them: "model.layers.0.mlp.down_proj" would be
// inside "model.language_model.layers.0.mlp.down_proj".)
TEST(VlmQuantization, ExclusionListsUseTheCheckpointsNames) {
  nlohmann::json j = TinyQwen25VlAwq();
  nlohmann::json text;
  for (const char* k : {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                        "num_key_value_heads", "intermediate_size"}) {
    text[k] = j[k];
    j.erase(k);
  }
  text["model_type"] = "qwen2_5_vl_text";
  j["text_config"] = text;
  j["quantization_config"]["modules_to_not_convert"] = {
      "visual", "model.language_model.layers.0.self_attn.o_proj",
      "language_model.model.layers.0.mlp.down_proj"};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  const std::string l = "model.language_model.layers.0.";
  EXPECT_NE(FindTensor(*m, l + "self_attn.o_proj.weight"), nullptr);   // excluded: float16
  EXPECT_NE(FindTensor(*m, l + "mlp.down_proj.qweight"), nullptr);     // another model's name
  EXPECT_NE(FindTensor(*m, l + "self_attn.q_proj.qweight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.visual.blocks.0.attn.qkv.weight")->dtype, Dtype::kF16);
}

// Mistral 3 / Gemma 3 releases quantized by llm-compressor (compressed-tensors FP8_DYNAMIC,
// per-channel weights, dynamic per-token activations: no input_scale), ignoring the tower, the
// projector and the head with regexes ("re:.*lm_head", "re:vision_tower.*",
// "re:multi_modal_projector.*", the ignore list of llm-compressor's vision-language examples).
nlohmann::json Fp8DynamicConfig() {
  nlohmann::json weights = {{"num_bits", 8}, {"type", "float"}, {"strategy", "channel"},
                            {"symmetric", true}, {"dynamic", false}};
  nlohmann::json inputs = {{"num_bits", 8}, {"type", "float"}, {"strategy", "token"},
                           {"symmetric", true}, {"dynamic", true}};
  return {{"quant_method", "compressed-tensors"}, {"format", "float-quantized"},
          {"config_groups", {{"group_0", {{"targets", {"Linear"}}, {"weights", weights},
                                          {"input_activations", inputs}}}}},
          {"ignore", {"re:.*lm_head", "re:vision_tower.*", "re:multi_modal_projector.*"}}};
}

// Tiny Mistral 3 (text width 8, 1 layer, bfloat16): language_model.model.layers.0.self_attn.q_proj
// float8 [8, 8] = 64 B, weight_scale float32 [8, 1] = 32 B, no input_scale; the Pixtral tower and
// the projector stay bfloat16 (vision_tower...attention.q_proj [8, 8] = 128 B).
TEST(VlmQuantization, Mistral3Fp8Dynamic) {
  nlohmann::json text = {{"model_type", "mistral"}, {"vocab_size", 10}, {"hidden_size", 8},
                         {"num_hidden_layers", 1}, {"num_attention_heads", 2},
                         {"num_key_value_heads", 1}, {"head_dim", 4}, {"intermediate_size", 12}};
  nlohmann::json vision = {{"model_type", "pixtral"}, {"hidden_size", 8}, {"intermediate_size", 12},
                           {"num_hidden_layers", 1}, {"num_attention_heads", 2},
                           {"head_dim", 4}, {"patch_size", 2}, {"image_size", 4},
                           {"num_channels", 1}};
  nlohmann::json j = {{"model_type", "mistral3"}, {"architectures", {"Mistral3ForConditionalGeneration"}},
                      {"torch_dtype", "bfloat16"}, {"text_config", text}, {"vision_config", vision},
                      {"spatial_merge_size", 1}, {"quantization_config", Fp8DynamicConfig()}};
  auto built = BuildBoth(j);
  ASSERT_TRUE(built);
  const Model& m = built->quantized;
  const std::string q = "language_model.model.layers.0.self_attn.q_proj";
  ASSERT_NE(FindTensor(m, q + ".weight"), nullptr);
  EXPECT_EQ(FindTensor(m, q + ".weight")->dtype, Dtype::kF8E4M3);
  EXPECT_EQ(FindTensor(m, q + ".weight")->bytes, 64u);
  EXPECT_EQ(FindTensor(m, q + ".weight_scale")->bytes, 32u);
  EXPECT_EQ(FindTensor(m, q + ".input_scale"), nullptr);
  EXPECT_EQ(FindTensor(m, "language_model.lm_head.weight")->dtype, Dtype::kBF16);
  const Tensor* vq = FindTensor(m, "vision_tower.transformer.layers.0.attention.q_proj.weight");
  ASSERT_NE(vq, nullptr);
  EXPECT_EQ(vq->dtype, Dtype::kBF16);
  EXPECT_EQ(vq->bytes, 128u);
  EXPECT_FALSE(HasLine(m.notes, "not applied"));
  EXPECT_FALSE(HasLine(m.assumptions, "does not exclude"));
  EXPECT_EQ(ComputeTotals(m).parameters, ComputeTotals(built->logical).parameters);
  // Without the tower in the list: built unquantized, and an assumption line says so.
  j["quantization_config"]["ignore"] = {"re:.*lm_head"};
  auto partial = BuildJson(j);
  ASSERT_TRUE(partial);
  EXPECT_TRUE(HasLine(partial->assumptions, "does not exclude"));
}

// Gemma 3 with the same scheme: the text model's linears quantized under
// language_model.model.*, SigLIP and the projector parameter kept in bfloat16.
TEST(VlmQuantization, Gemma3Fp8Dynamic) {
  nlohmann::json text = {{"model_type", "gemma3_text"}, {"vocab_size", 10}, {"hidden_size", 8},
                         {"num_hidden_layers", 1}, {"num_attention_heads", 2},
                         {"num_key_value_heads", 1}, {"head_dim", 4}, {"intermediate_size", 12}};
  nlohmann::json vision = {{"hidden_size", 8}, {"intermediate_size", 12}, {"num_hidden_layers", 1},
                           {"num_attention_heads", 2}, {"patch_size", 2}, {"image_size", 4},
                           {"num_channels", 1}};
  nlohmann::json j = {{"model_type", "gemma3"}, {"architectures", {"Gemma3ForConditionalGeneration"}},
                      {"torch_dtype", "bfloat16"}, {"text_config", text}, {"vision_config", vision},
                      {"quantization_config", Fp8DynamicConfig()}};
  auto built = BuildBoth(j);
  ASSERT_TRUE(built);
  const Model& m = built->quantized;
  EXPECT_EQ(FindTensor(m, "language_model.model.layers.0.mlp.down_proj.weight")->dtype,
            Dtype::kF8E4M3);
  EXPECT_EQ(FindTensor(m, "vision_tower.vision_model.encoder.layers.0.self_attn.q_proj.weight")
                ->dtype, Dtype::kBF16);
  EXPECT_EQ(ComputeTotals(m).parameters, ComputeTotals(built->logical).parameters);
}

// Llama 4 with llm-compressor's Llama 4 ignore list (examples/quantization_w8a8_fp8/
// llama4_fp8_block_example.py: "re:.*lm_head", "re:.*self_attn", "re:.*router",
// "re:.*vision_model.*", "re:.*multi_modal_projector.*") on the FP8_DYNAMIC scheme: the
// shared expert's linears are quantized, attention, router, vision and projector are not, and
// the fused experts (not nn.Linear in transformers) are counted unquantized with an assumption.
// shared_expert.gate_proj [16, 8]: float8 128 B, weight_scale [16, 1] float32 64 B.
TEST(VlmQuantization, Llama4Fp8Dynamic) {
  nlohmann::json text = {{"model_type", "llama4_text"}, {"vocab_size", 10}, {"hidden_size", 8},
                         {"num_hidden_layers", 1}, {"num_attention_heads", 2},
                         {"num_key_value_heads", 1}, {"head_dim", 4}, {"intermediate_size", 16},
                         {"intermediate_size_mlp", 32}, {"num_local_experts", 2},
                         {"torch_dtype", "bfloat16"}};
  nlohmann::json vision = {{"hidden_size", 8}, {"num_hidden_layers", 1}, {"intermediate_size", 16},
                           {"image_size", 4}, {"patch_size", 2}, {"vision_output_dim", 8},
                           {"projector_input_dim", 8}, {"projector_output_dim", 8}};
  nlohmann::json qc = Fp8DynamicConfig();
  qc["ignore"] = {"re:.*lm_head", "re:.*self_attn", "re:.*router", "re:.*vision_model.*",
                  "re:.*multi_modal_projector.*"};
  nlohmann::json j = {{"model_type", "llama4"}, {"architectures", {"Llama4ForConditionalGeneration"}},
                      {"torch_dtype", "bfloat16"}, {"text_config", text}, {"vision_config", vision},
                      {"quantization_config", qc}};
  auto built = BuildBoth(j);
  ASSERT_TRUE(built);
  const Model& m = built->quantized;
  const std::string f = "language_model.model.layers.0.feed_forward.";
  EXPECT_EQ(FindTensor(m, f + "shared_expert.gate_proj.weight")->dtype, Dtype::kF8E4M3);
  EXPECT_EQ(FindTensor(m, f + "shared_expert.gate_proj.weight")->bytes, 128u);
  EXPECT_EQ(FindTensor(m, f + "shared_expert.gate_proj.weight_scale")->bytes, 64u);
  EXPECT_EQ(FindTensor(m, "language_model.model.layers.0.self_attn.q_proj.weight")->dtype,
            Dtype::kBF16);
  EXPECT_EQ(FindTensor(m, f + "router.weight")->dtype, Dtype::kBF16);
  EXPECT_EQ(FindTensor(m, "vision_model.model.layers.0.mlp.fc1.weight")->dtype, Dtype::kBF16);
  EXPECT_EQ(FindTensor(m, "multi_modal_projector.linear_1.weight")->dtype, Dtype::kBF16);
  EXPECT_TRUE(HasLine(m.assumptions, "fused experts"));
  EXPECT_EQ(ComputeTotals(m).parameters, ComputeTotals(built->logical).parameters);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
