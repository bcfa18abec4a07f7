#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "formats/hf_config_json.h"
#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace {
namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildCounted;
using testing::BuildJson;
using testing::FindTensor;

// Two llama layers in bfloat16: hidden 128, 2 heads of 64 (1 KV head), intermediate 96, vocab 10,
// untied LM head, under an mlx-lm block `quantization`.
nlohmann::json TinyMlxLlama(nlohmann::json quantization) {
  return testing::TinyDecoderWith("llama", {{"hidden_size", 128},
                                            {"intermediate_size", 96},
                                            {"torch_dtype", "bfloat16"},
                                            {"tie_word_embeddings", false},
                                            {"quantization", std::move(quantization)}});
}

// 4-bit affine, group 64. A quantized linear with 128 inputs stores weight uint32 [out, 128 x 4 /
// 32 = 16] (64 x out bytes), scales and biases bfloat16 [out, 2] (4 x out bytes each): 72 x out.
//   q_proj 128 out: 9216; k_proj, v_proj 64 out: 4608 each; o_proj 128 out: 9216;
//   gate_proj, up_proj 96 out: 6912 each;
//   down_proj has 96 inputs, which 64 does not divide (mlx-lm keeps it): bf16 128 x 96 = 24576;
//   two norms 2 x 256 = 512. Layer 0: 66560 bytes.
// Layer 1's q_proj is overridden to {group 32, bits 8}: weight [128, 128 x 8 / 32 = 32] uint32
// = 16384, scales and biases [128, 4] bf16 = 1024 each: 18432 instead of 9216. Layer 1: 75776.
// embed_tokens (10 x 128, 128 inputs): weight [10, 16] uint32 640, scales 40, biases 40 = 720.
// final norm 256; lm_head listed as false: bf16 10 x 128 = 2560.
// Total 66560 + 75776 + 720 + 256 + 2560 = 145872 bytes. Parameters stay logical: per layer
// 16384 + 8192 + 8192 + 16384 + 3 x 12288 + 256 = 86272; 2 x 86272 + 1280 + 128 + 1280 = 175232.
TEST(MlxQuantization, TinyLlamaCountedAsStored) {
  auto m = BuildCounted(
      TinyMlxLlama({{"group_size", 64},
                    {"bits", 4},
                    {"model.layers.1.self_attn.q_proj", {{"group_size", 32}, {"bits", 8}}},
                    {"lm_head", false}}),
      175232, 145872);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.0.self_attn.q_proj.weight", {128, 16});
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.q_proj.weight")->dtype, Dtype::kU32);
  testing::ExpectShape(*m, "model.layers.0.self_attn.q_proj.scales", {128, 2});
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.q_proj.biases")->dtype, Dtype::kBF16);
  testing::ExpectShape(*m, "model.layers.1.self_attn.q_proj.weight", {128, 32});
  testing::ExpectShape(*m, "model.embed_tokens.weight", {10, 16});
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mlp.down_proj.weight")->dtype, Dtype::kBF16);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mlp.down_proj.scales"), nullptr);
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->dtype, Dtype::kBF16);
  EXPECT_FALSE(m->notes.empty());
  // accelerate's view (ignore_quantization) builds the unquantized model: 175232 x 2 bytes.
  BuildCounted(TinyMlxLlama({{"group_size", 64}, {"bits", 4}}), 175232, 175232 * 2,
               {.ignore_quantization = true});
}

// Tied embeddings: mlx-lm calls embed_tokens.as_linear, nothing is stored for lm_head. The block
// only as "quantization_config" (no quant_method), mode mxfp4 (group 32, E8M0 uint8 scales, no
// biases): a 128-input linear stores 128 x 4 / 8 = 64 bytes of weight and 4 scale bytes per output
// row: 68 x out. Layer: q 8704 + k 4352 + v 4352 + o 8704 + gate/up 2 x 6528 + down (96 inputs,
// 32 divides them: weight [128, 12] uint32 6144 + scales [128, 3] 384) 6528 + norms 512 = 46208.
// Embedding 10 x 68 = 680, final norm 256: 2 x 46208 + 680 + 256 = 93352.
TEST(MlxQuantization, QuantizationConfigOnlyMxfp4Tied) {
  auto j = TinyMlxLlama(nullptr);
  j.erase("quantization");
  j["tie_word_embeddings"] = true;
  j["quantization_config"] = {{"group_size", 32}, {"bits", 4}, {"mode", "mxfp4"}};
  auto m = BuildCounted(j, 175232 - 1280, 93352);
  ASSERT_TRUE(m);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mlp.down_proj.scales")->dtype, Dtype::kU8);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mlp.down_proj.biases"), nullptr);
}

// Hostile blocks fail with one line that names the key.
TEST(MlxQuantization, HostileValuesNameTheKey) {
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {{{"group_size", 64}, {"bits", 0}}, "\"bits\" must be a positive integer, got 0"},
      {{{"group_size", 64}, {"bits", 7}}, "\"bits\" = 7 is not supported in mode \"affine\""},
      {{{"group_size", 0}, {"bits", 4}}, "\"group_size\" must be a positive integer, got 0"},
      {{{"group_size", uint64_t{1} << 62}, {"bits", 4}}, "\"group_size\" = 4611686018427387904"},
      {{{"group_size", "64"}, {"bits", 4}},
       "\"group_size\" must be a positive integer, got \"64\""},
      {{{"group_size", 64.5}, {"bits", 4}}, "\"group_size\" must be a positive integer"},
      {{{"group_size", 64}}, "\"quantization\" needs \"bits\""},
      {{{"group_size", 64}, {"bits", 4}, {"mode", "int3"}}, "\"mode\" \"int3\" is not supported"},
      {{{"group_size", 64}, {"bits", 4}, {"mode", "nvfp4"}},
       "mode \"nvfp4\" takes \"group_size\" 16 and \"bits\" 4 (got 64 and 4)"},
      {{{"group_size", 64}, {"bits", 4}, {"lm_head", {{"bits", 1}}}},
       "\"quantization\".\"lm_head\": \"bits\" = 1 is not supported"},
      {"yes", "\"quantization\" must be an object"},
  };
  for (const auto& [block, expected] : cases) {
    auto m = BuildJson(TinyMlxLlama(block));
    ASSERT_FALSE(m) << block.dump();
    EXPECT_NE(m.error().message.find(expected), std::string::npos) << m.error().message;
    EXPECT_TRUE(m.error().message.starts_with("config.json: \"quantization")) << m.error().message;
    EXPECT_EQ(m.error().message.find('\n'), std::string::npos);
  }
}

// A per-module entry's missing fields take its mode's defaults (to_quantized(**entry)): an
// {"bits": 8} entry on a group-64 block is 8-bit group 64; {"mode": "mxfp8"} is group 32, 8 bits.
TEST(MlxQuantization, EntryDefaultsFollowItsMode) {
  auto m = BuildJson(TinyMlxLlama({{"group_size", 64},
                                   {"bits", 4},
                                   {"model.layers.0.self_attn.o_proj", {{"bits", 8}}},
                                   {"model.layers.0.self_attn.k_proj", {{"mode", "mxfp8"}}},
                                   {"model.layers.0.self_attn.v_proj", true}}));
  ASSERT_TRUE(m) << m.error().message;
  testing::ExpectShape(*m, "model.layers.0.self_attn.o_proj.weight", {128, 32});
  testing::ExpectShape(*m, "model.layers.0.self_attn.o_proj.scales", {128, 2});
  testing::ExpectShape(*m, "model.layers.0.self_attn.k_proj.scales", {64, 4});
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.k_proj.scales")->dtype, Dtype::kU8);
  testing::ExpectShape(*m, "model.layers.0.self_attn.v_proj.weight", {64, 16});
}

// DBRX, whose fused experts memfit otherwise cannot quantize: mlx-lm's dbrx.py splits them into
// ffn.experts.<E>.{w1, v1, w2} linears. d_model 64, 2 heads of 32 (1 KV head), 2 experts of 64,
// vocab 10, bfloat16, 4-bit group 64: a 64-input linear stores 32 + 2 + 2 = 36 bytes a row.
// Per block: norm_1 128, Wqkv 128 rows 4608, out_proj 2304, norm_2 128, router 2 rows 72,
// experts 2 x (w1 2304 + v1 2304 + w2 2304) = 13824: 21064. Two blocks 42128 + wte 360 +
// norm_f 128 + lm_head 360 = 42976 bytes. Parameters: per block 64 + 8192 + 4096 + 64 + 128 +
// 6 x 4096 = 37120; 2 x 37120 + 640 + 64 + 640 = 75584.
nlohmann::json TinyMlxDbrx(nlohmann::json quantization) {
  return {{"model_type", "dbrx"},
          {"architectures", {"DbrxForCausalLM"}},
          {"vocab_size", 10},
          {"d_model", 64},
          {"n_heads", 2},
          {"n_layers", 2},
          {"max_seq_len", 16},
          {"attn_config", {{"kv_n_heads", 1}}},
          {"ffn_config", {{"ffn_hidden_size", 64}, {"moe_num_experts", 2}, {"moe_top_k", 1}}},
          {"torch_dtype", "bfloat16"},
          {"quantization", std::move(quantization)}};
}

TEST(MlxQuantization, DbrxExpertsAreQuantizedLinears) {
  const nlohmann::json block = {{"group_size", 64}, {"bits", 4}};
  auto m = BuildCounted(TinyMlxDbrx(block), 75584, 42976);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "transformer.blocks.0.ffn.experts.1.w2.weight", {64, 8});
  EXPECT_TRUE(m->assumptions.empty() ||
              m->assumptions.back().find("exact builder") == std::string::npos);
  auto folded = BuildCounted(TinyMlxDbrx(block), 75584, 42976, {.compact_repeats = true});
  ASSERT_TRUE(folded);
  // The note counts every expert's weight, in the compact form too (a run stands for its copies).
  const auto mlx_note = [](const Model& model) {
    for (const auto& n : model.notes) {
      if (n.starts_with("MLX (mlx-lm) quantization:")) return n;
    }
    return std::string();
  };
  EXPECT_FALSE(mlx_note(*m).empty());
  EXPECT_EQ(mlx_note(*folded), mlx_note(*m));
  // An entry naming one expert keeps the experts written out: that w2 in bfloat16 (8192 bytes
  // instead of 2304), compact or not.
  auto one = block;
  one["transformer.blocks.0.ffn.experts.1.w2"] = false;
  BuildCounted(TinyMlxDbrx(one), 75584, 42976 - 2304 + 8192);
  auto compact =
      BuildCounted(TinyMlxDbrx(one), 75584, 42976 - 2304 + 8192, {.compact_repeats = true});
  ASSERT_TRUE(compact);
  EXPECT_EQ(FindTensor(*compact, "transformer.blocks.0.ffn.experts.1.w2.weight")->dtype,
            Dtype::kBF16);
}

// A llava release converted by mlx-vlm: the CLIP tower stays in floating point
// (skip_multimodal_module), the projector and the text model are quantized; one note.
TEST(MlxQuantization, VisionTowersStayInFloatingPoint) {
  const nlohmann::json j = {
      {"model_type", "llava"},
      {"architectures", {"LlavaForConditionalGeneration"}},
      {"torch_dtype", "bfloat16"},
      {"image_token_index", 5},
      {"text_config",
       testing::TinyDecoderWith(
           "llama", {{"hidden_size", 128}, {"intermediate_size", 128}, {"torch_dtype", nullptr}})},
      {"vision_config",
       {{"model_type", "clip_vision_model"},
        {"hidden_size", 64},
        {"num_hidden_layers", 1},
        {"num_attention_heads", 2},
        {"intermediate_size", 128},
        {"patch_size", 2},
        {"image_size", 4},
        {"projection_dim", 64}}},
      {"quantization", {{"group_size", 64}, {"bits", 4}}},
      {"quantization_config", {{"group_size", 64}, {"bits", 4}}}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  uint64_t quantized = 0;
  for (const Tensor& t : m->tensors) {
    if (t.dtype != Dtype::kU32) continue;
    ++quantized;
    EXPECT_NE(t.component, "vision_tower") << t.name;
  }
  // Text: 2 layers x 7 linears + embed_tokens + lm_head; projector: linear_1 and linear_2.
  EXPECT_EQ(quantized, 18u);
  EXPECT_EQ(std::count_if(m->notes.begin(), m->notes.end(),
                          [](const std::string& n) { return n.find("MLX") != std::string::npos; }),
            1);
  EXPECT_EQ(std::count_if(m->assumptions.begin(), m->assumptions.end(),
                          [](const std::string& a) {
                            return a.find("vision") != std::string::npos &&
                                   a.find("MLX") == std::string::npos;
                          }),
            0);
}

// mlx-community releases against the stored sizes of their pinned snapshots, from exo
// (exo-explore/exo, its revision-pinning test PINNED_NCCL_MODEL_CARDS: storage_size.in_bytes):
//   mlx-community/Llama-3.2-1B-Instruct-4bit @08231374eeacb049a0eade7922910865b8fce912  695242752
//   mlx-community/Llama-3.2-3B-Instruct-4bit @7f0dc925e0d0afb0322d96f9255cfddf2ba5636e 1807423488
//   mlx-community/Llama-3.1-8B-Instruct-4bit @90215b22ec18e72f623dde2ea7af4097025160e2 4517404672
//   mlx-community/Llama-3.3-70B-Instruct-4bit @de2dfaf56839b7d0e834157d2401dee02726874d 39688355840
// Configs: the fields memfit reads of meta-llama's Llama-3.2-1B/3B-Instruct, Llama-3.1-8B- and
// Llama-3.3-70B-Instruct, with mlx-lm's block {"group_size": 64, "bits": 4}.
TEST(MlxQuantization, MlxCommunityLlamasMatchTheirStoredSizes) {
  struct Release {
    uint64_t hidden, intermediate, layers, heads, head_dim;  // 8 KV heads, vocab 128256
    bool tied;
    uint64_t stored_bytes;
  };
  for (const Release& r : {Release{2048, 8192, 16, 32, 64, true, 695242752},
                           Release{3072, 8192, 28, 24, 128, true, 1807423488},
                           Release{4096, 14336, 32, 32, 128, false, 4517404672},
                           Release{8192, 28672, 80, 64, 128, false, 39688355840}}) {
    const nlohmann::json j = {{"model_type", "llama"},
                              {"architectures", {"LlamaForCausalLM"}},
                              {"hidden_size", r.hidden},
                              {"intermediate_size", r.intermediate},
                              {"num_hidden_layers", r.layers},
                              {"num_attention_heads", r.heads},
                              {"num_key_value_heads", 8},
                              {"head_dim", r.head_dim},
                              {"vocab_size", 128256},
                              {"max_position_embeddings", 131072},
                              {"tie_word_embeddings", r.tied},
                              {"torch_dtype", "bfloat16"},
                              {"quantization", {{"group_size", 64}, {"bits", 4}}},
                              {"quantization_config", {{"group_size", 64}, {"bits", 4}}}};
    auto m = BuildJson(j);
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_EQ(ComputeTotals(*m).stored_bytes, r.stored_bytes) << r.hidden;
  }
}

// mlx-community/Qwen3-Coder-30B-A3B-Instruct-4bit @6e302ea604ad9ab206367e2c501d1571023e7b6d:
// 17180913664 bytes (the same exo test). Qwen3-30B-A3B's fields (48 layers of 128 experts of
// 768, hidden 2048, 32 heads of 128, 4 KV heads, vocab 151936, untied); mlx-lm's qwen3_moe
// quant_predicate keeps each router (mlp.gate) at {"group_size": 64, "bits": 8}, which
// quantize_model writes into the block per layer. Without those entries: 17174622208.
TEST(MlxQuantization, MlxCommunityQwen3MoeMatchesItsStoredSize) {
  nlohmann::json j = {{"model_type", "qwen3_moe"},
                      {"architectures", {"Qwen3MoeForCausalLM"}},
                      {"hidden_size", 2048},
                      {"intermediate_size", 6144},
                      {"moe_intermediate_size", 768},
                      {"num_hidden_layers", 48},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 4},
                      {"head_dim", 128},
                      {"num_experts", 128},
                      {"num_experts_per_tok", 8},
                      {"vocab_size", 151936},
                      {"max_position_embeddings", 262144},
                      {"tie_word_embeddings", false},
                      {"torch_dtype", "bfloat16"},
                      {"quantization", {{"group_size", 64}, {"bits", 4}}}};
  auto plain = BuildJson(j, {.compact_repeats = true});
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(ComputeTotals(*plain).stored_bytes, 17174622208u);
  for (int i = 0; i < 48; ++i) {
    j["quantization"][fmt::format("model.layers.{}.mlp.gate", i)] = {{"group_size", 64},
                                                                     {"bits", 8}};
  }
  auto m = BuildJson(j, {.compact_repeats = true});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 17180913664u);
}

// mlx-community/gpt-oss-20b-MXFP4-Q8 @773a7da77e569019bb0fd17a554b263738d669a3: 12076119168 bytes
// (the same exo test). openai/gpt-oss-20b's fields; the block: 8-bit affine group 64, and the
// experts (mlx-lm's gpt_oss.py SwitchGLU: mlp.experts.{gate,up,down}_proj) mxfp4. The fused
// gate_up_proj is looked up as experts.gate_proj: uint32 [32, 5760, 2880 x 4 / 32] and one uint8
// scale per 32 inputs, no biases.
TEST(MlxQuantization, MlxCommunityGptOssMatchesItsStoredSize) {
  nlohmann::json layer_types = nlohmann::json::array();
  for (int i = 0; i < 24; ++i)
    layer_types.push_back(i % 2 ? "full_attention" : "sliding_attention");
  nlohmann::json j = {{"model_type", "gpt_oss"},
                      {"architectures", {"GptOssForCausalLM"}},
                      {"hidden_size", 2880},
                      {"intermediate_size", 2880},
                      {"num_hidden_layers", 24},
                      {"num_attention_heads", 64},
                      {"num_key_value_heads", 8},
                      {"head_dim", 64},
                      {"num_local_experts", 32},
                      {"num_experts_per_tok", 4},
                      {"vocab_size", 201088},
                      {"sliding_window", 128},
                      {"layer_types", layer_types},
                      {"max_position_embeddings", 131072},
                      {"tie_word_embeddings", false},
                      {"torch_dtype", "bfloat16"},
                      {"quantization", {{"group_size", 64}, {"bits", 8}, {"mode", "affine"}}}};
  for (int i = 0; i < 24; ++i) {
    for (const char* proj : {"gate_proj", "up_proj", "down_proj"}) {
      j["quantization"][fmt::format("model.layers.{}.mlp.experts.{}", i, proj)] = {
          {"group_size", 32}, {"bits", 4}, {"mode", "mxfp4"}};
    }
  }
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 12076119168u);
  testing::ExpectShape(*m, "model.layers.0.mlp.experts.gate_up_proj.weight", {32, 5760, 360});
  testing::ExpectShape(*m, "model.layers.0.mlp.experts.gate_up_proj.scales", {32, 5760, 90});
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mlp.experts.down_proj.biases"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mlp.router.biases")->dtype, Dtype::kBF16);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
