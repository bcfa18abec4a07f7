// Phi-4-multimodal: tiny configs of both layouts counted by hand, the real
// microsoft/Phi-4-multimodal-instruct config against the card's 5.6B, hostile configs.

#include <gtest/gtest.h>

#include "formats/hf_config_json.h"
#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

// The real vision adapter's target pattern (config.json "vision_lora" "layer").
constexpr const char* kVisionTargets =
    "layers.*((self_attn\\.(qkv_proj|o_proj))|(mlp\\.(gate_up|down)_proj))";

// The remote code's ConformerEncoder kwargs, tiny: attention_dim 4, 2 heads, linear_units 6, two
// blocks, 8 mel bins, time_reduction 4 (two halvings), NeMo channels 2, T5 bias distance 5.
nlohmann::json TinyConformer() {
  return {{"activation", "swish"},
          {"attention_dim", 4},
          {"attention_heads", 2},
          {"bias_in_glu", true},
          {"causal", true},
          {"chunk_size", -1},
          {"conv_activation", "swish"},
          {"conv_glu_type", "swish"},
          {"depthwise_multiplier", 1},
          {"depthwise_seperable_out_channel", 4},
          {"encoder_embedding_config", {{"input_size", 8}}},
          {"ext_pw_kernel_size", 1},
          {"ext_pw_out_channel", 4},
          {"input_layer", "nemo_conv"},
          {"input_size", 8},
          {"kernel_size", 3},
          {"left_chunk", 18},
          {"linear_units", 6},
          {"nemo_conv_settings", {{"conv_channels", 2}}},
          {"num_blocks", 2},
          {"relative_attention_bias_args", {{"t5_bias_max_distance", 5}, {"type", "t5"}}},
          {"time_reduction", 4}};
}

nlohmann::json TinyPhi4Mm() {
  auto j = TinyDecoder("phi4mm");
  j["architectures"] = {"Phi4MMForCausalLM"};
  j["tie_word_embeddings"] = true;
  j["vision_lora"] = {{"r", 2}, {"lora_alpha", 4}, {"layer", kVisionTargets}, {"dp", 0.0}};
  // The speech adapter here targets the attention only.
  j["speech_lora"] = {{"r", 3},
                      {"lora_alpha", 6},
                      {"layer", "(layers.*self_attn\\.(qkv|o)_proj)"},
                      {"dp", 0.01}};
  j["audio_processor"] = {{"name", "cascades"}, {"config", TinyConformer()}};
  j["embd_layer"] = {{"embedding_cls", "image_audio"},
                     {"audio_embd_layer",
                      {{"downsample_rate", 1}, {"embedding_cls", "audio"}, {"projection_cls", "mlp"}}},
                     {"image_embd_layer",
                      {{"crop_size", 448},
                       {"embedding_cls", "tune_image"},
                       {"hd_transform_order", "sub_glb"},
                       {"image_token_compression_cls", "avg_pool_2d"},
                       {"projection_cls", "mlp"},
                       {"use_hd_transform", true},
                       {"with_learnable_separator", true}}}};
  return j;
}

// Text (phi3, hidden 8, 2 heads and 1 KV head of 4, intermediate 12, vocab 10): embed 80; per
// layer input/post norms 16, qkv_proj [16, 8] 128, o_proj 64, gate_up_proj [24, 8] 192,
// down_proj [8, 12] 96 (496); two layers 992; norm 8: 1080; lm_head tied.
// Vision LoRA r 2 on the four projections: 2 x ((8 + 16) + (8 + 8) + (8 + 24) + (12 + 8)) = 184
// a layer, 368. Speech LoRA r 3 on qkv/o: 3 x (24 + 16) = 120 a layer, 240.
// Image tower, fixed by get_siglip_vision_model (hidden 1152, 27 layers, 448 px / 14 = 1024
// patches): patch conv 1152 x 3 x 14 x 14 + 1152 = 678,528, positions 1,179,648; per layer q/k/v/out
// 4 x (1152^2 + 1152) = 5,313,024, two LayerNorms 4,608, fc1 1152 x 4304 + 4304 = 4,962,512, fc2
// 4304 x 1152 + 1152 = 4,959,360 (15,239,504; x 27 = 411,466,608); post_layernorm 2,304; pooling
// head: probe 1,152, in_proj 3 x 1152^2 + 3,456 = 3,984,768, out_proj 1,328,256, layernorm 2,304,
// mlp 9,921,872 (15,238,352): 428,565,440. Image projection (avg_pool_2d: r = 1): glb_GN 1,152,
// sub_GN 1,152, img_projection.0 [8, 1152] + 8 = 9,224, img_projection.2 [8, 8] + 8 = 72: 11,600.
// Audio encoder: NeMo conv.0 [2, 1, 3, 3] + 2 = 20, conv.2 (depthwise) 20, conv.3 [2, 2, 1, 1] +
// 2 = 6; 8 mel bins -> 4 -> 2 features, out [4, 2 x 2] + 4 = 20 (66); T5 bias 10 x 2 heads = 20;
// per block two FFNs (LayerNorm 8, net.0.linear [12, 4] + 12 = 60, net.2 [4, 6] + 4 = 28: 96)
// 192, attention 4 x (16 + 4) = 80, conv module (LayerNorm 8, glu.b1/b2 8, glu conv [8, 4, 1] + 8
// = 40, ext_pw_conv_1d 20, dw_conv [4, 1, 3] + 4 = 16, pw_conv 20: 112), two LayerNorms 16 (400);
// two blocks 800: 886 parameters, plus the buffers global_mean/global_invstd (16 stored elements)
// and the non-persistent dev_type. Audio projection (mlp, speech and vision): 2 x ([8, 4] + 8 +
// [8, 8] + 8) = 224.
// Total 1080 + 368 + 240 + 428,565,440 + 11,600 + 886 + 224 = 428,579,838 parameters; float32
// stored: (428,579,838 + 16) x 4 = 1,714,319,416 bytes.
TEST(Phi4MmBuilder, TinyRemoteConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyPhi4Mm(), 428579838u, 1714319416u);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->architecture, "Phi4MMForCausalLM");
  arch_test::ExpectComponentParameters(*m, {{"language_model", 1080u},
                                            {"vision_lora", 368u},
                                            {"speech_lora", 240u},
                                            {"vision_tower", 428565440u},
                                            {"vision_projection", 11600u},
                                            {"audio_tower", 886u},
                                            {"audio_projection", 224u}});

  // PEFT's names: base_layer plus one lora_A/lora_B per adapter that targets the module.
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.qkv_proj.weight"), nullptr);
  testing::ExpectShape(*m, "model.layers.0.self_attn.qkv_proj.base_layer.weight", {16, 8});
  testing::ExpectShape(*m, "model.layers.1.mlp.down_proj.lora_A.vision.weight", {2, 12});
  testing::ExpectShape(*m, "model.layers.1.mlp.down_proj.lora_B.vision.weight", {8, 2});
  testing::ExpectShape(*m, "model.layers.0.self_attn.o_proj.lora_A.speech.weight", {3, 8});
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mlp.gate_up_proj.lora_A.speech.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->tied_to, "model.embed_tokens.weight");
  // Each remote attention owns a rotary_emb.
  EXPECT_EQ(FindTensor(*m, "model.layers.1.self_attn.rotary_emb.inv_freq")->kind,
            TensorKind::kNonPersistentBuffer);

  const std::string image = "model.embed_tokens_extend.image_embed.";
  EXPECT_EQ(FindTensor(*m, image + "glb_GN")->shape, (std::vector<uint64_t>{1, 1, 1152}));
  EXPECT_EQ(FindTensor(*m, image + "sub_GN")->shape, (std::vector<uint64_t>{1, 1, 1, 1152}));
  EXPECT_NE(FindTensor(*m, image + "img_processor.head.probe"), nullptr);
  EXPECT_NE(FindTensor(*m, image + "img_processor.encoder.layers.26.mlp.fc2.bias"), nullptr);
  EXPECT_EQ(FindTensor(*m, image + "img_processor.embeddings.position_ids"), nullptr);
  EXPECT_EQ(FindTensor(*m, image + "img_projection.0.weight")->shape,
            (std::vector<uint64_t>{8, 1152}));
  const std::string audio = "model.embed_tokens_extend.audio_embed.";
  EXPECT_EQ(FindTensor(*m, audio + "encoder.embed.out.weight")->shape,
            (std::vector<uint64_t>{4, 4}));
  EXPECT_EQ(FindTensor(*m, audio + "encoder.encoders.1.feed_forward_in.net.0.linear.weight")->shape,
            (std::vector<uint64_t>{12, 4}));
  EXPECT_EQ(FindTensor(*m, audio + "encoder.encoders.0.conv.dw_sep_conv_1d.dw_conv.weight")->shape,
            (std::vector<uint64_t>{4, 1, 3}));
  EXPECT_NE(FindTensor(*m, audio + "encoder.encoders.0.self_attn.linear_out.bias"), nullptr);
  EXPECT_EQ(FindTensor(*m, audio + "encoder.relative_attention_bias_layer.bias_values.weight")
                ->shape,
            (std::vector<uint64_t>{10, 2}));
  EXPECT_EQ(FindTensor(*m, audio + "encoder.encoder_embedding.global_mean")->kind,
            TensorKind::kBuffer);
  EXPECT_EQ(FindTensor(*m, audio + "encoder.dev_type")->kind, TensorKind::kNonPersistentBuffer);
  EXPECT_NE(FindTensor(*m, audio + "audio_projection.vision.2.weight"), nullptr);
  // The towers sit between the token embeddings and the decoder layers, as Phi4MMModel
  // registers them.
  EXPECT_EQ(m->tensors[0].name, "model.embed_tokens.weight");
  EXPECT_EQ(m->tensors[1].name, image + "glb_GN");
  EXPECT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->no_split_patterns, (std::vector<std::string>{"model.layers.*"}));
}

// A list of target names matches by name or dotted suffix (PEFT), a config without "embd_layer"
// builds no towers: 1080 + 368 (vision, all four) + speech on gate_up_proj/down_proj only,
// 3 x ((8 + 24) + (12 + 8)) = 156 a layer, 312: 1760.
TEST(Phi4MmBuilder, ListTargetsAndNoTowers) {
  auto j = TinyPhi4Mm();
  j.erase("embd_layer");
  j["speech_lora"]["layer"] = {"gate_up_proj", "mlp.down_proj"};
  auto m = testing::BuildCounted(j, 1760u);
  ASSERT_TRUE(m);
  EXPECT_NE(FindTensor(*m, "model.layers.0.mlp.gate_up_proj.lora_B.speech.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.o_proj.lora_A.speech.weight"), nullptr);
}

// microsoft/Phi-4-multimodal-instruct's config.json: NVIDIA/TensorRT-LLM's copy
// (tests/unittest/_torch/modeling/test_modeling_phi4mm.py@223b6a3a) with its shortened
// num_hidden_layers and num_blocks set back to the original 32 and 24 its comments give, and the
// adapters as the release's config states them (r 256 / alpha 512 and r 320 / alpha 640, as
// mlx-vlm's phi4mm README and public fine-tuning scripts quote them). rope_scaling's factor
// lists hold no tensors and are left out.
constexpr const char* kPhi4MultimodalInstruct = R"json({
  "architectures": ["Phi4MMForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "audio_processor": {
    "config": {
      "activation": "swish",
      "activation_checkpointing": {"interval": 1, "module": "transformer", "offload": false},
      "attention_dim": 1024, "attention_heads": 16, "batch_norm": false, "bias_in_glu": true,
      "causal": true, "chunk_size": -1, "cnn_layer_norm": true, "conv_activation": "swish",
      "conv_glu_type": "swish", "depthwise_multiplier": 1,
      "depthwise_seperable_out_channel": 1024, "dropout_rate": 0.0,
      "encoder_embedding_config": {"input_size": 80}, "ext_pw_kernel_size": 1,
      "ext_pw_out_channel": 1024, "input_layer": "nemo_conv", "input_size": 80,
      "kernel_size": 3, "left_chunk": 18, "linear_units": 1536,
      "nemo_conv_settings": {"conv_channels": 1024}, "num_blocks": 24,
      "relative_attention_bias_args": {"t5_bias_max_distance": 500, "type": "t5"},
      "time_reduction": 8
    },
    "name": "cascades"
  },
  "auto_map": {
    "AutoConfig": "configuration_phi4mm.Phi4MMConfig",
    "AutoModelForCausalLM": "modeling_phi4mm.Phi4MMForCausalLM",
    "AutoTokenizer": "Xenova/gpt-4o"
  },
  "bos_token_id": 199999,
  "embd_layer": {
    "audio_embd_layer": {
      "compression_rate": 8, "downsample_rate": 1, "embedding_cls": "audio",
      "enable_gradient_checkpointing": true, "projection_cls": "mlp",
      "use_conv_downsample": false, "use_qformer": false
    },
    "embedding_cls": "image_audio",
    "image_embd_layer": {
      "crop_size": 448, "embedding_cls": "tune_image", "enable_gradient_checkpointing": true,
      "hd_transform_order": "sub_glb", "image_token_compression_cls": "avg_pool_2d",
      "projection_cls": "mlp", "use_hd_transform": true, "with_learnable_separator": true
    }
  },
  "embd_pdrop": 0.0,
  "eos_token_id": 199999,
  "full_attn_mod": 1,
  "hidden_act": "silu",
  "hidden_size": 3072,
  "initializer_range": 0.02,
  "intermediate_size": 8192,
  "interpolate_factor": 1,
  "lm_head_bias": false,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "phi4mm",
  "num_attention_heads": 24,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "original_max_position_embeddings": 4096,
  "pad_token_id": 199999,
  "partial_rotary_factor": 0.75,
  "resid_pdrop": 0.0,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "sliding_window": 262144,
  "speech_lora": {
    "dp": 0.01,
    "layer": "((layers.*self_attn\\.(qkv|o)_proj)|(layers.*mlp\\.(gate_up|down)_proj))",
    "lora_alpha": 640, "r": 320
  },
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.46.1",
  "use_cache": true,
  "vision_lora": {
    "dp": 0.0,
    "layer": "layers.*((self_attn\\.(qkv_proj|o_proj))|(mlp\\.(gate_up|down)_proj))",
    "lora_alpha": 512, "r": 256
  },
  "vocab_size": 200064
})json";

// Text: embed 200064 x 3072 = 614,596,608; per layer qkv_proj 3072 x 5120, o_proj 3072^2,
// gate_up_proj 3072 x 16384, down_proj 8192 x 3072, two norms (100,669,440), x 32 =
// 3,221,422,080; norm 3,072: 3,836,021,760 (Phi-4-mini's 3.8B; lm_head tied). Vision LoRA r 256:
// 256 x (8192 + 6144 + 19456 + 11264) = 11,534,336 a layer, 369,098,752; speech LoRA r 320:
// 14,417,920 a layer, 461,373,440. Image tower 428,565,440 (see above) + projection 1,152 + 1,152
// + [3072, 1152] + 3072 + [3072, 3072] + 3072 = 12,984,576. Audio: NeMo 1024-channel convs
// 10,240 + 10,240 + 1,049,600 + 10,240 + 1,049,600, 80 mel bins -> 40 -> 20 -> 10, out
// [1024, 10240] + 1024 = 10,486,784 (12,616,704); T5 bias 1000 x 16 = 16,000; per block two FFNs
// 2 x (2,048 + 3,148,800 + 1,573,888), attention 4,198,400, conv module 4,206,592, two
// LayerNorms 4,096 (17,858,560; x 24 = 428,605,440): 441,238,144, plus 160 buffer elements;
// projections 2 x (3,148,800 + 9,440,256) = 25,178,112. Total 5,574,460,224 parameters (card:
// 5.6B; the Hub's safetensors count 5.57B); bfloat16 stored (5,574,460,224 + 160) x 2 =
// 11,148,920,768 bytes.
TEST(Phi4MmBuilder, RealConfigMatchesTheCard) {
  auto m = arch_test::Build(kPhi4MultimodalInstruct);
  ASSERT_TRUE(m) << m.error().message;
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 5574460224u);
  EXPECT_EQ(t.stored_bytes, 11148920768u);
  arch_test::ExpectComponentParameters(*m, {{"language_model", 3836021760u},
                                            {"vision_lora", 369098752u},
                                            {"speech_lora", 461373440u},
                                            {"vision_tower", 428565440u},
                                            {"vision_projection", 12984576u},
                                            {"audio_tower", 441238144u},
                                            {"audio_projection", 25178112u}});
  EXPECT_EQ(m->hp.num_layers, 32u);
  EXPECT_EQ(m->hp.num_kv_heads, 8u);
  EXPECT_EQ(m->hp.head_dim, 128u);
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kFull);  // window 262144 > 131072
  testing::ExpectShape(*m, "model.layers.31.mlp.gate_up_proj.lora_B.speech.weight", {16384, 320});
  // int(128 x 0.75) / 2
  testing::ExpectShape(*m, "model.layers.0.self_attn.rotary_emb.inv_freq", {48});
  EXPECT_EQ(FindTensor(*m,
                       "model.embed_tokens_extend.audio_embed.encoder.embed.out.weight")->shape,
            (std::vector<uint64_t>{1024, 10240}));
}

// transformers' layout of the same model (convert_phi4_multimodal_weights_to_hf.py's config):
// no adapters, renamed projections; text, towers and projections as counted above:
// 3,836,021,760 + 428,565,440 + 12,984,576 + 441,238,144 + 25,178,112 = 4,743,988,032
// parameters, (4,743,988,032 + 160) x 2 = 9,487,976,384 bytes.
nlohmann::json NativePhi4Multimodal() {
  auto j = nlohmann::json::parse(kPhi4MultimodalInstruct);
  for (const char* key : {"audio_processor", "embd_layer", "vision_lora", "speech_lora",
                          "auto_map", "transformers_version"}) {
    j.erase(key);
  }
  j["model_type"] = "phi4_multimodal";
  j["architectures"] = {"Phi4MultimodalForCausalLM"};
  j["vision_config"] = {{"model_type", "phi4_multimodal_vision"}, {"crop_size", 448},
                        {"hidden_size", 1152}, {"image_size", 448},
                        {"intermediate_size", 4304}, {"num_attention_heads", 16},
                        {"num_hidden_layers", 27}, {"patch_size", 14}, {"num_channels", 3}};
  j["audio_config"] = {{"model_type", "phi4_multimodal_audio"}, {"hidden_size", 1024},
                       {"num_attention_heads", 16}, {"intermediate_size", 1536},
                       {"num_blocks", 24}, {"input_size", 80}, {"time_reduction", 8},
                       {"nemo_conv_channels", 1024}, {"bias_max_distance", 500},
                       {"depthwise_seperable_out_channel", 1024}, {"ext_pw_out_channel", 1024},
                       {"depthwise_multiplier", 1}, {"kernel_size", 3},
                       {"downsample_rate", 1}, {"bias_symmetric", false}};
  return j;
}

TEST(Phi4MultimodalBuilder, ConvertedConfigCountsTheTowersWithoutAdapters) {
  auto m = testing::BuildCounted(NativePhi4Multimodal(), 4743988032u, 9487976384u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "audio_tower"), 441238144u);
  const std::string audio = "model.embed_tokens_extend.audio_embed.";
  EXPECT_NE(FindTensor(*m, audio + "encoder.encoders.23.feed_forward_out.gate_up_proj.bias"),
            nullptr);
  EXPECT_NE(FindTensor(*m, audio + "encoder.encoders.0.self_attn.o_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, audio + "up_proj_for_vision_speech.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, audio + "encoder.dev_type"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.embed_tokens_extend.image_embed.img_projection_up.weight"),
            nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.0.self_attn.qkv_proj.weight"), nullptr);
  EXPECT_EQ(m->tensors.back().name, "lm_head.weight");
  for (const auto& a : m->assumptions) {
    EXPECT_EQ(a.find("defaults are used"), std::string::npos) << a;
  }
}

// Tiny transformers layout. Text 1080 as above. Vision (hidden 4, 1 layer, 2 heads,
// intermediate 6, 4 px / patch 2 = 4 patches): patch conv [4, 3, 2, 2] + 4 = 52, positions 16,
// layer 4 x 20 + 16 + 30 + 28 = 154, post_layernorm 8, pooling head probe 4 + in_proj 60 +
// out_proj 20 + layernorm 8 + mlp 58 = 150: 380. Feature extensors 4 + 4, img_projection_up
// [8, 4] + 8 = 40, img_projection_down 72: 120. Audio encoder as the remote tiny one with
// gate_up_proj/down_proj and q/k/v/o_proj: 886 (+ 16 buffer elements). up/down projections for
// speech and vision-speech: 224. Total 2,690; float32 (2,690 + 16) x 4 = 10,824 bytes.
TEST(Phi4MultimodalBuilder, TinyConfigCountsByHand) {
  auto j = TinyDecoder("phi4_multimodal");
  j["tie_word_embeddings"] = true;
  j["vision_config"] = {{"hidden_size", 4},       {"num_hidden_layers", 1},
                        {"num_attention_heads", 2}, {"intermediate_size", 6},
                        {"image_size", 4},        {"patch_size", 2}};
  j["audio_config"] = {{"hidden_size", 4},   {"num_attention_heads", 2},
                       {"intermediate_size", 6}, {"num_blocks", 2},
                       {"ext_pw_out_channel", 4}, {"depthwise_separable_out_channel", 4},
                       {"input_size", 8},    {"time_reduction", 4},
                       {"nemo_conv_channels", 2}, {"bias_max_distance", 5}};
  auto m = testing::BuildCounted(j, 2690u, 10824u);
  ASSERT_TRUE(m);
  arch_test::ExpectComponentParameters(*m, {{"vision_tower", 380u},
                                            {"vision_projection", 120u},
                                            {"audio_tower", 886u},
                                            {"audio_projection", 224u}});
  // Absent fields take the config classes' defaults, and say so.
  bool said = false;
  for (const auto& a : m->assumptions) said |= a.find("downsample_rate = 1") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(Phi4MmBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyPhi4Mm(), {{"vision_lora", nullptr}}, "vision_lora");
  testing::ExpectPatchRejected(TinyPhi4Mm(), {{"speech_lora", {{"r", 0}}}}, "\"r\"");
  testing::ExpectPatchRejected(TinyPhi4Mm(), {{"vision_lora", {{"layer", "layers.("}}}}, "layer");
  testing::ExpectPatchRejected(TinyPhi4Mm(), {{"vision_lora", {{"layer", nullptr}}}}, "layer");
  testing::ExpectPatchRejected(TinyPhi4Mm(), {{"hidden_size", nullptr}}, "hidden_size");
  testing::ExpectPatchRejected(TinyPhi4Mm(), {{"vocab_size", uint64_t{1} << 50}}, "vocab_size");
  testing::ExpectPatchRejected(TinyPhi4Mm(), {{"audio_processor", {{"name", "whisper"}}}},
                               "cascades");
  testing::ExpectPatchRejected(
      TinyPhi4Mm(), {{"audio_processor", {{"config", {{"time_reduction", 3}}}}}}, "time_reduction");
  testing::ExpectPatchRejected(TinyPhi4Mm(),
                               {{"audio_processor", {{"config", {{"attention_heads", 3}}}}}},
                               "attention heads");
  testing::ExpectPatchRejected(
      TinyPhi4Mm(), {{"audio_processor", {{"config", {{"encoder_embedding_config", nullptr}}}}}},
      "encoder_embedding_config");
  testing::ExpectPatchRejected(
      TinyPhi4Mm(),
      {{"audio_processor", {{"config", {{"relative_attention_bias_args", {{"type", "alibi"}}}}}}}},
      "t5");
  testing::ExpectPatchRejected(
      TinyPhi4Mm(), {{"audio_processor", {{"config", {{"input_size", 0}}}}}}, "input_size");
  testing::ExpectPatchRejected(
      TinyPhi4Mm(), {{"audio_processor", {{"config", {{"num_blocks", uint64_t{1} << 40}}}}}},
      "num_blocks");
  testing::ExpectPatchRejected(
      TinyPhi4Mm(), {{"audio_processor", {{"config", {{"linear_units", uint64_t{1} << 62}}}}}},
      "linear_units");
  testing::ExpectPatchRejected(TinyPhi4Mm(),
                               {{"audio_processor",
                                 {{"config",
                                   {{"nemo_conv_settings", {{"conv_channels", uint64_t{1} << 39}}},
                                    {"input_size", uint64_t{1} << 39}}}}}},
                               "too large");
  testing::ExpectPatchRejected(
      TinyPhi4Mm(), {{"embd_layer", {{"image_embd_layer", {{"with_learnable_separator", false}}}}}},
      "with_learnable_separator");
  testing::ExpectPatchRejected(TinyPhi4Mm(), {{"embd_layer", {{"audio_embd_layer", nullptr}}}},
                               "audio_embd_layer");
}

TEST(Phi4MultimodalBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(NativePhi4Multimodal(), {{"audio_config", {{"time_reduction", 5}}}},
                               "time_reduction");
  testing::ExpectPatchRejected(NativePhi4Multimodal(),
                               {{"vision_config", {{"num_attention_heads", 5}}}},
                               "num_attention_heads");
  testing::ExpectPatchRejected(NativePhi4Multimodal(), {{"audio_config", "nope"}}, "audio_config");
  testing::ExpectPatchRejected(NativePhi4Multimodal(), {{"num_hidden_layers", "two"}},
                               "num_hidden_layers");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
