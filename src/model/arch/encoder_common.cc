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

LayerInfo DenseLayer(AttentionKind kind, uint64_t heads, uint64_t head_dim, uint64_t intermediate) {
  return LayerInfo{.attention = kind,
                   .num_heads = heads,
                   .num_kv_heads = heads,
                   .head_dim_k = head_dim,
                   .head_dim_v = head_dim,
                   .intermediate_size = intermediate};
}

}  // namespace memfit::arch
