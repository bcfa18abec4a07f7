// Hand-counted tests for the Qwen omni builders (qwen2_5_omni.cc, qwen3_omni_moe.cc) and the
// real releases' stored bytes.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"
#include "model/arch/omni_test_configs.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

uint64_t StoredTensors(const Model& m) {
  uint64_t n = 0;
  for (const auto& t : m.tensors) n += t.stored ? 1 : 0;
  return n;
}

// The thinker's tiny vision tower (depth 1, hidden 4, 2 heads, patch 2, no merge, one channel)
// and audio encoder (one layer, d_model 4, 3 mel bins) of both Omni generations; Qwen3-Omni adds
// its own keys to each.
nlohmann::json TinyOmniVision() {
  return {{"depth", 1},
          {"hidden_size", 4},
          {"intermediate_size", 6},
          {"num_heads", 2},
          {"out_hidden_size", 8},
          {"patch_size", 2},
          {"temporal_patch_size", 1},
          {"spatial_merge_size", 1},
          {"in_channels", 1}};
}

nlohmann::json TinyOmniAudio() {
  return {{"num_mel_bins", 3},    {"d_model", 4},
          {"encoder_layers", 1},  {"encoder_attention_heads", 2},
          {"encoder_ffn_dim", 6}, {"max_source_positions", 5},
          {"output_dim", 8}};
}

nlohmann::json TinyQwen25Omni() {
  nlohmann::json text = {{"vocab_size", 10},
                         {"hidden_size", 8},
                         {"num_hidden_layers", 2},
                         {"num_attention_heads", 2},
                         {"num_key_value_heads", 1},
                         {"intermediate_size", 12},
                         {"max_position_embeddings", 16},
                         {"hidden_act", "silu"},
                         {"tie_word_embeddings", false}};
  auto vision = TinyOmniVision();
  auto audio = TinyOmniAudio();
  nlohmann::json talker = {
      {"vocab_size", 6},          {"embedding_size", 8},    {"hidden_size", 4},
      {"intermediate_size", 5},   {"num_hidden_layers", 1}, {"num_attention_heads", 2},
      {"num_key_value_heads", 1}, {"head_dim", 2},          {"max_position_embeddings", 16},
      {"hidden_act", "silu"}};
  nlohmann::json dit = {{"hidden_size", 4},
                        {"num_hidden_layers", 1},
                        {"num_attention_heads", 1},
                        {"head_dim", 2},
                        {"ff_mult", 2},
                        {"emb_dim", 2},
                        {"num_embeds", 3},
                        {"mel_dim", 2},
                        {"enc_emb_dim", 1},
                        {"enc_dim", 2},
                        {"enc_channels", {4, 4, 6}},
                        {"enc_kernel_sizes", {3, 1, 1}},
                        {"enc_dilations", {1, 1, 1}},
                        {"enc_attention_channels", 2},
                        {"enc_res2net_scale", 2},
                        {"enc_se_channels", 2}};
  nlohmann::json bigvgan = {{"mel_dim", 2},
                            {"upsample_initial_channel", 4},
                            {"resblock_kernel_sizes", {3}},
                            {"resblock_dilation_sizes", {{1, 3, 5}}},
                            {"upsample_rates", {2}},
                            {"upsample_kernel_sizes", {4}}};
  return {{"model_type", "qwen2_5_omni"},
          {"architectures", {"Qwen2_5OmniModel"}},
          {"torch_dtype", "bfloat16"},
          {"thinker_config",
           {{"text_config", text}, {"vision_config", vision}, {"audio_config", audio}}},
          {"talker_config", talker},
          {"token2wav_config", {{"dit_config", dit}, {"bigvgan_config", bigvgan}}}};
}

// Thinker text (qwen2): embed 10x8 = 80; per layer norms 16, q 8x8 + 8 = 72, k and v 8x4 + 4 =
// 36 each, o 64, MLP 3x8x12 = 288: 512; x2 + norm 8 + lm_head 80 = 1192.
// Vision (q/k/v split): patch Conv3d [4, 1, 1, 2, 2] = 16 (no bias); block: RMSNorms 4 + 4, q, k,
// v 4x4 + 4 = 20 each, proj 20, gate and up 4x6 + 6 = 30 each, down 6x4 + 4 = 28: 176; merger:
// ln_q 4, mlp.0 4x4 + 4 = 20, mlp.2 4x8 + 8 = 40: 64. Vision 256.
// Audio: conv1 [4, 3, 3] + 4 = 40, conv2 [4, 4, 3] + 4 = 52, audio_bos_eos_token 2x8 = 16;
// layer: k 16, v, q, out 20 each, LayerNorms 8 + 8, fc1 30, fc2 28: 150; ln_post 8, proj 40.
// Audio 306 (+ the stored positional_embedding buffer [5, 4] = 20).
// Talker: thinker_to_talker_proj 8x4 + 4 = 36, embed_tokens 6x8 = 48; layer: norms 4 + 4, q
// 4x4 + 4 = 20, k and v 4x2 + 2 = 10 each, o 16, MLP 3x4x5 = 60: 124; norm 4, codec_head 24.
// Talker 236.
// DiT: time_mlp 256x4 + 4 = 1028 and 4x4 + 4 = 20; codec_embed 4x2 = 8; input proj
// (2 + 2 + 1 + 2) x 4 + 4 = 32; ECAPA: blocks.0 [4, 2, 3] + 4 = 28; blocks.1: tdnn1 16 + 4,
// res2net [2, 2, 1] + 2 = 6, tdnn2 20, se conv1 [2, 4, 1] + 2 = 10, conv2 [4, 2, 1] + 4 = 12: 68;
// mfa [6, 6, 1] + 6 = 42, asp.tdnn [2, 18, 1] + 2 = 38, asp.conv [6, 2, 1] + 6 = 18, fc
// [2, 12, 1] + 2 = 26: 220; block: attn_norm 4x24 + 24 = 120, to_q/k/v 4x2 + 2 = 10 each,
// to_out 2x4 + 4 = 12, ff 4x8 + 8 = 40 and 8x4 + 4 = 36: 238; norm_out 40, proj_out 10. DiT 1596.
// BigVGAN: conv_pre [4, 2, 7] + 4 = 60, ups.0.0 [4, 2, 4] + 2 = 34, resblock (2 channels, kernel
// 3): 6 convs of 12 + 2 = 84 and 6 SnakeBeta 4 = 24: 108; activation_post 4, conv_post [1, 2, 7]
// = 14. BigVGAN 220. Stored buffers: 7 activations x 2 filters x 12 = 168 + DiT inv_freq 1.
// Parameters 1192 + 256 + 306 + 236 + 1596 + 220 = 3806. Stored bytes: (1990 + 20) x 2
// (bfloat16) + (1816 + 169) x 4 (token2wav float32) = 4020 + 7940 = 11960.
TEST(QwenOmniBuilder, Qwen25TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyQwen25Omni(), 3806u, 11960u);
  ASSERT_TRUE(m);
  arch_test::ExpectComponentParameters(*m, {{"language_model", 1192u},
                                            {"vision_tower", 256u},
                                            {"audio_tower", 306u},
                                            {"talker", 236u},
                                            {"token2wav", 1816u}});
  testing::ExpectShape(*m, "thinker.visual.blocks.0.attn.k.weight", {4, 4});
  testing::ExpectShape(*m, "talker.model.embed_tokens.weight", {6, 8});
  testing::ExpectShape(*m, "token2wav.code2wav_bigvgan_model.ups.0.0.weight", {4, 2, 4});
  EXPECT_EQ(FindTensor(*m, "token2wav.code2wav_dit_model.proj_out.weight")->dtype, Dtype::kF32);
  EXPECT_EQ(FindTensor(*m, "thinker.lm_head.weight")->dtype, Dtype::kBF16);
  EXPECT_EQ(FindTensor(*m, "thinker.audio_tower.layers.0.self_attn.k_proj.bias"), nullptr);
  EXPECT_EQ(m->hp.text_config_key, "thinker_config.text_config");
  EXPECT_EQ(m->hp.num_layers, 2u);
  // Without audio output: the thinker alone.
  auto j = TinyQwen25Omni();
  j["enable_audio_output"] = false;
  auto thinker = testing::BuildCounted(j, 1192u + 256 + 306);
  ASSERT_TRUE(thinker);
  EXPECT_EQ(FindTensor(*thinker, "talker.codec_head.weight"), nullptr);
}

// Qwen/Qwen2.5-Omni-7B: the index's total_size exactly, and 10,732,225,408 parameters
// (thinker 8,931,813,888: text 7,615,616,512 as Qwen2.5-7B, vision 676,550,144 as Qwen2.5-VL-7B's
// tower, audio 639,647,232; talker 1,351,360,256; token2wav 449,051,264 in float32).
TEST(QwenOmniBuilder, Qwen25Omni7BMatchesItsIndex) {
  auto m = arch_test::Build(testing::kQwen25Omni7BConfig);
  ASSERT_TRUE(m) << m.error().message;
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.stored_bytes, 22366403936u);
  EXPECT_EQ(t.parameters, 10732225408u);
  arch_test::ExpectComponentParameters(*m, {{"language_model", 7615616512u},
                                            {"vision_tower", 676550144u},
                                            {"talker", 1351360256u}});
  testing::ExpectShape(*m, "token2wav.code2wav_dit_model.text_embed.codec_embed.weight",
                       {8194, 512});
  testing::ExpectShape(*m, "token2wav.code2wav_dit_model.rotary_embed.inv_freq", {32});
  testing::ExpectShape(*m, "token2wav.code2wav_bigvgan_model.conv_post.weight", {1, 24, 7});
  EXPECT_EQ(m->hp.hidden_size, 3584u);
}

TEST(QwenOmniBuilder, Qwen25HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(
      TinyQwen25Omni(), {{"token2wav_config", {{"dit_config", {{"enc_kernel_sizes", {3, 1}}}}}}},
      "enc_kernel_sizes");
  testing::ExpectPatchRejected(
      TinyQwen25Omni(),
      {{"token2wav_config", {{"bigvgan_config", {{"upsample_rates", {2, 2, 2}}}}}}},
      "upsample_initial_channel");
  auto j = TinyQwen25Omni();
  j["token2wav_config"]["bigvgan_config"]["resblock_dilation_sizes"] = {{1, 3}};
  testing::ExpectError(j, "resblock_dilation_sizes");
  testing::ExpectPatchRejected(
      TinyQwen25Omni(), {{"thinker_config", {{"audio_config", {{"encoder_attention_heads", 3}}}}}},
      "encoder_attention_heads");
  testing::ExpectPatchRejected(TinyQwen25Omni(), {{"talker_config", {{"embedding_size", "wide"}}}},
                               "embedding_size");
  testing::ExpectPatchRejected(TinyQwen25Omni(), {{"thinker_config", {{"text_config", 7}}}},
                               "text_config");
  testing::ExpectPatchRejected(
      TinyQwen25Omni(),
      {{"thinker_config",
        {{"vision_config", {{"depth", uint64_t{1} << 40}, {"hidden_size", uint64_t{1} << 40}}}}}},
      "");
  testing::ExpectPatchRejected(
      TinyQwen25Omni(),
      {{"token2wav_config", {{"dit_config", {{"num_hidden_layers", uint64_t{1} << 39}}}}}}, "");
}

nlohmann::json TinyQwen3Omni() {
  nlohmann::json text = {{"vocab_size", 10},
                         {"hidden_size", 8},
                         {"num_hidden_layers", 2},
                         {"num_attention_heads", 2},
                         {"num_key_value_heads", 1},
                         {"head_dim", 4},
                         {"intermediate_size", 12},
                         {"moe_intermediate_size", 3},
                         {"num_experts", 2},
                         {"num_experts_per_tok", 1},
                         {"mlp_only_layers", {uint64_t{1}}},
                         {"tie_word_embeddings", false}};
  auto vision = TinyOmniVision();
  vision["num_position_embeddings"] = 3;
  vision["deepstack_visual_indexes"] = {0};
  auto audio = TinyOmniAudio();
  audio["downsample_hidden_size"] = 2;
  nlohmann::json talker_text = {{"vocab_size", 6},
                                {"hidden_size", 4},
                                {"num_hidden_layers", 1},
                                {"num_attention_heads", 2},
                                {"num_key_value_heads", 1},
                                {"head_dim", 2},
                                {"intermediate_size", 5},
                                {"moe_intermediate_size", 3},
                                {"num_experts", 2},
                                {"num_experts_per_tok", 1},
                                {"shared_expert_intermediate_size", 3}};
  nlohmann::json predictor = {
      {"vocab_size", 5},        {"hidden_size", 4},         {"intermediate_size", 6},
      {"num_hidden_layers", 1}, {"num_attention_heads", 2}, {"num_key_value_heads", 1},
      {"head_dim", 2},          {"num_code_groups", 3}};
  nlohmann::json code2wav = {{"hidden_size", 4},         {"num_hidden_layers", 1},
                             {"num_attention_heads", 2}, {"num_key_value_heads", 2},
                             {"intermediate_size", 5},   {"codebook_size", 3},
                             {"num_quantizers", 2},      {"decoder_dim", 8},
                             {"upsample_rates", {2}},    {"upsampling_ratios", {2}}};
  return {{"model_type", "qwen3_omni_moe"},
          {"architectures", {"Qwen3OmniMoeForConditionalGeneration"}},
          {"dtype", "float32"},
          {"thinker_config",
           {{"text_config", text}, {"vision_config", vision}, {"audio_config", audio}}},
          {"talker_config",
           {{"text_config", talker_text},
            {"code_predictor_config", predictor},
            {"thinker_hidden_size", 8}}},
          {"code2wav_config", code2wav}};
}

// Thinker text (qwen3_moe): embed 80; attention per layer: input norm 8, q 64, k and v 32 each,
// o 64, q_norm and k_norm 4 each: 208, + post norm 8; layer 0 sparse: router 2x8 = 16 + 2 experts
// x 3x8x3 = 144; layer 1 dense (mlp_only_layers): 3x8x12 = 288. 80 + 376 + 504 + norm 8 +
// lm_head 80 = 1048.
// Vision: patch Conv3d 16 + bias 4, pos_embed 3x4 = 12; block: LayerNorms 8 + 8, qkv 4x12 + 12 =
// 60, proj 20, linear_fc1 30, linear_fc2 28: 154; merger: ln_q 8, mlp.0 20, mlp.2 40: 68;
// merger_list.0: the same (its ln_q over the merged width, 4): 68. Vision 322.
// Audio: layer: k, v, q, out 20 each, LayerNorms 8 + 8, fc1 30, fc2 28: 154; ln_post 8;
// conv2d1 [2, 1, 3, 3] + 2 = 20, conv2d2 and conv2d3 [2, 2, 3, 3] + 2 = 38 each; conv_out
// [4, 2 x 1] = 8 (mel 3 -> 1 after three stride-2 convs); proj1 20, proj2 40. Audio 326.
// Talker: codec_embedding 6x4 = 24; layer: input norm 4, q 4x4 = 16, k and v 4x2 = 8 each, o 16,
// q_norm and k_norm 2 each, router 2x4 = 8, experts 2 x 3x4x3 = 72, shared expert 3x4x3 = 36,
// shared_expert_gate 4, post norm 4: 180; norm 4; text_projection and hidden_projection 8x5 + 5 +
// 5x4 + 4 = 69 each; codec_head 24. Code predictor: layer: norms 4 + 4, q 16, k and v 8 each, o
// 16, q/k norms 2 + 2, MLP 3x4x6 = 72: 132; norm 4; 2 codec embeddings 5x4 and 2 heads 4x5: 80.
// Talker 24 + 180 + 4 + 138 + 24 + 216 = 586.
// Code2wav: pre_transformer layer: norms 4 + 4, q, k, v, o 4x4 = 16 each, MLP 3x4x5 = 60, layer
// scales 4 + 4: 140; norm 4; code_embedding (3 x 2) x 4 = 24; upsample: ConvTranspose1d
// [4, 4, 2] + 4 = 36, dwconv [4, 1, 7] + 4 = 32, norm 8, pwconv1 4x16 + 16 = 80, pwconv2 16x4 +
// 4 = 68, gamma 4: 228; decoder.0 [8, 4, 7] + 8 = 232; decoder.1: SnakeBeta 16, ConvTranspose1d
// [8, 4, 4] + 4 = 132, 3 residual units of SnakeBeta 8 + conv [4, 4, 7] + 4 = 116 + SnakeBeta 8 +
// conv [4, 4, 1] + 4 = 20: 456; decoder.2 SnakeBeta 8; decoder.3 [1, 4, 7] + 1 = 29. Code2wav
// 1269.
// Parameters 1048 + 322 + 326 + 586 + 1269 = 3551; float32: 14204 bytes.
TEST(QwenOmniBuilder, Qwen3TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyQwen3Omni(), 3551u, 14204u);
  ASSERT_TRUE(m);
  arch_test::ExpectComponentParameters(*m, {{"language_model", 1048u},
                                            {"vision_tower", 322u},
                                            {"audio_tower", 326u},
                                            {"talker", 586u},
                                            {"code2wav", 1269u}});
  EXPECT_NE(FindTensor(*m, "thinker.model.layers.0.mlp.experts.1.down_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "thinker.visual.merger_list.0.ln_q.bias"), nullptr);
  EXPECT_NE(FindTensor(*m, "talker.model.layers.0.mlp.shared_expert_gate.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "talker.code_predictor.lm_head.1.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "talker.code_predictor.model.embed_tokens.weight"), nullptr);
  testing::ExpectShape(*m, "code2wav.decoder.1.block.1.conv.weight", {8, 4, 4});
  testing::ExpectShape(*m, "code2wav.upsample.0.1.dwconv.conv.weight", {4, 1, 7});
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_TRUE(m->hp.layers[0].moe);
  EXPECT_FALSE(m->hp.layers[1].moe);
  // The Thinking and Captioner releases: no audio output, the thinker alone.
  auto j = TinyQwen3Omni();
  j["enable_audio_output"] = false;
  j.erase("talker_config");
  j.erase("code2wav_config");
  auto thinker = testing::BuildCounted(j, 1048u + 322 + 326);
  ASSERT_TRUE(thinker);
}

// Qwen/Qwen3-Omni-30B-A3B-Instruct: the released weight listing's 28,010 tensors and
// 35,259,818,545 parameters, bfloat16 (thinker text 30,532,646,912, vision 538,631,408, audio
// 647,927,168; talker 3,324,596,480 with its code predictor; code2wav 216,016,577). Without audio
// output (Qwen3-Omni-30B-A3B-Thinking): the thinker's 31,719,205,488.
TEST(QwenOmniBuilder, Qwen3Omni30BMatchesTheReleasedWeights) {
  auto m = arch_test::Build(testing::kQwen3Omni30BConfig);
  ASSERT_TRUE(m) << m.error().message;
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 35259818545u);
  EXPECT_EQ(t.stored_bytes, 2 * 35259818545u);
  EXPECT_EQ(StoredTensors(*m), 28010u);
  arch_test::ExpectComponentParameters(*m, {{"language_model", 30532646912u},
                                            {"talker", 3324596480u},
                                            {"code2wav", 216016577u}});
  testing::ExpectShape(*m, "talker.model.layers.19.mlp.experts.127.down_proj.weight", {1024, 384});
  testing::ExpectShape(*m, "thinker.audio_tower.conv_out.weight", {1280, 7680});
  testing::ExpectShape(*m, "code2wav.code_embedding.weight", {32768, 1024});
  EXPECT_EQ(m->hp.num_experts, 128u);
  auto j = nlohmann::json::parse(testing::kQwen3Omni30BConfig);
  j["enable_audio_output"] = false;
  auto thinking = testing::BuildCounted(j, 31719205488u);
  ASSERT_TRUE(thinking);
}

TEST(QwenOmniBuilder, Qwen3HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(
      TinyQwen3Omni(),
      {{"talker_config", {{"text_config", {{"shared_expert_intermediate_size", nullptr}}}}}},
      "shared_expert_intermediate_size");
  testing::ExpectPatchRejected(
      TinyQwen3Omni(), {{"code2wav_config", {{"upsample_rates", {2, 2, 2, 2}}}}}, "decoder_dim");
  testing::ExpectPatchRejected(
      TinyQwen3Omni(), {{"code2wav_config", {{"upsampling_ratios", "two"}}}}, "upsampling_ratios");
  testing::ExpectPatchRejected(
      TinyQwen3Omni(),
      {{"talker_config", {{"code_predictor_config", {{"num_code_groups", uint64_t{1} << 30}}}}}},
      "num_code_groups");
  testing::ExpectPatchRejected(
      TinyQwen3Omni(), {{"thinker_config", {{"vision_config", {{"num_heads", 3}}}}}}, "num_heads");
  testing::ExpectPatchRejected(
      TinyQwen3Omni(),
      {{"thinker_config", {{"text_config", {{"num_experts", uint64_t{1} << 30}}}}}}, "");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
