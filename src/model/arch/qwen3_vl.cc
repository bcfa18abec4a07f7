// Qwen3-VL (qwen3_vl, qwen3_vl_moe: Qwen3VL[Moe]ForConditionalGeneration): a Qwen3 text model
// from "text_config" under model.language_model (q_norm/k_norm; the MoE variant's experts stored
// fused as mlp.experts.gate_up_proj [E, H, 2I] and down_proj [E, I, H]), lm_head at the top, and
// the vision tower with deepstack mergers under model.visual (qwen_vision.h). Checked byte-exact
// against nvidia/Cosmos-Reason2-8B's shard sizes (ground truth test).
// Sources: transformers/models/qwen3_vl/modeling_qwen3_vl.py,
// qwen3_vl_moe/modeling_qwen3_vl_moe.py.

#include <algorithm>

#include "model/arch/families.h"
#include "model/arch/qwen_hybrid.h"
#include "model/arch/qwen_vision.h"

namespace memfit::arch {
namespace {

// BuildQwen3Moe's per-expert tensors, fused as the Qwen3-VL-MoE checkpoints store them.
Result<Model> BuildQwen3VlMoeText(const HfConfig& c, const BuildOptions& o) {
  MEMFIT_ASSIGN_OR_RETURN(Model m, BuildQwen3Moe(c, o));
  const auto& hp = m.hp;
  // Quantized experts (scales beside the weights, or packed weights) stay one module per expert:
  // transformers' quantizers replace nn.Linear modules, and Qwen's FP8 MoE releases store
  // experts.E.{gate,up,down}_proj with their scales (printed as an assumption).
  const bool quantized = std::any_of(m.tensors.begin(), m.tensors.end(), [](const Tensor& t) {
    return t.name.find(".mlp.experts.") != std::string::npos &&
           (!t.name.ends_with("_proj.weight") || t.logical_params.has_value() ||
            t.dtype == Dtype::kF8E4M3);
  });
  if (quantized) {
    m.assumptions.push_back(
        "quantized experts are counted one module per expert "
        "(mlp.experts.E.{gate,up,down}_proj with their scales), the layout of Qwen's FP8 "
        "releases, not the fused gate_up_proj/down_proj of the bf16 checkpoints");
    return m;
  }
  std::vector<Tensor> out;
  out.reserve(m.tensors.size());
  for (auto& t : m.tensors) {
    const size_t at = t.name.find(".mlp.experts.");
    if (at == std::string::npos) {
      out.push_back(std::move(t));
      continue;
    }
    if (!t.name.ends_with(".experts.0.gate_proj.weight")) continue;
    const std::string l = t.name.substr(0, at) + ".mlp.experts.";
    const std::pair<const char*, std::vector<uint64_t>> fused[] = {
        {"gate_up_proj", {hp.num_experts, hp.hidden_size, 2 * hp.moe_intermediate_size}},
        {"down_proj", {hp.num_experts, hp.moe_intermediate_size, hp.hidden_size}}};
    for (const auto& [name, shape] : fused) {
      Tensor f = t;  // copy 0 of a compact run, or the expert 0 of every expert
      f.copies = 1;
      f.repeat_span = 0;
      f.repeat_index_from_end = 0;
      f.name = l + name;
      f.shape = shape;
      f.numel = shape[0] * shape[1] * shape[2];  // E x (a checked expert tensor's size)
      f.bytes = TensorBytes(f.numel, f.dtype).value_or(0);
      out.push_back(std::move(f));
    }
  }
  m.tensors = std::move(out);
  return m;
}

}  // namespace

Result<Model> BuildQwen3Vl(const HfConfig& c, const BuildOptions& o) {
  return BuildQwenVl(c, o, {.text_builder = BuildQwen3, .text_class = "Qwen3ForCausalLM",
                            .text_prefix = "model.language_model",
                            .vision = QwenVision::kQwen3Vl, .vision_prefix = "model.visual"});
}

Result<Model> BuildQwen3VlMoe(const HfConfig& c, const BuildOptions& o) {
  return BuildQwenVl(c, o, {.text_builder = BuildQwen3VlMoeText,
                            .text_class = "Qwen3MoeForCausalLM",
                            .text_prefix = "model.language_model",
                            .vision = QwenVision::kQwen3Vl, .vision_prefix = "model.visual"});
}

}  // namespace memfit::arch
