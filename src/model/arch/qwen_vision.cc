// The Qwen vision-language composites (qwen_vision.h): a Qwen2 / Qwen3 / Qwen3-MoE text model and a
// Qwen vision tower (a VisionTowerSpec row below), lm_head at the top.
// - qwen2_vl, qwen2_5_vl (Qwen2[_5]VLForConditionalGeneration; transformers models/qwen2_vl/
//   modeling_qwen2_vl.py, qwen2_5_vl/modeling_qwen2_5_vl.py and their checkpoint-conversion key
//   mapping): configs with the text keys at the top level (transformers < 4.52: Qwen2-VL-7B-
//   Instruct, olmOCR-7B-0225-preview, checked byte-exact against its index) store model.layers.*
//   and visual.*; configs with a "text_config" (>= 4.52) model.language_model.* and model.visual.*.
// - qwen3_vl, qwen3_vl_moe (Qwen3VL[Moe]ForConditionalGeneration; qwen3_vl/modeling_qwen3_vl.py,
//   qwen3_vl_moe/modeling_qwen3_vl_moe.py): model.language_model.* (the MoE variant's experts
//   fused as mlp.experts.gate_up_proj [E, H, 2I] and down_proj [E, I, H]), the tower with
//   deepstack mergers under model.visual; checked byte-exact against nvidia/Cosmos-Reason2-8B's
//   shard sizes (ground truth test).

#include "model/arch/qwen_vision.h"

#include <algorithm>

#include "formats/hf_config_json.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/qwen_hybrid.h"
#include "model/arch/vision_tower.h"

namespace memfit::arch {

namespace {

using enum VisionOp;

// The Qwen patch mergers: a norm over the vision width (over the merged patches for the deepstack
// mergers), then two Linear layers over H x merge^2 (`names`: the norm's and theirs); one
// deepstack merger per "deepstack_visual_indexes" entry under `list` (none when null).
void QwenMergers(ModelBuilder& b, const HfConfig& v, const VisionTowerSpec& s, const VisionDims& d,
                 const std::string& p, const Quantization& q, const char* const (&names)[3],
                 const char* list) {
  const uint64_t merged = MulDims(b, d.hidden, MulDims(b, d.merge, d.merge, "spatial_merge_size^2"),
                                  "vision width x spatial_merge_size^2");
  uint64_t deepstack = 0;
  if (auto it = v.raw().find("deepstack_visual_indexes");
      list != nullptr && it != v.raw().end() && it->is_array()) {
    deepstack = it->size();
  }
  for (uint64_t k = 0; k <= deepstack && !b.failed(); ++k) {
    const std::string m = k == 0 ? p + ".merger" : Layer(p + "." + list, k - 1);
    const uint64_t norm_width = k == 0 ? d.hidden : merged;
    if (s.rms_norm) {
      b.RmsNorm(m + "." + names[0], norm_width);
    } else {
      b.LayerNorm(m + "." + names[0], norm_width);
    }
    QLinear(b, q, m + "." + names[1], merged, merged, true);
    QLinear(b, q, m + "." + names[2], merged, d.out, true);
  }
}
constexpr const char* kQwen2MergerNames[3] = {"ln_q", "mlp.0", "mlp.2"};
void Qwen2Merger(ModelBuilder& b, const HfConfig& v, const VisionTowerSpec& s, const VisionDims& d,
                 const std::string& p, const Quantization& q) {
  QwenMergers(b, v, s, d, p, q, kQwen2MergerNames, nullptr);
}
void Qwen3VlMergers(ModelBuilder& b, const HfConfig& v, const VisionTowerSpec& s,
                    const VisionDims& d, const std::string& p, const Quantization& q) {
  QwenMergers(b, v, s, d, p, q, {"norm", "linear_fc1", "linear_fc2"}, "deepstack_merger_list");
}
void Qwen3OmniMergers(ModelBuilder& b, const HfConfig& v, const VisionTowerSpec& s,
                      const VisionDims& d, const std::string& p, const Quantization& q) {
  QwenMergers(b, v, s, d, p, q, kQwen2MergerNames, "merger_list");
}

// Qwen2-VL's and Qwen3-VL's block (Qwen2VLVisionBlock, Qwen3VLVisionBlock): fused qkv, fc1/fc2.
std::vector<VisionItem> QwenBlock(const char* fc1, const char* fc2) {
  return {{kNorm, "norm1"},
          {kNorm, "norm2"},
          {kQkv, "attn.qkv", VisionBias::kBias},
          {kOut, "attn.proj", VisionBias::kBias},
          {kFc1, fc1, VisionBias::kBias},
          {kFc2, fc2, VisionBias::kBias}};
}

// The Qwen towers' common keys (Qwen2VLVisionConfig and its successors; "in_chans" is the older
// spelling of "in_channels"; width "hidden_size", text width "out_hidden_size" after Qwen2-VL):
// patch_embed.proj a Conv3d, blocks, the mergers, then the rotary table's inv_freq.
VisionTowerSpec QwenTower(VisionTowerSpec s) {
  if (s.out.key == nullptr) {
    s.hidden = {"hidden_size", kRequired};
    s.out = {"out_hidden_size", kTextWidth};
  }
  s.depth = {"depth", kRequired};
  s.heads = {"num_heads", kRequired};
  s.channels = {"in_channels", 3, "in_chans"};
  s.patch = {"patch_size", 14};
  s.image = {};
  if (s.positions == VisionPositions::kPatches) s.positions = VisionPositions::kNone;
  s.temporal = {"temporal_patch_size", 2};
  s.merge = {"spatial_merge_size", 2};
  s.layers = "blocks";
  s.tail = {{kExtra}, {kRotary, "rotary_pos_emb.inv_freq"}};
  return s;
}

// Qwen2VisionTransformerPretrainedModel (models/qwen2_vl/modeling_qwen2_vl.py): width
// "embed_dim", MLP embed_dim x "mlp_ratio", text width "hidden_size"; LayerNorms, no patch bias.
const VisionTowerSpec kQwen2VlTower = QwenTower({.hidden = {"embed_dim", kRequired},
                                                 .mlp_ratio = {"mlp_ratio", 4},
                                                 .out = {"hidden_size", kTextWidth},
                                                 .embeddings = {{kPatchConv, "patch_embed.proj"}},
                                                 .layer = QwenBlock("mlp.fc1", "mlp.fc2"),
                                                 .extra = Qwen2Merger});

// Qwen2.5-VL (qwen2_5_vl/modeling_qwen2_5_vl.py): RMSNorms and a gated MLP with biases.
const VisionTowerSpec kQwen25VlTower = QwenTower({.intermediate = {"intermediate_size", kRequired},
                                                  .rms_norm = true,
                                                  .embeddings = {{kPatchConv, "patch_embed.proj"}},
                                                  .layer = {{kNorm, "norm1"},
                                                            {kNorm, "norm2"},
                                                            {kQkv, "attn.qkv", VisionBias::kBias},
                                                            {kOut, "attn.proj", VisionBias::kBias},
                                                            {kGatedMlp, "mlp", VisionBias::kBias}},
                                                  .extra = Qwen2Merger});
// Qwen2.5-Omni's Qwen2_5OmniVisionEncoder (qwen2_5_omni/modeling_qwen2_5_omni.py): Qwen2.5-VL's
// with separate attn.q/k/v (biased) in place of attn.qkv.
const VisionTowerSpec kQwen25OmniTower = [] {
  VisionTowerSpec s = kQwen25VlTower;
  s.layer = {{kNorm, "norm1"},
             {kNorm, "norm2"},
             {kQ, "attn.q", VisionBias::kBias},
             {kK, "attn.k", VisionBias::kBias},
             {kV, "attn.v", VisionBias::kBias},
             {kOut, "attn.proj", VisionBias::kBias},
             {kGatedMlp, "mlp", VisionBias::kBias}};
  return s;
}();

// Qwen3VLVisionModel (qwen3_vl/modeling_qwen3_vl.py; Qwen3.5): a patch bias, a learned pos_embed
// ["num_position_embeddings", H], LayerNorms, deepstack mergers. Qwen3-Omni's
// Qwen3OmniMoeVisionEncoder (qwen3_omni_moe/modeling_qwen3_omni_moe.py): Qwen2-style mergers.
const VisionTowerSpec kQwen3VlTower =
    QwenTower({.intermediate = {"intermediate_size", kRequired},
               .positions = VisionPositions::kKey,
               .position_key = {"num_position_embeddings", kRequired},
               .embeddings = {{kPatchConv, "patch_embed.proj", VisionBias::kBias},
                              {kPositionTable, "pos_embed"}},
               .layer = QwenBlock("mlp.linear_fc1", "mlp.linear_fc2"),
               .extra = Qwen3VlMergers});
const VisionTowerSpec kQwen3OmniTower = [] {
  VisionTowerSpec s = kQwen3VlTower;
  s.extra = Qwen3OmniMergers;
  return s;
}();

}  // namespace

void EmitQwenVision(ModelBuilder& b, const HfConfig& v, QwenVision kind, const std::string& p,
                    uint64_t text_hidden, const Quantization* q) {
  static const VisionTowerSpec* const kRows[] = {&kQwen2VlTower, &kQwen25VlTower, &kQwen3VlTower,
                                                 &kQwen25OmniTower, &kQwen3OmniTower};
  EmitVisionTower(b, v, *kRows[static_cast<size_t>(kind)], p, text_hidden, q);
}

// The text model's "model." tensors renamed to the text prefix (lm_head kept), then the tower;
// components "language_model" and "vision_tower"; hp from the text model.
Result<Model> BuildQwenVl(const HfConfig& c, const BuildOptions& o, const QwenVlSpec& spec) {
  const bool nested = c.Has("text_config") || !spec.top_level_layout;
  const std::string text_prefix = nested ? "model.language_model." : "model.";
  const std::string vision_prefix = nested ? "model.visual" : "visual";
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text_config, QwenTextConfig(c));
  nlohmann::json text_json = text_config.raw();
  text_json["architectures"] = {spec.text_class};
  text_json.erase("vision_config");
  // The quantization_config names the language model's modules as the checkpoint stores them.
  CarryQuantization(c, text_json, {.model_prefixes = {text_prefix}, .head_names = {"lm_head"}});
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text,
                          HfConfig::FromJson(std::move(text_json), text_config.where()));
  BuildOptions text_options = o;
  text_options.head_class.clear();
  MEMFIT_ASSIGN_OR_RETURN(Model language, spec.text_builder(text, text_options));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, c.Sub("vision_config"));

  ModelBuilder b(c, text.torch_dtype().value_or(Dtype::kF32));
  Model& m = b.model();
  auto rename = [&](std::string& name) {
    if (name.starts_with("model.")) name = text_prefix + name.substr(6);
  };
  for (auto& t : language.tensors) {
    rename(t.name);
    if (!t.tied_to.empty()) rename(t.tied_to);
    t.component = "language_model";
    m.tensors.push_back(std::move(t));
  }
  m.hp = std::move(language.hp);
  if (c.Has("text_config")) m.hp.text_config_key = "text_config";
  m.assumptions = std::move(language.assumptions);
  m.notes = std::move(language.notes);
  // The tower under the same quantization_config (the top level's, or text_config's where
  // QwenTextConfig found it), its modules named as stored.
  const Quantization q = ReadQuantization(b, text_config, o);
  b.SetComponent("vision_tower");
  EmitQwenVision(b, vision, spec.vision, vision_prefix, m.hp.hidden_size, &q);
  // _no_split_modules: the text decoder layer and the vision block.
  m.no_split_patterns = {text_prefix + "layers.*", vision_prefix + ".blocks.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

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

constexpr QwenVlSpec kQwen2Vl = {BuildQwen2, "Qwen2ForCausalLM", QwenVision::kQwen2Vl, true};
constexpr QwenVlSpec kQwen25Vl = {BuildQwen2, "Qwen2ForCausalLM", QwenVision::kQwen25Vl, true};
constexpr QwenVlSpec kQwen3Vl = {BuildQwen3, "Qwen3ForCausalLM"};
constexpr QwenVlSpec kQwen3VlMoe = {BuildQwen3VlMoeText, "Qwen3MoeForCausalLM"};

}  // namespace memfit::arch
