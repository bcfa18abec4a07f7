// Fused routed experts as stored, fused or per expert (expert_kit.h).

#include "model/arch/expert_kit.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

constexpr const char* kPerExpertAssumption =
    "quantized fused experts stored per expert (experts.E.{gate,up,down}_proj, ModelOpt's unfused "
    "export, as nvidia/Gemma-4-26B-A4B-NVFP4 stores them); a fused export holds the same packed "
    "weights and block scales and differs only in float32 scalars (under 24 bytes an expert)";

}  // namespace

Quantization QuantizationFor(const Quantization& q, const std::string& module) {
  if (q.method != QuantMethod::kMixed) return q;
  Quantization out = q;
  out.per_module.clear();
  auto it = std::lower_bound(q.per_module.begin(), q.per_module.end(),
                             std::make_pair(module, QuantMethod::kNone));
  out.method = it != q.per_module.end() && it->first == module ? it->second : QuantMethod::kNone;
  return out;
}

bool QuantizesModule(const Quantization& q, const std::string& module) {
  const QuantMethod m = QuantizationFor(q, module).method;
  return m != QuantMethod::kNone && m != QuantMethod::kMxfp4 && !SkipsModule(q, module);
}

void FusedExperts(ModelBuilder& b, const Quantization& q, const FusedExpertsSpec& s) {
  if (QuantizesModule(q, s.path)) {
    auto& assumptions = b.model().assumptions;
    // mlx-lm stacks the experts (switch_mlp.*.weight [experts, out, in x bits / 32]): the bytes
    // of per-expert linears, so no assumption.
    const bool said = q.method == QuantMethod::kMlx ||
                      std::find(assumptions.begin(), assumptions.end(), kPerExpertAssumption) !=
                          assumptions.end();
    if (!said) assumptions.push_back(kPerExpertAssumption);
    const Quantization eq = QuantizationFor(q, s.path);
    RepeatedModules(b, eq, s.path, s.experts, [&](const std::string& x) {
      QGatedMlp(b, eq, x, s.hidden, s.width);
    });
    return;
  }
  const uint64_t width2 = MulDims(b, s.width, 2, "2 x moe_intermediate_size");
  b.Param(s.path + ".gate_up_proj", s.in_first ? std::vector<uint64_t>{s.experts, s.hidden, width2}
                                               : std::vector<uint64_t>{s.experts, width2, s.hidden});
  b.Param(s.path + ".down_proj", s.in_first ? std::vector<uint64_t>{s.experts, s.width, s.hidden}
                                            : std::vector<uint64_t>{s.experts, s.hidden, s.width});
}

}  // namespace memfit::arch
