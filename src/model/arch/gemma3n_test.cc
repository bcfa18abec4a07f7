// Gemma 3n: a tiny text config and a tiny composite counted by hand, the MobileNetV5 tower against
// timm's state_dict, the E2B/E4B configs against the published counts, hostile configs.

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/hf_config_json.h"
#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::ExpectError;
using testing::FindTensor;

// Two layers (the second KV-shared), hidden 8, 2 heads and 1 KV head of 4, MLP widths 12 and 6
// (a per-layer list), per-layer input 2 over a vocabulary of 6, AltUp 2 inputs, LAuReL rank 3.
nlohmann::json TinyText() {
  return testing::TinyDecoderWith(
      "gemma3n_text",
      {{"architectures", {"Gemma3nForCausalLM"}},
       {"head_dim", 4},
       {"intermediate_size", {12, 6}},
       {"hidden_size_per_layer_input", 2},
       {"vocab_size_per_layer_input", 6},
       {"altup_num_inputs", 2},
       {"laurel_rank", 3},
       {"num_kv_shared_layers", 1},
       {"sliding_window", 4},
       {"layer_types", {"sliding_attention", "sliding_attention"}},
       {"activation_sparsity_pattern", {0.95, 0.0}}});
}

// Audio: hidden 4, 2 heads of 2, one conformer block, conv kernel 3, 8 mel bins, SSCP channels
// 2 and 2 (3x3 kernels, stride 2), 3 hard tokens.
nlohmann::json TinyAudio() {
  return {{"model_type", "gemma3n_audio"},
          {"hidden_size", 4},
          {"conf_num_attention_heads", 2},
          {"conf_num_hidden_layers", 1},
          {"conf_conv_kernel_size", 3},
          {"input_feat_size", 8},
          {"conf_attention_chunk_size", 2},
          {"conf_attention_context_left", 2},
          {"conf_attention_context_right", 0},
          {"sscp_conv_channel_size", {2, 2}},
          {"sscp_conv_kernel_size", {{3, 3}, {3, 3}}},
          {"sscp_conv_stride_size", {{2, 2}, {2, 2}}},
          {"vocab_size", 3}};
}

nlohmann::json TinyComposite() {
  auto text = TinyText();
  text.erase("architectures");
  text.erase("torch_dtype");
  return {{"model_type", "gemma3n"},
          {"architectures", {"Gemma3nForConditionalGeneration"}},
          {"torch_dtype", "float32"},
          {"text_config", text},
          {"audio_config", TinyAudio()},
          {"vision_config",
           {{"model_type", "gemma3n_vision"},
            {"architecture", "mobilenetv5_300m_enc"},
            {"hidden_size", 2048},
            {"vocab_size", 2},
            {"model_args", nullptr}}}};
}

// Text, by hand (H 8, V 10, L 2, P 2, A 2, rank 3):
//   model level: embed_tokens 10 x 8 = 80, embed_tokens_per_layer 6 x (2 x 2) = 24,
//     per_layer_model_projection [4, 8] = 32, per_layer_projection_norm 2, altup_projections.0
//     and altup_unembed_projections.0 [8, 8] = 128, norm 8: 274.
//   per layer: q [8, 8] 64 + k [4, 8] 32 + v 32 + o 64 = 192; q_norm, k_norm 8; four norms 32;
//     altup correct_output_scale 8 + correction_coefs [2, 2] 4 + prediction_coefs [4, 2] 8 +
//     modality_router [2, 8] 16 + router_norm 8 = 44; laurel [3, 8] 24 + [8, 3] 24 + norm 8 = 56;
//     per_layer_input_gate [2, 8] 16 + per_layer_projection [8, 2] 16 + norm 8 = 40: 372, plus
//     the MLP 3 x 8 x width: layer 0 (12) 372 + 288 = 660, layer 1 (6) 372 + 144 = 516.
//   1450 parameters (lm_head tied), float32: 5800 bytes.
TEST(Gemma3nBuilder, TinyTextCountsByHand) {
  auto m = testing::BuildCounted(TinyText(), 1450u, 5800u);
  ASSERT_TRUE(m);
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->tied_to, "model.embed_tokens.weight");
  testing::ExpectShape(*m, "model.embed_tokens_per_layer.weight", {6, 4});
  testing::ExpectShape(*m, "model.layers.1.mlp.down_proj.weight", {8, 6});
  testing::ExpectShape(*m, "model.layers.0.altup.prediction_coefs.weight", {4, 2});
  // The KV-shared layer keeps its k/v projections (stored) but has no cache of its own.
  const Tensor* k = FindTensor(*m, "model.layers.1.self_attn.k_proj.weight");
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->stored);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(
      m->hp, 0,
      {.attention = AttentionKind::kSliding, .intermediate_size = 12u, .kv_shared = false});
  testing::ExpectLayer(m->hp, 1, {.intermediate_size = 6u, .kv_shared = true});
  EXPECT_EQ(m->hp.intermediate_size, 12u);
  // v_norm has no weight: a non-persistent scalar, not stored.
  const Tensor* v_norm = FindTensor(*m, "model.layers.0.self_attn.v_norm.weight");
  ASSERT_NE(v_norm, nullptr);
  EXPECT_FALSE(v_norm->stored);
  EXPECT_EQ(FindTensor(*m, "model.rotary_emb.full_attention_inv_freq"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.rotary_emb.sliding_attention_inv_freq"), nullptr);
  bool said = false;
  for (const auto& n : m->notes) said |= n.find("activation sparsity: 1 of 2") != std::string::npos;
  EXPECT_TRUE(said);
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  // One width for every layer is the same as a list of it.
  auto j = TinyText();
  j["intermediate_size"] = 12;
  auto flat = testing::BuildCounted(j, 1450u + 144u);
  ASSERT_TRUE(flat);
}

// The composite adds, by hand:
//   audio tower: conv_0 [2, 1, 3, 3] 18 + norm 2; 8 bins -> (8 + 2 - 3) / 2 + 1 = 4 -> 2;
//     conv_1 [2, 2, 3, 3] 36 + norm 2; input_proj_linear [4, 2 x 2] 16: 74. One block (H 4):
//     two feed-forwards 2 x (4 + 16 x 4 + 4 x 16 + 4) = 272; attention pre_attn_norm 4 +
//     per_dim_scale 2 + pos_proj 16 + q/k/v 48 + post 16 + post_norm 4 = 90; lconv1d 4 +
//     linear_start [8, 4] 32 + depthwise [4, 1, 3] 12 + conv_norm 4 + linear_end 16 = 68;
//     norm 4: 434. 508 in all.
//   embed_audio: embedding [3, 4] 12 + two norms 8 + embedding_projection [8, 4] 32 = 52.
//   embed_vision: embedding [2, 2048] 4096 + two norms 4096 + embedding_projection [8, 2048]
//     16384 = 24576.
//   vision tower: MobileNetV5 (fixed by its architecture name) 294,126,912.
//   1450 + 508 + 52 + 24576 + 294,126,912 = 294,153,498.
TEST(Gemma3nBuilder, TinyCompositeComponentsByHand) {
  auto m = testing::BuildCounted(TinyComposite(), 294153498u);
  ASSERT_TRUE(m);
  arch_test::ExpectComponentParameters(*m, {{"language_model", 1450u},
                                            {"audio_tower", 508u},
                                            {"embed_audio", 52u},
                                            {"embed_vision", 24576u},
                                            {"vision_tower", 294126912u}});
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->tied_to,
            "model.language_model.embed_tokens.weight");
  EXPECT_EQ(FindTensor(*m, "model.audio_tower.subsample_conv_projection.input_proj_linear.weight")
                ->shape,
            (std::vector<uint64_t>{4, 4}));
  testing::ExpectShape(*m, "model.audio_tower.conformer.0.lconv1d.depthwise_conv1d.weight",
                       {4, 1, 3});
  const Tensor* mask =
      FindTensor(*m, "model.audio_tower.conformer.0.attention.attn.local_causal_valid_mask");
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->shape, (std::vector<uint64_t>{2, 3}));  // [chunk, chunk + left - 1 + right]
  EXPECT_FALSE(mask->stored);
  testing::ExpectShape(*m, "model.embed_vision.embedding_projection.weight", {8, 2048});
  EXPECT_NE(FindTensor(*m, "model.language_model.layers.1.laurel.linear_left.weight"), nullptr);
  EXPECT_EQ(m->no_split_patterns, (std::vector<std::string>{"model.language_model.layers.*"}));
  EXPECT_EQ(m->hp.text_config_key, "text_config");
  EXPECT_TRUE(m->hp.layers[1].kv_shared);
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  // Absent towers take the config classes' defaults (the real E2B/E4B audio encoder), and say so.
  auto j = TinyComposite();
  j.erase("audio_config");
  auto defaulted = BuildJson(j);
  ASSERT_TRUE(defaulted) << defaulted.error().message;
  EXPECT_EQ(arch_test::ComponentParameters(*defaulted, "audio_tower"), 681348640u);
  bool said = false;
  for (const auto& a : defaulted->assumptions) {
    said |= a.find("audio_config: fields absent") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

// bitsandbytes 4-bit stores every nn.Linear not skipped packed, in the towers and embedders as in
// the text model (post [4, 4]: 16 values, 8 bytes); convolutions and embeddings stay float. The
// logical parameters are those of the unquantized model.
TEST(Gemma3nBuilder, QuantizationReachesEveryLinear) {
  auto j = TinyComposite();
  j["quantization_config"] = {{"quant_method", "bitsandbytes"},
                              {"load_in_4bit", true},
                              {"bnb_4bit_quant_type", "nf4"},
                              {"llm_int8_skip_modules", {"lm_head"}}};
  auto m = testing::BuildCounted(j, 294153498u);
  ASSERT_TRUE(m);
  for (const char* name : {"model.audio_tower.conformer.0.attention.post.weight",
                           "model.embed_audio.embedding_projection.weight",
                           "model.language_model.layers.0.mlp.gate_proj.weight",
                           "model.language_model.per_layer_model_projection.weight"}) {
    const Tensor* t = FindTensor(*m, name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->dtype, Dtype::kU8) << name;
  }
  testing::ExpectShape(*m, "model.audio_tower.conformer.0.attention.post.weight", {8, 1});
  for (const char* name : {"model.audio_tower.subsample_conv_projection.conv_0.conv.weight",
                           "model.vision_tower.timm_model.msfa.ffn.pw_exp.conv.weight",
                           "model.language_model.embed_tokens_per_layer.weight"}) {
    EXPECT_EQ(FindTensor(*m, name)->dtype, Dtype::kF32) << name;
  }
  for (const auto& a : m->assumptions) {
    EXPECT_EQ(a.find("does not exclude"), std::string::npos) << a;
  }
}

// The tower against timm (commit aa4b5850) create_model("mobilenetv5_300m_enc").state_dict():
// 548 tensors, 294,126,912 parameters, no buffers; a few shapes of each block type.
TEST(Gemma3nBuilder, MobileNetV5MatchesTimm) {
  auto m = BuildJson(TinyComposite());
  ASSERT_TRUE(m) << m.error().message;
  uint64_t tensors = 0;
  for (const auto& t : m->tensors) {
    if (t.component != "vision_tower") continue;
    ++tensors;
    EXPECT_EQ(t.kind, TensorKind::kParameter) << t.name;
    EXPECT_TRUE(t.name.starts_with("model.vision_tower.timm_model.")) << t.name;
  }
  EXPECT_EQ(tensors, 548u);
  const std::string p = "model.vision_tower.timm_model.";
  const std::pair<const char*, std::vector<uint64_t>> kShapes[] = {
      {"conv_stem.conv.bias", {64}},
      {"blocks.0.0.conv_exp.weight", {256, 64, 3, 3}},
      {"blocks.1.0.dw_start.conv.weight", {128, 1, 3, 3}},
      {"blocks.1.0.dw_mid.conv.weight", {768, 1, 5, 5}},
      {"blocks.2.8.pw_exp.conv.weight", {640, 640, 1, 1}},
      {"blocks.2.9.attn.key.down_conv.weight", {640, 1, 3, 3}},
      {"blocks.2.9.attn.query.proj.weight", {768, 640, 1, 1}},
      {"blocks.3.1.attn.key.proj.weight", {96, 1280, 1, 1}},
      {"blocks.3.1.attn.output.proj.weight", {1280, 1536, 1, 1}},
      {"blocks.3.38.layer_scale.gamma", {1280}},
      {"msfa.ffn.pw_exp.conv.weight", {3840, 1920, 1, 1}},
      {"msfa.norm.weight", {2048}},
  };
  for (const auto& [name, shape] : kShapes) {
    const Tensor* t = FindTensor(*m, p + name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->shape, shape) << name;
  }
  EXPECT_EQ(FindTensor(*m, p + "blocks.3.1.attn.key.down_conv.weight"), nullptr);  // kv stride 1
  EXPECT_EQ(FindTensor(*m, p + "msfa.ffn.layer_scale.gamma"), nullptr);
  EXPECT_EQ(FindTensor(*m, p + "blocks.3.39.layer_scale.gamma"), nullptr);
}

// google/gemma-3n-E2B-it's config.json: the fields the builder reads, as transformers 4.53
// writes Gemma3nConfig (configuration_gemma3n.py) for the published dimensions. The verbatim file
// was in none of the mirrors searched; the dimensions are those of a public print(model) of the
// E2B (30 decoder layers, MLP 8192, embed_tokens_per_layer 262144 x 7680, audio 12 x 1536) and of
// the transformers docs (10 KV-shared layers of 30, E4B: 35 layers, MLP 16384, 15 shared).
constexpr const char* kE2bItConfig = R"({
  "architectures": ["Gemma3nForConditionalGeneration"],
  "audio_config": {
    "conf_attention_chunk_size": 12, "conf_attention_context_left": 13,
    "conf_attention_context_right": 0, "conf_attention_logit_cap": 50.0,
    "conf_conv_kernel_size": 5, "conf_num_attention_heads": 8, "conf_num_hidden_layers": 12,
    "conf_reduction_factor": 4, "conf_residual_weight": 0.5, "gradient_clipping": 10000000000.0,
    "hidden_size": 1536, "input_feat_size": 128, "model_type": "gemma3n_audio",
    "rms_norm_eps": 1e-06, "sscp_conv_channel_size": [128, 32], "sscp_conv_group_norm_eps": 0.001,
    "sscp_conv_kernel_size": [[3, 3], [3, 3]], "sscp_conv_stride_size": [[2, 2], [2, 2]],
    "torch_dtype": "bfloat16", "vocab_offset": 262272, "vocab_size": 128
  },
  "audio_soft_tokens_per_image": 188, "audio_token_id": 262273, "boa_token_id": 256000,
  "boi_token_id": 255999, "eoa_token_id": 262272, "eoi_token_id": 262144, "eos_token_id": [1, 106],
  "image_token_id": 262145, "initializer_range": 0.02, "model_type": "gemma3n",
  "text_config": {
    "activation_sparsity_pattern": [0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95,
      0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
      0.0, 0.0],
    "altup_active_idx": 0, "altup_coef_clip": 120.0, "altup_correct_scale": true,
    "altup_lr_multiplier": 1.0, "altup_num_inputs": 4, "attention_bias": false,
    "attention_dropout": 0.0, "final_logit_softcapping": 30.0, "head_dim": 256,
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 2048,
    "hidden_size_per_layer_input": 256, "initializer_range": 0.02,
    "intermediate_size": [8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192,
      8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192,
      8192, 8192, 8192, 8192],
    "laurel_rank": 64,
    "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention",
      "sliding_attention", "full_attention", "sliding_attention", "sliding_attention",
      "sliding_attention", "sliding_attention", "full_attention", "sliding_attention",
      "sliding_attention", "sliding_attention", "sliding_attention", "full_attention",
      "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention",
      "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
      "sliding_attention", "full_attention", "sliding_attention", "sliding_attention",
      "sliding_attention", "sliding_attention", "full_attention"],
    "max_position_embeddings": 32768, "model_type": "gemma3n_text", "num_attention_heads": 8,
    "num_hidden_layers": 30, "num_key_value_heads": 2, "num_kv_shared_layers": 10,
    "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000.0,
    "rope_scaling": null, "rope_theta": 1000000.0, "sliding_window": 512,
    "torch_dtype": "bfloat16", "use_cache": true, "vocab_size": 262400,
    "vocab_size_per_layer_input": 262144
  },
  "torch_dtype": "bfloat16", "transformers_version": "4.53.0.dev0",
  "vision_config": {
    "architecture": "mobilenetv5_300m_enc", "do_pooling": true, "hidden_size": 2048,
    "initializer_range": 0.02, "label_names": ["LABEL_0", "LABEL_1"], "model_args": null,
    "model_type": "gemma3n_vision", "num_classes": 2, "rms_norm_eps": 1e-06,
    "torch_dtype": "bfloat16", "vocab_offset": 262144, "vocab_size": 128
  },
  "vision_soft_tokens_per_image": 256
})";

// The E4B: 35 layers of MLP 16384, the last 15 KV-shared, the same towers.
nlohmann::json E4bItConfig() {
  auto j = nlohmann::json::parse(kE2bItConfig);
  auto& text = j["text_config"];
  text["num_hidden_layers"] = 35;
  text["num_kv_shared_layers"] = 15;
  text["intermediate_size"] = std::vector<uint64_t>(35, 16384);
  std::vector<double> sparsity(35, 0.0);
  std::fill_n(sparsity.begin(), 10, 0.95);
  text["activation_sparsity_pattern"] = sparsity;
  std::vector<std::string> types;
  for (int i = 0; i < 35; ++i) {
    types.push_back((i + 1) % 5 == 0 ? "full_attention" : "sliding_attention");
  }
  text["layer_types"] = types;
  return j;
}

// Published: google's model card gives ~5B raw parameters for E2B and ~8B for E4B; the Hub's
// safetensors widget 5.44B and 7.85B; Ollama's text-only GGUFs 4.46B and 6.87B (the language
// model alone). The builder, from the modeling code: text 4,456,156,768 / 6,866,696,688, audio
// tower 681,348,640, vision tower 294,126,912, embed_vision 4,460,544, embed_audio 3,345,408:
// 5,439,438,272 and 7,849,978,192 parameters, bfloat16 (lm_head tied): twice that in bytes.
TEST(Gemma3nBuilder, RealE2bAndE4bMatchPublishedCounts) {
  auto e2b = BuildJson(nlohmann::json::parse(kE2bItConfig));
  ASSERT_TRUE(e2b) << e2b.error().message;
  auto e4b = BuildJson(E4bItConfig());
  ASSERT_TRUE(e4b) << e4b.error().message;
  const std::pair<const Model*, uint64_t> kModels[] = {{&*e2b, 5439438272u},
                                                       {&*e4b, 7849978192u}};
  for (const auto& [m, parameters] : kModels) {
    auto t = ComputeTotals(*m);
    EXPECT_EQ(t.parameters, parameters);
    EXPECT_EQ(t.stored_bytes, 2 * parameters);
    arch_test::ExpectComponentParameters(*m, {{"vision_tower", 294126912u},
                                              {"audio_tower", 681348640u},
                                              {"embed_vision", 4460544u},
                                              {"embed_audio", 3345408u}});
    for (const auto& a : m->assumptions) {
      EXPECT_EQ(a.find("audio_config: fields absent"), std::string::npos) << a;
      EXPECT_EQ(a.find("vision_config: fields absent"), std::string::npos) << a;
      EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
    }
  }
  EXPECT_EQ(arch_test::ComponentParameters(*e2b, "language_model"), 4456156768u);
  EXPECT_EQ(arch_test::ComponentParameters(*e4b, "language_model"), 6866696688u);
  testing::ExpectShape(*e2b, "model.language_model.embed_tokens_per_layer.weight", {262144, 7680});
  // KV cache: 20 of E2B's 30 layers (4 full, 16 sliding over 512 tokens) and 20 of E4B's 35.
  for (const auto& [m, layers] : {std::pair{&*e2b, 30u}, std::pair{&*e4b, 35u}}) {
    ASSERT_EQ(m->hp.layers.size(), layers);
    uint64_t cached = 0;
    for (const auto& l : m->hp.layers) cached += l.kv_shared ? 0 : 1;
    EXPECT_EQ(cached, 20u);
    EXPECT_EQ(m->hp.layers[4].attention, AttentionKind::kFull);
    EXPECT_EQ(m->hp.layers[0].window_tokens, 512u);
  }
}

TEST(Gemma3nBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyText(), {{"intermediate_size", {12}}}, "intermediate_size");
  testing::ExpectPatchRejected(TinyText(), {{"num_kv_shared_layers", 2}}, "num_kv_shared_layers");
  testing::ExpectPatchRejected(TinyText(),
                               {{"num_hidden_layers", 0},
                                {"intermediate_size", 12},
                                {"layer_types", nlohmann::json::array()},
                                {"activation_sparsity_pattern", nlohmann::json::array()}},
                               "num_kv_shared_layers");
  // no sliding layer to share from
  testing::ExpectPatchRejected(TinyText(),
                               {{"layer_types", {"full_attention", "sliding_attention"}}},
                               "shares the KV cache");
  testing::ExpectPatchRejected(TinyText(), {{"activation_sparsity_pattern", {0.95}}},
                               "activation_sparsity_pattern");
  testing::ExpectPatchRejected(TinyText(), {{"altup_num_inputs", 0}}, "altup_num_inputs");
  testing::ExpectPatchRejected(TinyText(), {{"num_key_value_heads", 3}}, "num_key_value_heads");
  testing::ExpectPatchRejected(TinyText(), {{"vocab_size", uint64_t{1} << 50}}, "vocab_size");
  testing::ExpectPatchRejected(TinyText(), {{"num_hidden_layers", uint64_t{1} << 30}},
                               "num_hidden_layers");
  testing::ExpectPatchRejected(TinyText(), {{"laurel_rank", "wide"}}, "laurel_rank");
  testing::ExpectPatchRejected(TinyComposite(),
                               {{"vision_config", {{"architecture", "mobilenetv5_base"}}}},
                               "vision_config.architecture");
  auto c = TinyComposite();
  c["vision_config"]["model_args"] = {{"depth", 3}};
  ExpectError(c, "model_args");
  testing::ExpectPatchRejected(TinyComposite(),
                               {{"audio_config", {{"sscp_conv_kernel_size", {3, 3}}}}},
                               "sscp_conv_kernel_size");
  testing::ExpectPatchRejected(TinyComposite(),
                               {{"audio_config", {{"conf_num_attention_heads", 3}}}},
                               "conf_num_attention_heads");
  testing::ExpectPatchRejected(TinyComposite(), {{"text_config", {{"model_type", "gemma3_text"}}}},
                               "text_config.model_type");
  testing::ExpectPatchRejected(TinyComposite(), {{"text_config", "nope"}}, "text_config");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
