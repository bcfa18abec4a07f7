// Qwen2.5-Omni (model_type "qwen2_5_omni": Qwen2_5OmniForConditionalGeneration, released as
// Qwen2_5OmniModel), as transformers/models/qwen2_5_omni/modeling_qwen2_5_omni.py builds it and
// Qwen/Qwen2.5-Omni-7B's checkpoint stores it:
// - thinker.model.* / thinker.lm_head: the qwen2 decoder of thinker_config.text_config
//   (BuildQwen2), component "language_model";
// - thinker.visual.*: the Qwen2.5-VL tower with separate q/k/v (qwen_vision.h), "vision_tower";
// - thinker.audio_tower.*: EmitOmniAudio's kQwen25 (omni_kit.h), "audio_tower";
// - talker.*: thinker_to_talker_proj Linear(embedding_size, hidden), a qwen2 decoder whose
//   embed_tokens is [vocab, embedding_size], codec_head (no bias), "talker";
// - token2wav.*: the DiT and BigVGAN (qwen2_5_omni_token2wav.cc), float32, "token2wav".
// enable_audio_output false builds the thinker alone, as transformers does.
// Checked: Qwen/Qwen2.5-Omni-7B's model.safetensors.index.json total_size, 22,366,403,936 B,
// exactly (omni_test.cc).

#include <fmt/format.h>

#include "formats/hf_config_json.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/omni_kit.h"

namespace memfit::arch {
namespace {

// configuration_qwen2_5_omni.py's class defaults (the fields that shape tensors), by sub-config:
// Qwen2_5OmniTextConfig, VisionEncoderConfig, AudioEncoderConfig, TalkerConfig, DiTConfig and
// BigVGANConfig.
const nlohmann::json& Qwen25OmniDefaults() {
  static const nlohmann::json k = nlohmann::json::parse(R"({
    "thinker_config.text_config": {"vocab_size": 152064, "hidden_size": 3584,
      "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
      "num_key_value_heads": 4, "max_position_embeddings": 32768, "hidden_act": "silu"},
    "thinker_config.vision_config": {"depth": 32, "hidden_size": 3584, "intermediate_size": 3420,
      "num_heads": 16, "in_channels": 3, "patch_size": 14, "spatial_merge_size": 2,
      "temporal_patch_size": 2, "out_hidden_size": 3584},
    "thinker_config.audio_config": {"num_mel_bins": 128, "encoder_layers": 32,
      "encoder_attention_heads": 20, "encoder_ffn_dim": 5120, "d_model": 1280,
      "max_source_positions": 1500, "output_dim": 3584},
    "talker_config": {"vocab_size": 8448, "embedding_size": 3584, "hidden_size": 3584,
      "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
      "num_key_value_heads": 4, "head_dim": 128, "max_position_embeddings": 32768,
      "hidden_act": "silu"},
    "token2wav_config.dit_config": {"hidden_size": 1024, "num_hidden_layers": 22,
      "num_attention_heads": 16, "ff_mult": 2, "emb_dim": 512, "head_dim": 64, "num_embeds": 8193,
      "mel_dim": 80, "enc_emb_dim": 192, "enc_dim": 128, "enc_channels": [256, 256, 256, 256, 768],
      "enc_kernel_sizes": [5, 3, 3, 3, 1], "enc_dilations": [1, 2, 3, 4, 1],
      "enc_attention_channels": 64, "enc_res2net_scale": 2, "enc_se_channels": 64},
    "token2wav_config.bigvgan_config": {"mel_dim": 80, "upsample_initial_channel": 1536,
      "resblock_kernel_sizes": [3, 7, 11], "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5],
      [1, 3, 5]], "upsample_rates": [5, 3, 2, 2, 2, 2], "upsample_kernel_sizes": [11, 7, 4, 4, 4, 4]}
  })");
  return k;
}

// The talker: thinker_to_talker_proj, a qwen2 decoder (the decoder alone: the codec head follows)
// whose embed_tokens is [vocab, embedding_size], codec_head.
Status AppendTalker(ModelBuilder& b, OmniContext& x) {
  MEMFIT_ASSIGN_OR_RETURN(OmniPart talker, x.Sub(x.top, "talker_config", "talker_config"));
  MEMFIT_ASSIGN_OR_RETURN(uint64_t embedding, talker.config.Uint("embedding_size"));
  MEMFIT_ASSIGN_OR_RETURN(Model decoder,
                          x.Decoder(talker, "qwen2", "Qwen2Model", BuildQwen2, {&x.top}));
  const uint64_t hidden = decoder.hp.hidden_size, vocab = decoder.hp.vocab_size;
  b.SetComponent("talker");
  b.Linear("talker.thinker_to_talker_proj", embedding, hidden, true);
  b.Embedding("talker.model.embed_tokens", vocab, embedding);
  AppendOmniPart(b.model(), std::move(decoder), "talker.model.", "talker.lm_head", "talker",
                 "talker_config", {"model.embed_tokens.weight"});
  b.Linear("talker.codec_head", hidden, vocab, false);
  return Ok{};
}

// token2wav in float32: enable_talker() calls token2wav.float(), and the 7B release stores it so.
Status AppendToken2Wav(ModelBuilder& b, OmniContext& x) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig token2wav, SubOrEmpty(x.top, "token2wav_config"));
  MEMFIT_ASSIGN_OR_RETURN(OmniPart dit,
                          x.Sub(token2wav, "dit_config", "token2wav_config.dit_config"));
  MEMFIT_ASSIGN_OR_RETURN(OmniPart bigvgan,
                          x.Sub(token2wav, "bigvgan_config", "token2wav_config.bigvgan_config"));
  // Releases written before the rename keep "dim", "depth" and "heads", which transformers
  // ignores (its fields are hidden_size, num_hidden_layers, num_attention_heads).
  const nlohmann::json& j = dit.json;
  for (const auto& [old_key, key] :
       {std::pair{"dim", "hidden_size"}, std::pair{"depth", "num_hidden_layers"},
        std::pair{"heads", "num_attention_heads"}}) {
    if (j.contains(old_key) && j[old_key] != j[key]) {
      x.assumptions.push_back(fmt::format(
          "token2wav_config.dit_config: \"{}\" = {} is not read by transformers, which builds "
          "{} = {}",
          old_key, j[old_key].dump(), key, j[key].dump()));
    }
  }
  ModelBuilder t(x.top, Dtype::kF32);
  t.SetComponent("token2wav");
  EmitQwen25OmniDit(t, dit.config, "token2wav.code2wav_dit_model");
  EmitQwen25OmniBigVgan(t, bigvgan.config, "token2wav.code2wav_bigvgan_model");
  MEMFIT_ASSIGN_OR_RETURN(Model part, t.Finish());
  part.assumptions.clear();  // FillCommon's lines about the top config, already in `b`'s model
  AppendOmniPart(b.model(), std::move(part), "", "", "token2wav", "token2wav_config");
  return Ok{};
}

// tie_word_embeddings of the thinker's lm_head: text_config's, else thinker_config's, else false
// (Qwen2_5OmniThinkerConfig's default).
constexpr OmniFamily kQwen25Omni{
    .architecture = "Qwen2_5OmniForConditionalGeneration",
    .defaults = Qwen25OmniDefaults,
    .text_type = "qwen2",
    .text_class = "Qwen2ForCausalLM",
    .text_builder = BuildQwen2,
    .tie_assumption =
        "thinker_config: no tie_word_embeddings: thinker.lm_head is its own weight "
        "(the thinker config class's default false)",
    .vision = QwenVision::kQwen25Omni,
    .audio = OmniAudio::kQwen25,
    .append_output = {AppendTalker, AppendToken2Wav},
    .output_assumption =
        "token2wav is counted in float32 (enable_talker() calls token2wav.float()), and with the "
        "buffers Qwen's release stores besides the weights: "
        "thinker.audio_tower.positional_embedding.positional_embedding, the DiT's "
        "rotary_embed.inv_freq and each BigVGAN activation's upsample/downsample filter "
        "(Qwen/Qwen2.5-Omni-7B's total_size counts exactly these; current transformers makes "
        "them non-persistent; the filters' names are not pinned: the index copy found lists none)",
    .output_note =
        "the talker's KV cache (its own decoder) is not in the context estimates, "
        "which follow the thinker; spk_dict.pt (speaker conditioning) is a separate file",
    .no_output_note = "enable_audio_output is false: talker and token2wav are not built",
    .no_split = {"thinker.model.layers.*", "thinker.visual", "thinker.audio_tower", "talker",
                 "token2wav"}};

}  // namespace

Result<Model> BuildQwen25Omni(const HfConfig& c, const BuildOptions& o) {
  return BuildOmni(c, o, kQwen25Omni);
}

}  // namespace memfit::arch
