#include "model/arch/decoder_kit.h"

#include <cmath>

#include "formats/hf_config_json.h"

namespace memfit::arch {

Result<HfConfig> TextConfigOf(const HfConfig& top, bool multimodal) {
  if (!multimodal) return top;
  return top.Sub("text_config");
}

void ReadDecoderBasics(ModelBuilder& b, const HfConfig& c, const DecoderDefaults& d) {
  auto& hp = b.model().hp;
  if (d.rms_gated) {
    hp.norm = "rmsnorm";
    hp.gated_mlp = true;
  }
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.Uint("num_hidden_layers"));
  hp.num_attention_heads = Get(b, c.Uint("num_attention_heads"));
  hp.num_kv_heads = Get(b, c.UintOr("num_key_value_heads", hp.num_attention_heads));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 0));
  hp.intermediate_size =
      Get(b, d.need_intermediate ? c.Uint("intermediate_size") : c.UintOr("intermediate_size", 0));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", d.tie));
  hp.activation = Get(b, c.StringOr(d.act_key, std::string(d.act_default)));
  if (!CheckNonZero(b, c, {{hp.num_attention_heads, "num_attention_heads"}})) return;
  if (c.Has("head_dim")) {
    hp.head_dim = Get(b, c.Uint("head_dim"));
  } else {
    hp.head_dim = DivideExact(b, c, hp.hidden_size, "hidden_size", hp.num_attention_heads,
                              "num_attention_heads");
    if (d.head_dim_default > 0) hp.head_dim = d.head_dim_default;
  }
  if (hp.num_kv_heads == 0 || hp.num_attention_heads % hp.num_kv_heads != 0) {
    b.Fail(
        MakeError("{}: \"num_attention_heads\" = {} is not a multiple of "
                  "\"num_key_value_heads\" = {}",
                  c.where(), hp.num_attention_heads, hp.num_kv_heads));
  }
  CheckNonZero(b, c, {{hp.head_dim, "head_dim"}});
}

std::vector<bool> LayerTypesOrEmpty(ModelBuilder& b, const HfConfig& c, uint64_t layers) {
  std::vector<bool> out;
  auto it = c.raw().find("layer_types");
  if (it == c.raw().end() || it->is_null()) return out;
  if (!it->is_array() || it->size() < layers) {
    b.Fail(MakeError("{}: \"layer_types\" must list one type per layer ({} layers)", c.where(),
                     layers));
    return out;
  }
  for (uint64_t i = 0; i < layers; ++i) {
    const auto& v = (*it)[i];
    if (!v.is_string()) {
      b.Fail(MakeError("{}: \"layer_types\"[{}] must be a string", c.where(), i));
      return {};
    }
    out.push_back(v.get<std::string>() == "sliding_attention");
  }
  return out;
}

LayerInfo AttentionInfo(const Hyperparameters& hp, bool sliding, uint64_t window) {
  LayerInfo info{.num_heads = hp.num_attention_heads,
                 .num_kv_heads = hp.num_kv_heads,
                 .head_dim_k = hp.head_dim,
                 .head_dim_v = hp.head_dim};
  if (sliding && window > 0) {
    info.attention = AttentionKind::kSliding;
    info.window_tokens = window;
  }
  return info;
}

LayerInfo DenseAttentionInfo(const Hyperparameters& hp, uint64_t intermediate) {
  LayerInfo info = AttentionInfo(hp, false, 0);
  info.intermediate_size = intermediate;
  return info;
}

uint64_t RotaryDim(ModelBuilder& b, const HfConfig& c, uint64_t head_dim, double default_factor) {
  double factor = Get(b, c.NumberOr("partial_rotary_factor", default_factor));
  if (!(factor > 0.0 && factor <= 1.0)) {
    b.Fail(MakeError("{}: \"partial_rotary_factor\" = {} must be in (0, 1]", c.where(), factor));
    return 0;
  }
  return static_cast<uint64_t>(static_cast<double>(head_dim) * factor);
}

void LmHead(ModelBuilder& b, const std::string& embed, bool bias, std::string_view name,
            uint64_t features) {
  const auto& hp = b.model().hp;
  const uint64_t in = features != 0 ? features : hp.hidden_size;
  const std::string head(name);
  b.SetHead(true);
  if (hp.tie_word_embeddings) {
    b.Tied(head + ".weight", {hp.vocab_size, in}, embed + ".weight");
    if (bias) b.Param(head + ".bias", {hp.vocab_size});
  } else {
    b.Linear(head, in, hp.vocab_size, bias);
  }
  b.SetHead(false);
}

void TaskHead(ModelBuilder& b, const HfConfig& c, const BuildOptions& o, const std::string& embed,
              bool lm_bias) {
  std::string cls = o.head_class;
  if (cls.empty()) {
    auto archs = c.architectures();
    cls = archs.empty() ? "ForCausalLM" : archs.front();
  }
  if (cls.ends_with("ForCausalLM") || cls.ends_with("LMHeadModel")) {
    LmHead(b, embed, lm_bias);
  } else if (cls.ends_with("ForSequenceClassification")) {
    uint64_t labels = 2;
    if (auto it = c.raw().find("id2label"); it != c.raw().end() && it->is_object()) {
      labels = it->size();
    }
    labels = Get(b, c.UintOr("num_labels", labels));
    b.SetHead(true);
    b.Linear("score", b.model().hp.hidden_size, labels, false);
    b.SetHead(false);
  } else if (cls == "AutoModel" || cls.ends_with("Model")) {
    // the base model: no head
  } else {
    b.Fail(
        MakeError("{}: head class \"{}\" is not supported for model_type \"{}\" (causal LM "
                  "and sequence classification are); the safetensors headers give an exact "
                  "answer",
                  c.where(), cls, c.model_type()));
  }
}

Result<Model> FinishDecoder(ModelBuilder& b, const HfConfig& c, const BuildOptions& o,
                            const Quantization& q, bool lm_bias) {
  TaskHead(b, c, o, "model.embed_tokens", lm_bias);
  return FinishDecoderAfterHead(b, q);
}

Result<Model> FinishDecoderAfterHead(ModelBuilder& b, const Quantization& q) {
  NoteQuantization(b, q);
  b.model().no_split_patterns = {"model.layers.*"};
  b.model().base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
