#include "model/arch/encoder_common.h"
#include "formats/hf_config_json.h"

namespace memfit::arch {

std::string HeadClass(const HfConfig& config, const BuildOptions& options,
                      std::string_view prefix, std::string_view base) {
  if (!options.head_class.empty()) {
    std::string_view cls = options.head_class;
    if (cls == "AutoModel") return std::string(base);
    if (cls.starts_with("AutoModel")) return std::string(prefix) + std::string(cls.substr(9));
    return std::string(cls);
  }
  auto archs = config.architectures();
  if (!archs.empty()) return archs.front();
  return std::string(base);
}

uint64_t NumLabels(ModelBuilder& b, const HfConfig& config) {
  const auto& raw = config.raw();
  if (auto it = raw.find("id2label"); it != raw.end() && it->is_object() && !it->empty()) {
    return it->size();
  }
  return Get(b, config.UintOr("num_labels", 2));
}

Error UnknownHead(const HfConfig& config, std::string_view cls, std::string_view known) {
  return MakeError("{}: architecture \"{}\" is not built by memfit's config-only builder "
                   "(known: {}); reading the safetensors headers gives an exact answer",
                   config.where(), cls, known);
}

std::optional<Error> CheckHeadClass(const HfConfig& config, std::string_view cls,
                                    std::initializer_list<std::string_view> known) {
  std::string names;
  for (std::string_view name : known) {
    if (name == cls) return std::nullopt;
    if (!names.empty()) names += ", ";
    names += name;
  }
  return UnknownHead(config, cls, names);
}

void ReadEncoderBasics(ModelBuilder& b, const HfConfig& c, const EncoderKeys& keys) {
  auto& hp = b.model().hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint(keys.hidden));
  hp.num_layers = Get(b, c.Uint(keys.layers));
  hp.num_attention_heads = Get(b, c.Uint(keys.heads));
  hp.num_kv_heads = hp.num_attention_heads;
  hp.intermediate_size = Get(b, c.Uint(keys.intermediate));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 512));
  hp.activation = Get(b, c.StringOr(keys.activation, "gelu"));
  hp.norm = "layernorm";
}

BartEncoderSizes ReadBartLayerSizes(ModelBuilder& b, const HfConfig& c) {
  auto& hp = b.model().hp;
  BartEncoderSizes encoder;
  hp.num_encoder_layers = Get(b, c.Uint("encoder_layers"));
  hp.num_layers = Get(b, c.Uint("decoder_layers"));
  encoder.heads = Get(b, c.Uint("encoder_attention_heads"));
  hp.num_attention_heads = Get(b, c.Uint("decoder_attention_heads"));
  hp.num_kv_heads = hp.num_attention_heads;
  encoder.ffn = Get(b, c.Uint("encoder_ffn_dim"));
  hp.intermediate_size = Get(b, c.Uint("decoder_ffn_dim"));
  return encoder;
}

void ReadBartTail(ModelBuilder& b, const HfConfig& c, uint64_t encoder_heads) {
  auto& hp = b.model().hp;
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", true));
  hp.activation = Get(b, c.StringOr("activation_function", "gelu"));
  hp.norm = "layernorm";
  hp.is_encoder_decoder = true;
  if (b.failed()) return;
  DivideExact(b, c, hp.hidden_size, "d_model", encoder_heads, "encoder_attention_heads");
  hp.head_dim = DivideExact(b, c, hp.hidden_size, "d_model", hp.num_attention_heads,
                            "decoder_attention_heads");
}

void EmitBartLayer(ModelBuilder& b, const std::string& layer, uint64_t d, uint64_t ffn,
                   bool decoder, bool k_bias) {
  auto attention = [&](const std::string& prefix) {
    b.Linear(prefix + ".k_proj", d, d, k_bias);
    b.Linear(prefix + ".v_proj", d, d, true);
    b.Linear(prefix + ".q_proj", d, d, true);
    b.Linear(prefix + ".out_proj", d, d, true);
  };
  attention(layer + ".self_attn");
  b.LayerNorm(layer + ".self_attn_layer_norm", d);
  if (decoder) {
    attention(layer + ".encoder_attn");
    b.LayerNorm(layer + ".encoder_attn_layer_norm", d);
  }
  b.Linear(layer + ".fc1", d, ffn, true);
  b.Linear(layer + ".fc2", ffn, d, true);
  b.LayerNorm(layer + ".final_layer_norm", d);
  if (decoder) {
    auto& hp = b.model().hp;
    LayerInfo info = DenseLayer(AttentionKind::kFull, hp.num_attention_heads, hp.head_dim, ffn);
    info.cross_attention = true;
    hp.layers.push_back(info);
  }
}

LayerInfo DenseLayer(AttentionKind kind, uint64_t heads, uint64_t head_dim, uint64_t intermediate) {
  return LayerInfo{.attention = kind,
                   .num_heads = heads,
                   .num_kv_heads = heads,
                   .head_dim_k = head_dim,
                   .head_dim_v = head_dim,
                   .intermediate_size = intermediate};
}

void MarkTieBrokenOnMeta(ModelBuilder& b) {
  if (!b.failed() && !b.model().tensors.empty()) b.model().tensors.back().tie_broken_on_meta = true;
}

}  // namespace memfit::arch
