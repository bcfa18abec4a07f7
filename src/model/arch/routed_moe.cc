// kRouted MoE (routed_moe.h). Sources per row in decoder_families.cc; the per-expert names are
// those of the Hub checkpoints (transformers 5 fuses them into experts.gate_up_proj /
// experts.down_proj on load: the same elements).

#include "model/arch/routed_moe.h"

#include "formats/hf_config_json.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

// "mlp_layer_types" (strings "dense"/"sparse") or "is_moe_layer" (booleans): one per layer.
const nlohmann::json* ReadLayerList(ModelBuilder& b, const HfConfig& c, uint64_t layers,
                                    bool& bools) {
  for (std::string_view key : {"mlp_layer_types", "is_moe_layer"}) {
    const auto it = c.raw().find(key);
    if (it == c.raw().end() || it->is_null()) continue;
    bools = key == "is_moe_layer";
    bool ok = it->is_array() && it->size() == layers;
    for (size_t i = 0; ok && i < it->size(); ++i) {
      const auto& v = (*it)[i];
      ok = bools ? v.is_boolean()
                 : v.is_string() && (v.get<std::string>() == "dense" ||
                                     v.get<std::string>() == "sparse");
    }
    if (!ok) {
      b.Fail(MakeError("{}: \"{}\" must list one {} per layer ({} layers)", c.where(), key,
                       bools ? "true/false" : "\"dense\"/\"sparse\"", layers));
      return nullptr;
    }
    return &*it;
  }
  return nullptr;
}

}  // namespace

void ReadRoutedMoe(ModelBuilder& b, const HfConfig& c, const DecoderSpec& s, uint64_t layers,
                   RoutedMoe& r) {
  auto& hp = b.model().hp;
  hp.num_experts = Get(b, c.Uint(s.experts_key));
  hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
  r.expert_width = Get(b, c.Uint(s.moe_inter_key));
  hp.moe_intermediate_size = r.expert_width;
  r.dense_width = s.dense_inter_key.empty()
                      ? hp.intermediate_size
                      : Get(b, c.UintOr(s.dense_inter_key, hp.intermediate_size));
  if (!s.shared_count_key.empty()) {
    const uint64_t count = Get(b, c.UintOr(s.shared_count_key, 0));
    r.shared_width = MulDims(b, r.expert_width, count, "shared experts' width");
    hp.num_shared_experts = count;
    hp.shared_expert_intermediate_size = r.shared_width;
  }
  if (s.dense_layers == DenseLayers::kNone || b.failed()) return;
  r.first_dense = s.dense_first_key.empty()
                      ? s.dense_first_default
                      : Get(b, c.UintOr(s.dense_first_key, s.dense_first_default));
  if (s.dense_layers == DenseLayers::kMlpLayerTypes && !b.failed()) {
    r.types = ReadLayerList(b, c, layers, r.types_are_bools);
  }
}

bool RoutedSparseLayer(const DecoderSpec& s, const RoutedMoe& r, uint64_t i) {
  if (s.dense_layers == DenseLayers::kNone) return true;
  if (r.types == nullptr) return i >= r.first_dense;
  const auto& v = (*r.types)[i];
  return r.types_are_bools ? v.get<bool>() : v.get<std::string>() == "sparse";
}

void EmitRoutedMoe(ModelBuilder& b, const Quantization& q, const std::string& layer,
                   const DecoderSpec& s, const RoutedMoe& r, uint64_t num_experts, bool mlp_bias) {
  const uint64_t h = b.model().hp.hidden_size;
  const uint64_t w = r.expert_width;
  const std::string p = layer + ".mlp.";
  b.Linear(p + std::string(s.router_name), h, num_experts, false);
  switch (s.routed_bias) {
    case RoutedBias::kNone: break;
    case RoutedBias::kGateBuffer:
      b.Buffer(p + "gate.e_score_correction_bias", {num_experts}, Dtype::kF32, true);
      break;
    case RoutedBias::kBlockBuffer:
      b.Buffer(p + "e_score_correction_bias", {num_experts}, Dtype::kF32, true);
      break;
    case RoutedBias::kExpertBias:
      b.ParamAs(p + "expert_bias", {num_experts}, Dtype::kF32);
      break;
  }
  RepeatedModules(b, q, p + "experts", num_experts, [&](const std::string& x) {
    QGatedMlp(b, q, x, h, w);
  });
  if (r.shared_width == 0) return;
  QGatedMlp(b, q, p + "shared_experts", h, r.shared_width, mlp_bias);
}

}  // namespace memfit::arch
