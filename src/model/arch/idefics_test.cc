// IDEFICS v1 builder: a tiny config counted by hand, ties, heads, hostile configs, and the 80B
// and 9B configurations (reconstructed, see Idefics80bAnd9bParameterCounts) against the
// reference formula and the model cards' 80B / 9B.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using arch_test::ComponentParameters;
using testing::BuildJson;
using testing::FindTensor;

// Decoder: vocab 10 (+2 additional), hidden 8, 2 heads of 4, intermediate 12, 2 layers, one
// gated cross-attention layer (interval 2) with q/k RMSNorms. Vision: embed_dim 6, 1 layer,
// 2 heads, intermediate 8, image 4, patch 2 (4 patches, 5 positions). Perceiver: depth 1,
// 2 heads of 3, 4 latents, q/k LayerNorms.
nlohmann::json Tiny() {
  return testing::TinyDecoderWith(
      "idefics", {{"architectures", {"IdeficsForVisionText2Text"}},
                  {"additional_vocab_size", 2},
                  {"cross_layer_interval", 2},
                  {"qk_layer_norms", true},
                  {"alpha_type", "float"},
                  {"use_resampler", true},
                  {"vision_config",
                   {{"embed_dim", 6},
                    {"intermediate_size", 8},
                    {"num_hidden_layers", 1},
                    {"num_attention_heads", 2},
                    {"image_size", 4},
                    {"patch_size", 2}}},
                  {"perceiver_config",
                   {{"resampler_depth", 1},
                    {"resampler_n_heads", 2},
                    {"resampler_head_dim", 3},
                    {"resampler_n_latents", 4},
                    {"qk_layer_norms_perceiver", true}}},
                  {"num_key_value_heads", nullptr},
                  {"max_position_embeddings", nullptr}});
}

TEST(IdeficsBuilder, TinyConfigCountedByHand) {
  auto m = BuildJson(Tiny());
  ASSERT_TRUE(m) << m.error().message;
  // Vision (CLIP-shaped, as ClipBuilder's tower): class 6, patch conv 6*3*2*2 = 72 (no bias),
  // position 5*6 = 30, pre_layrnorm 12, layer: q/k/v/out 4*(36+6) = 168, two norms 24,
  // fc1 6*8+8 = 56, fc2 8*6+6 = 54 (302), post_layernorm 12: 434.
  EXPECT_EQ(ComponentParameters(*m, "vision_model"), 434u);
  // Perceiver (E = 6, inner 2*3 = 6, MLP 4*6 = 24): latents 4*6 = 24; block: context and latents
  // LayerNorms 12 + 12, q/k LayerNorm(3) 6 + 6, q/k/v 3*36 = 108, output_proj 36, ln 12,
  // fc 24*6 = 144, c_proj 144 (480); layer_norm 12: 516.
  EXPECT_EQ(ComponentParameters(*m, "perceiver_resampler"), 516u);
  // Cross layer: alphas 1 + 1, q 64, k 8*6 = 48, v 48, o 64, q/k RMSNorm(4) 8, mlp gate/down/up
  // 3*96 = 288, two norms 16: 538.
  EXPECT_EQ(ComponentParameters(*m, "gated_cross_attn_layers"), 538u);
  // Language model: embed 80 + additional 16, layer: q/k/v/o 4*64 = 256, mlp 288, norms 16
  // (560) x 2, norm 8, lm_head 80 + additional_fc 16: 96 + 1120 + 8 + 96 = 1320.
  EXPECT_EQ(ComponentParameters(*m, "language_model"), 1320u);
  const auto totals = ComputeTotals(*m);
  EXPECT_EQ(totals.parameters, 434u + 516 + 538 + 1320);
  EXPECT_EQ(totals.head_parameters, 96u);
  EXPECT_EQ(totals.stored_bytes, 2808u * 4);
  // Buffers: vision position_ids 5 int64 = 40 bytes; three IdeficsAttention modules (two self,
  // one cross), each inv_freq 2 float32 + cos/sin_cached 2048 x 4 float32: 8 + 2*32768 bytes.
  EXPECT_EQ(totals.buffer_bytes, 40u + 3 * (8 + 2 * 32768));
  EXPECT_EQ(totals.resident_bytes, 2808u * 4 + totals.buffer_bytes);
  ASSERT_NE(FindTensor(*m, "model.gated_cross_attn_layers.0.cross_attn.k_proj.weight"), nullptr);
  testing::ExpectShape(*m, "model.gated_cross_attn_layers.0.cross_attn.k_proj.weight", {8, 6});
  testing::ExpectShape(*m, "model.gated_cross_attn_layers.0.alpha_dense", {1});
  EXPECT_NE(FindTensor(*m, "model.perceiver_resampler.blocks.0.1.c_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.embed_tokens.additional_embedding.weight"), nullptr);
  EXPECT_TRUE(FindTensor(*m, "lm_head.additional_fc.weight")->in_head);
  EXPECT_EQ(FindTensor(*m, "model.vision_model.embeddings.patch_embedding.bias"), nullptr);

  // hp: the two decoder layers (self-attention caches); layer 0 follows the cross block, whose
  // image tokens are the 4 latents; logits are vocab + additional wide.
  const auto& hp = m->hp;
  EXPECT_EQ(hp.vocab_size, 12u);
  EXPECT_EQ(hp.num_layers, 2u);
  ASSERT_EQ(hp.layers.size(), 2u);
  testing::ExpectLayer(hp, 0, {.cross_attention = true});
  testing::ExpectLayer(hp, 1,
                       {.attention = AttentionKind::kFull,
                        .num_kv_heads = 2u,
                        .head_dim_k = 4u,
                        .intermediate_size = 12u,
                        .cross_attention = false});
  EXPECT_FALSE(hp.is_encoder_decoder);  // no cross K/V cache is charged (none is kept)
  EXPECT_EQ(hp.encoder_max_positions, 4u);
}

TEST(IdeficsBuilder, TiesVectorAlphasAndNoResampler) {
  auto j = Tiny();
  j["tie_word_embeddings"] = true;
  j["alpha_type"] = "vector";
  j["use_resampler"] = false;
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  // Tied head counted once: 2808 - 96 (head) - 516 (perceiver) + 2 * (8 - 1) (vector alphas).
  const auto totals = ComputeTotals(*m);
  EXPECT_EQ(totals.parameters, 2808u - 96 - 516 + 14);
  const Tensor* extra = FindTensor(*m, "lm_head.additional_fc.weight");
  ASSERT_NE(extra, nullptr);
  EXPECT_EQ(extra->tied_to, "model.embed_tokens.additional_embedding.weight");
  EXPECT_FALSE(extra->stored);
  testing::ExpectShape(*m, "model.gated_cross_attn_layers.0.alpha_cross_attn", {1, 1, 8});
  EXPECT_EQ(m->hp.encoder_max_positions, 5u);  // patches + class token
}

TEST(IdeficsBuilder, BaseModelHasNoHeadAndAccelerateCachesAreFloat32) {
  auto j = Tiny();
  j["torch_dtype"] = "bfloat16";
  auto base = BuildJson(j, {.head_class = "AutoModel"});
  ASSERT_TRUE(base) << base.error().message;
  EXPECT_EQ(FindTensor(*base, "lm_head.weight"), nullptr);
  EXPECT_EQ(ComputeTotals(*base).parameters, 2808u - 96);
  // The rotary caches take torch's default dtype: the checkpoint's under from_pretrained,
  // float32 under accelerate's from_config (4.42 convention).
  const char* cos = "model.layers.0.self_attn.rotary_emb.cos_cached";
  EXPECT_EQ(FindTensor(*base, cos)->dtype, Dtype::kBF16);
  BuildOptions accelerate_options;
  accelerate_options.buffers = BufferConvention::kTransformers442;
  auto old = BuildJson(j, accelerate_options);
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_EQ(FindTensor(*old, cos)->dtype, Dtype::kF32);
  EXPECT_EQ(FindTensor(*old, "model.layers.0.self_attn.rotary_emb.inv_freq")->dtype, Dtype::kF32);
  auto bad = BuildJson(j, {.head_class = "AutoModelForSequenceClassification"});
  testing::ExpectErrorContains(bad, "IdeficsForSequenceClassification");
}

TEST(IdeficsBuilder, HostileConfigsNameTheField) {
  testing::ExpectHostileRejected("idefics");
  testing::ExpectPatchRejected(Tiny(), {{"cross_layer_interval", 0}}, "cross_layer_interval");
  testing::ExpectPatchRejected(Tiny(), {{"alpha_type", "matrix"}}, "alpha_type");
  testing::ExpectPatchRejected(Tiny(), {{"alpha_initializer", "xavier"}}, "alpha_initializer");
  testing::ExpectPatchRejected(Tiny(), {{"vision_config", "clip"}}, "vision_config");
  testing::ExpectPatchRejected(Tiny(), {{"perceiver_config", {{"resampler_n_latents", -3}}}},
                               "resampler_n_latents");
  // not divisible by its 2 heads
  testing::ExpectPatchRejected(Tiny(), {{"vision_config", {{"embed_dim", 7}}}},
                               "num_attention_heads");
  // far above the tensor cap: fails at once
  testing::ExpectPatchRejected(Tiny(), {{"num_hidden_layers", uint64_t{1} << 40}},
                               "num_hidden_layers");
  testing::ExpectPatchRejected(Tiny(),
                               {{"vision_config", {{"num_hidden_layers", uint64_t{1} << 40}}}},
                               "vision_config: \"num_hidden_layers");
  testing::ExpectPatchRejected(
      Tiny(), {{"perceiver_config", {{"resampler_depth", uint64_t{1} << 40}}}}, "resampler_depth");
  testing::ExpectPatchRejected(
      Tiny(),
      {{"perceiver_config",
        {{"resampler_head_dim", uint64_t{1} << 40}, {"resampler_n_heads", uint64_t{1} << 40}}}},
      "resampler_n_heads x resampler_head_dim");
}

// HuggingFaceM4/tiny-random-idefics, a real config.json (as printed by onnx_diagnostic's docs,
// transformers 4.51): vector alphas, interval 1, resampler, image 30 / patch 2, intermediate
// 11008 with hidden 16. Its legacy keys (ffn_dim, word_embed_proj_dim, ...) are ignored, as
// transformers ignores them.
TEST(IdeficsBuilder, TinyRandomIdeficsRealConfig) {
  auto m = arch_test::Build(R"({"additional_vocab_size": 2, "alpha_initializer": "ones",
    "alpha_type": "vector", "alphas_initializer_range": 0.0,
    "architectures": ["IdeficsForVisionText2Text"], "cross_layer_activation_function": "swiglu",
    "cross_layer_interval": 1, "dropout": 0.0, "ffn_dim": 64, "freeze_lm_head": false,
    "freeze_text_layers": false, "freeze_vision_layers": false, "hidden_act": "silu",
    "hidden_size": 16, "intermediate_size": 11008, "max_position_embeddings": 128,
    "model_type": "idefics", "num_attention_heads": 4, "num_hidden_layers": 2,
    "perceiver_config": {"model_type": "idefics_perciever", "qk_layer_norms_perceiver": false,
      "resampler_depth": 2, "resampler_head_dim": 8, "resampler_n_heads": 2,
      "resampler_n_latents": 16, "use_resampler": false},
    "qk_layer_norms": false, "rms_norm_eps": 1e-06, "tie_word_embeddings": false,
    "torch_dtype": "float16", "use_cache": true, "use_resampler": true,
    "vision_config": {"attention_dropout": 0.0, "embed_dim": 32, "hidden_act": "gelu",
      "image_size": 30, "intermediate_size": 37, "model_type": "idefics_vision",
      "num_attention_heads": 4, "num_channels": 3, "num_hidden_layers": 5, "patch_size": 2},
    "vocab_size": 32000, "word_embed_proj_dim": 16})");
  ASSERT_TRUE(m) << m.error().message;
  // Embeddings and head 2 x 32002 x 16 = 1,024,064; decoder layers 2 x (4 x 256 + 3 x 16 x 11008
  // + 32) = 1,058,880; cross layers 2 x (alphas 32 + q/o 512 + k/v 2 x 16 x 32 + MLP 528,384 +
  // norms 32) = 1,059,968; norm 16; vision (226 positions) 41,721; perceiver 21,440.
  arch_test::ExpectComponentParameters(*m, {{"vision_model", 41721u},
                                            {"perceiver_resampler", 21440u},
                                            {"gated_cross_attn_layers", 1059968u}});
  EXPECT_EQ(ComputeTotals(*m).parameters, 3206089u);
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 3206089u * 2);
  EXPECT_EQ(m->hp.encoder_max_positions, 16u);
  EXPECT_TRUE(m->hp.layers[1].cross_attention);
}

// idefics-80b(-instruct) and idefics-9b(-instruct). Their config.json files were not found in
// the public copies memfit can read, so these are reconstructed: IdeficsConfig's fields with the
// language models' dimensions (LLaMA-65B: hidden 8192, 80 layers, 64 heads, intermediate 22016;
// LLaMA-7B: 4096, 32, 32, 11008; vocab 32000 + 2 additional tokens), the vision tower of
// laion/CLIP-ViT-H-14 (embed_dim 1280, 32 layers, 16 heads, intermediate 5120, patch 14, 224
// px), the perceiver of IdeficsPerceiverConfig's defaults (6 blocks, 16 heads of 96, 64 latents)
// and cross-attention every 4 layers, as the model cards describe.
nlohmann::json Real(uint64_t hidden, uint64_t layers, uint64_t heads, uint64_t intermediate) {
  return {{"model_type", "idefics"}, {"architectures", {"IdeficsForVisionText2Text"}},
          {"torch_dtype", "bfloat16"}, {"vocab_size", 32000}, {"additional_vocab_size", 2},
          {"hidden_size", hidden}, {"intermediate_size", intermediate},
          {"num_hidden_layers", layers}, {"num_attention_heads", heads},
          {"cross_layer_interval", 4}, {"use_resampler", true}, {"qk_layer_norms", false},
          {"vision_config", {{"embed_dim", 1280}, {"intermediate_size", 5120},
                             {"num_hidden_layers", 32}, {"num_attention_heads", 16},
                             {"patch_size", 14}, {"image_size", 224}}},
          {"perceiver_config", {{"resampler_depth", 6}, {"resampler_n_heads", 16},
                                {"resampler_head_dim", 96}, {"resampler_n_latents", 64}}}};
}

// The reference formula, in the order of the modules.
uint64_t Formula(uint64_t h, uint64_t layers, uint64_t inter) {
  const uint64_t vocab = 32002, e = 1280;
  const uint64_t vision = e + e * 3 * 14 * 14 + 257 * e + 2 * e +
                          32 * (4 * (e * e + e) + 4 * e + (e * 5120 + 5120) + (5120 * e + e)) +
                          2 * e;
  // Perceiver block: three LayerNorms (context, latents, MLP), q/k/v/output, fc and c_proj.
  const uint64_t perceiver = 64 * e + 6 * (6 * e + 3 * 1536 * e + 1536 * e + 2 * e * 4 * e) + 2 * e;
  const uint64_t mlp = 3 * h * inter;
  const uint64_t decoder = layers * (4 * h * h + mlp + 2 * h);
  const uint64_t cross = layers / 4 * (2 + 2 * h * h + 2 * h * e + mlp + 2 * h);
  return 2 * vocab * h + vision + perceiver + decoder + cross + h;
}

TEST(IdeficsBuilder, Idefics80bAnd9bParameterCounts) {
  auto big = BuildJson(Real(8192, 80, 64, 22016));
  ASSERT_TRUE(big) << big.error().message;
  const uint64_t big_params = ComputeTotals(*big).parameters;
  EXPECT_EQ(big_params, Formula(8192, 80, 22016));
  EXPECT_EQ(big_params, 79967836200u);  // "80B"
  EXPECT_EQ(ComponentParameters(*big, "vision_model"), 630766080u);  // ViT-H/14: "630M"
  EXPECT_EQ(ComputeTotals(*big).stored_bytes, big_params * 2);
  EXPECT_EQ(ComponentParameters(*big, "gated_cross_attn_layers"), uint64_t{20} * 696270850);

  auto small = BuildJson(Real(4096, 32, 32, 11008));
  ASSERT_TRUE(small) << small.error().message;
  const uint64_t small_params = ComputeTotals(*small).parameters;
  EXPECT_EQ(small_params, Formula(4096, 32, 11008));
  EXPECT_EQ(small_params, 8929675280u);  // "9B"
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
