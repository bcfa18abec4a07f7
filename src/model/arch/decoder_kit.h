#pragma once
// Shared pieces of decoder-only builders (gemma, phi, granite, olmo, cohere, deepseek, ...):
// reading the common hyperparameters, per-layer attention kinds, rotary buffers, the LM head.

#include <string>
#include <string_view>
#include <vector>

#include "memfit/architecture.h"
#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

struct DecoderDefaults {
  bool tie = false;  // tie_word_embeddings default of the config class
  std::string_view act_key = "hidden_act";
  std::string_view act_default = "silu";
  bool need_intermediate = true;  // "intermediate_size" required
  // head_dim without "head_dim" (0: hidden / heads; hidden must still divide by the heads).
  uint64_t head_dim_default = 0;
  bool rms_gated = false;  // also hp.norm "rmsnorm" and hp.gated_mlp: a llama-style layer
};

// The config a text model reads: the "text_config" of a multimodal config (`multimodal`), else
// the config itself (a *_text model_type).
Result<HfConfig> TextConfigOf(const HfConfig& top, bool multimodal);

// Reads vocab_size, hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
// head_dim (default hidden/heads, which must divide), intermediate_size, max_position_embeddings,
// tie_word_embeddings and the activation into model.hp. Errors name the field.
void ReadDecoderBasics(ModelBuilder& b, const HfConfig& c, const DecoderDefaults& d);

// Per layer: true when the layer uses sliding-window attention. From "layer_types"
// ("sliding_attention"/"full_attention") when the config has it, else `pattern(i)`.
template <typename Pattern>
std::vector<bool> SlidingLayers(ModelBuilder& b, const HfConfig& c, uint64_t layers,
                                Pattern pattern);
std::vector<bool> LayerTypesOrEmpty(ModelBuilder& b, const HfConfig& c, uint64_t layers);

// One LayerInfo of standard (possibly sliding) attention.
LayerInfo AttentionInfo(const Hyperparameters& hp, bool sliding, uint64_t window);
// AttentionInfo(hp, false, 0) of a dense layer with an MLP `intermediate` wide.
LayerInfo DenseAttentionInfo(const Hyperparameters& hp, uint64_t intermediate);

// "rotary_dim" from partial_rotary_factor: int(head_dim * factor), as transformers computes it.
uint64_t RotaryDim(ModelBuilder& b, const HfConfig& c, uint64_t head_dim, double default_factor);

// The LM head `name` ("lm_head"; GPT-NeoX's "embed_out") on `features` inputs (0: hidden_size;
// OPT's word_embed_proj_dim): tied to `embed` (not stored) or its own Linear [vocab, features].
void LmHead(ModelBuilder& b, const std::string& embed, bool bias = false,
            std::string_view name = "lm_head", uint64_t features = 0);

// The task head of options.head_class (accelerate's auto_map class) or else architectures[0]:
// *ForCausalLM / *LMHeadModel -> LmHead; *ForSequenceClassification -> "score" [num_labels,
// hidden] without bias; a bare *Model -> none. Other heads fail naming the class.
void TaskHead(ModelBuilder& b, const HfConfig& c, const BuildOptions& o, const std::string& embed,
              bool lm_bias = false);

// The tail of every decoder laid out as model.embed_tokens / model.layers.N / model.norm: the
// task head (TaskHead on model.embed_tokens), the quantization note, one indivisible block per
// model.layers.N, base_model_prefix "model.", and Finish. Call it after the final norm and buffers.
Result<Model> FinishDecoder(ModelBuilder& b, const HfConfig& c, const BuildOptions& o,
                            const Quantization& q, bool lm_bias = false);
// FinishDecoder after its TaskHead (for a builder that stores more after the head).
Result<Model> FinishDecoderAfterHead(ModelBuilder& b, const Quantization& q);

template <typename Pattern>
std::vector<bool> SlidingLayers(ModelBuilder& b, const HfConfig& c, uint64_t layers,
                                Pattern pattern) {
  std::vector<bool> out = LayerTypesOrEmpty(b, c, layers);
  if (!out.empty() || b.failed()) return out;
  for (uint64_t i = 0; i < layers; ++i) out.push_back(pattern(i));
  return out;
}

}  // namespace memfit::arch
