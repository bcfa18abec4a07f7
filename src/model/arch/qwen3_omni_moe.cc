// Qwen3-Omni (model_type "qwen3_omni_moe": Qwen3OmniMoeForConditionalGeneration), as
// transformers/models/qwen3_omni_moe/modeling_qwen3_omni_moe.py builds it and the
// Qwen/Qwen3-Omni-30B-A3B-* checkpoints store it (experts one module per expert, all bfloat16):
// - thinker.model.* / thinker.lm_head: the qwen3_moe decoder of thinker_config.text_config
//   (the qwen3_moe spec row, BuildQwen3Moe), component "language_model";
// - thinker.visual.*: Qwen3-VL blocks with Qwen2-style mergers and merger_list.N deepstack
//   mergers (qwen_vision.h), "vision_tower";
// - thinker.audio_tower.*: EmitOmniAudio's kQwen3 (omni_kit.h), "audio_tower";
// - talker.*: model (qwen3_moe layers, every one a sparse block with a shared expert and its
//   sigmoid gate; codec_embedding in place of embed_tokens), text_projection and
//   hidden_projection (Linear(thinker_hidden_size, I) + Linear(I, H), biased), codec_head, and
//   code_predictor (a qwen3 decoder with num_code_groups - 1 codec embeddings and heads), "talker";
// - code2wav.*: pre_transformer (llama-style sliding-window layers with two layer scales),
//   code_embedding [codebook_size x num_quantizers, H], upsample (ConvTranspose1d + ConvNeXt
//   block per ratio), decoder (causal convs, SnakeBeta, residual units), "code2wav".
// enable_audio_output false (the Thinking and Captioner releases) builds the thinker alone.
// Checked: the Qwen/Qwen3-Omni-30B-A3B-Instruct weight listing, 28,010 tensors and
// 35,259,818,545 parameters in bfloat16 (omni_test.cc).

#include <fmt/format.h>

#include "formats/hf_config_json.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/omni_kit.h"

namespace memfit::arch {
namespace {

// configuration_qwen3_omni_moe.py's class defaults (the fields that shape tensors), by
// sub-config: Qwen3OmniMoeTextConfig, VisionEncoderConfig, AudioEncoderConfig, TalkerTextConfig,
// TalkerCodePredictorConfig and Code2WavConfig.
const nlohmann::json& Qwen3OmniDefaults() {
  static const nlohmann::json k = nlohmann::json::parse(R"({
    "thinker_config.text_config": {"vocab_size": 3584, "hidden_size": 2048,
      "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
      "num_key_value_heads": 4, "max_position_embeddings": 32768, "hidden_act": "silu",
      "attention_bias": false, "decoder_sparse_step": 1, "moe_intermediate_size": 768,
      "num_experts_per_tok": 8, "num_experts": 128},
    "thinker_config.vision_config": {"depth": 27, "hidden_size": 1152, "intermediate_size": 4304,
      "num_heads": 16, "in_channels": 3, "patch_size": 16, "spatial_merge_size": 2,
      "temporal_patch_size": 2, "out_hidden_size": 3584, "num_position_embeddings": 2304,
      "deepstack_visual_indexes": [8, 16, 24]},
    "thinker_config.audio_config": {"num_mel_bins": 128, "encoder_layers": 32,
      "encoder_attention_heads": 20, "encoder_ffn_dim": 5120, "d_model": 1280,
      "max_source_positions": 1500, "output_dim": 3584, "downsample_hidden_size": 480},
    "talker_config.text_config": {"vocab_size": 3072, "hidden_size": 1024,
      "intermediate_size": 2048, "num_hidden_layers": 20, "num_attention_heads": 16,
      "num_key_value_heads": 2, "max_position_embeddings": 32768, "hidden_act": "silu",
      "attention_bias": false, "moe_intermediate_size": 384, "num_experts_per_tok": 8,
      "num_experts": 128},
    "talker_config.code_predictor_config": {"vocab_size": 2048, "hidden_size": 1024,
      "intermediate_size": 3072, "num_hidden_layers": 5, "num_attention_heads": 16,
      "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 32768,
      "hidden_act": "silu", "attention_bias": false, "num_code_groups": 32},
    "code2wav_config": {"codebook_size": 2048, "hidden_size": 1024,
      "max_position_embeddings": 8000, "num_attention_heads": 16, "num_key_value_heads": 16,
      "attention_bias": false, "intermediate_size": 3072, "hidden_act": "silu",
      "num_hidden_layers": 8, "num_quantizers": 16, "upsample_rates": [8, 5, 4, 3],
      "upsampling_ratios": [2, 2], "decoder_dim": 1536}
  })");
  return k;
}

// Qwen3OmniMoeTalkerForConditionalGeneration under "talker.".
Status Qwen3OmniAppendTalker(ModelBuilder& b, OmniContext& x) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig talker, SubOrEmpty(x.top, "talker_config"));
  MEMFIT_ASSIGN_OR_RETURN(OmniPart text, x.Sub(talker, "text_config", "talker_config.text_config",
                                               {{"num_local_experts", "num_experts"}}));
  // Qwen3OmniMoeTalkerDecoderLayer replaces every layer's MLP with the sparse block.
  nlohmann::json& j = text.json;
  const bool dense_listed = j.contains("mlp_only_layers") && j["mlp_only_layers"].is_array() &&
                            !j["mlp_only_layers"].empty();
  if (dense_listed || (j.contains("decoder_sparse_step") && j["decoder_sparse_step"] != 1)) {
    x.assumptions.push_back(
        "talker_config.text_config: mlp_only_layers/decoder_sparse_step ignored: every talker "
        "layer is a sparse block with a shared expert (Qwen3OmniMoeTalkerDecoderLayer)");
  }
  j["mlp_only_layers"] = nlohmann::json::array();
  j["decoder_sparse_step"] = 1;
  const bool tie = x.Tie(j, talker,
                         "talker_config: no tie_word_embeddings: its head is its own weight "
                         "(the config class's default false)");
  MEMFIT_ASSIGN_OR_RETURN(uint64_t shared, text.config.Uint("shared_expert_intermediate_size"));
  MEMFIT_ASSIGN_OR_RETURN(uint64_t intermediate, text.config.Uint("intermediate_size"));
  MEMFIT_ASSIGN_OR_RETURN(uint64_t thinker_hidden, talker.UintOr("thinker_hidden_size", 2048));
  MEMFIT_ASSIGN_OR_RETURN(Model decoder, x.Decoder(text, "qwen3_moe", "Qwen3MoeModel",
                                                   BuildQwen3Moe, {&talker, &x.top}));
  const uint64_t h = decoder.hp.hidden_size, vocab = decoder.hp.vocab_size;
  const uint64_t layers = decoder.hp.num_layers;

  MEMFIT_ASSIGN_OR_RETURN(OmniPart predictor, x.Sub(talker, "code_predictor_config",
                                                    "talker_config.code_predictor_config"));
  MEMFIT_ASSIGN_OR_RETURN(uint64_t groups, predictor.config.Uint("num_code_groups"));
  if (groups > 4096) {
    return MakeError("{}: \"num_code_groups\" = {} is absurd", predictor.config.where(), groups);
  }
  MEMFIT_ASSIGN_OR_RETURN(Model code_predictor, x.Decoder(predictor, "qwen3", "Qwen3Model",
                                                          BuildQwen3, {&talker, &x.top}));
  const uint64_t ph = code_predictor.hp.hidden_size, pvocab = code_predictor.hp.vocab_size;

  b.SetComponent("talker");
  b.Embedding("talker.model.codec_embedding", vocab, h);
  AppendOmniPart(b.model(), std::move(decoder), "talker.model.", "talker.lm_head", "talker",
                 "talker_config.text_config", {"model.embed_tokens.weight"});
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    const std::string l = Layer("talker.model.layers", i) + ".mlp";
    GatedMlp(b, l + ".shared_expert", h, shared, h);
    b.Linear(l + ".shared_expert_gate", h, 1, false);
  }
  for (const char* p : {"talker.text_projection", "talker.hidden_projection"}) {
    b.Linear(std::string(p) + ".linear_fc1", thinker_hidden, intermediate, true);
    b.Linear(std::string(p) + ".linear_fc2", intermediate, h, true);
  }
  if (tie) {
    b.Tied("talker.codec_head.weight", {vocab, h}, "talker.model.codec_embedding.weight");
  } else {
    b.Linear("talker.codec_head", h, vocab, false);
  }
  AppendOmniPart(b.model(), std::move(code_predictor), "talker.code_predictor.model.",
                 "talker.code_predictor.lm_head", "talker", "talker_config.code_predictor_config",
                 {"model.embed_tokens.weight"});
  for (uint64_t g = 0; g + 1 < groups && !b.failed(); ++g) {
    b.Embedding(Layer("talker.code_predictor.model.codec_embedding", g), pvocab, ph);
    b.Linear(Layer("talker.code_predictor.lm_head", g), ph, pvocab, false);
  }
  return Ok{};
}

// Qwen3OmniMoeCode2Wav under "code2wav.", its pre_transformer a llama decoder (BuildLlama: q, k,
// v, o biased by attention_bias) plus the two layer scales per layer.
Status AppendCode2Wav(ModelBuilder& b, OmniContext& x) {
  MEMFIT_ASSIGN_OR_RETURN(OmniPart code2wav, x.Sub(x.top, "code2wav_config", "code2wav_config"));
  const HfConfig config = code2wav.config;
  code2wav.json.erase("sliding_window");  // every layer slides; the window shapes no tensor
  if (!code2wav.json.contains("vocab_size")) code2wav.json["vocab_size"] = 1;  // no embed_tokens
  MEMFIT_ASSIGN_OR_RETURN(Model decoder,
                          x.Decoder(code2wav, "llama", "LlamaModel", BuildLlama, {&x.top}));
  const uint64_t h = decoder.hp.hidden_size, layers = decoder.hp.num_layers;
  const uint64_t codebook = Get(b, config.Uint("codebook_size"));
  const uint64_t quantizers = Get(b, config.Uint("num_quantizers"));
  const uint64_t dim = Get(b, config.Uint("decoder_dim"));
  const auto rates = UintList(b, config, "upsample_rates", {});
  const auto ratios = UintList(b, config, "upsampling_ratios", {});
  if (b.failed()) return b.Finish().error();
  if (rates.size() > 32 || (dim >> rates.size()) == 0) {
    return MakeError("{}: \"decoder_dim\" = {} cannot halve {} times (\"upsample_rates\" entries)",
                     config.where(), dim, rates.size());
  }
  b.SetComponent("code2wav");
  AppendOmniPart(b.model(), std::move(decoder), "code2wav.pre_transformer.", "code2wav.lm_head",
                 "code2wav", "code2wav_config", {"model.embed_tokens.weight"});
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    const std::string l = Layer("code2wav.pre_transformer.layers", i);
    b.Param(l + ".self_attn_layer_scale.scale", {h});
    b.Param(l + ".mlp_layer_scale.scale", {h});
  }
  b.Embedding("code2wav.code_embedding",
              MulDims(b, codebook, quantizers, "codebook_size x num_quantizers"), h);
  b.Buffer("code2wav.code_offset", {1, quantizers, 1}, Dtype::kI64, false);
  for (size_t i = 0; i < ratios.size() && !b.failed(); ++i) {
    const std::string u = Layer("code2wav.upsample", i);
    ConvTranspose1d(b, u + ".0.conv", h, h, ratios[i]);
    b.Conv(u + ".1.dwconv.conv", h, h, {7}, true, h);  // depthwise
    b.LayerNorm(u + ".1.norm", h);
    b.Linear(u + ".1.pwconv1", h, MulDims(b, h, 4, "4 x hidden_size"), true);
    b.Linear(u + ".1.pwconv2", MulDims(b, h, 4, "4 x hidden_size"), h, true);
    b.Param(u + ".1.gamma", {h});
  }
  b.Conv("code2wav.decoder.0.conv", h, dim, {7}, true);
  for (size_t i = 0; i < rates.size() && !b.failed(); ++i) {
    const std::string d = Layer("code2wav.decoder", i + 1) + ".block";
    const uint64_t in = dim >> i, out = dim >> (i + 1);
    SnakeBeta(b, d + ".0", in);
    ConvTranspose1d(b, d + ".1.conv", in, out, MulDims(b, rates[i], 2, "2 x upsample rate"));
    for (int r = 0; r < 3; ++r) {  // residual units, dilations 1, 3, 9
      const std::string u = Layer(d, 2 + r);
      SnakeBeta(b, u + ".act1", out);
      b.Conv(u + ".conv1.conv", out, out, {7}, true);
      SnakeBeta(b, u + ".act2", out);
      b.Conv(u + ".conv2.conv", out, out, {1}, true);
    }
  }
  const uint64_t last = dim >> rates.size();
  SnakeBeta(b, Layer("code2wav.decoder", rates.size() + 1), last);
  b.Conv(Layer("code2wav.decoder", rates.size() + 2) + ".conv", last, 1, {7}, true);
  return Ok{};
}

// _no_split_modules: the decoder layers of thinker and talker, the audio and vision blocks, the
// code predictor.
constexpr OmniFamily kQwen3Omni{
    .architecture = "Qwen3OmniMoeForConditionalGeneration",
    .defaults = Qwen3OmniDefaults,
    .text_type = "qwen3_moe",
    .text_class = "Qwen3MoeForCausalLM",
    .text_builder = BuildQwen3Moe,
    .tie_assumption =
        "thinker_config: no tie_word_embeddings: its head is its own weight (the "
        "config class's default false)",
    .vision = QwenVision::kQwen3Omni,
    .audio = OmniAudio::kQwen3,
    .append_output = {Qwen3OmniAppendTalker, AppendCode2Wav},
    .output_note =
        "the talker's and code predictor's KV caches are not in the context "
        "estimates, which follow the thinker",
    .no_output_note = "enable_audio_output is false: talker and code2wav are not built",
    .no_split = {"thinker.model.layers.*", "thinker.audio_tower.layers.*",
                 "thinker.visual.blocks.*", "talker.model.layers.*", "talker.code_predictor"}};

}  // namespace

Result<Model> BuildQwen3OmniMoe(const HfConfig& c, const BuildOptions& o) {
  return BuildOmni(c, o, kQwen3Omni);
}

}  // namespace memfit::arch
