// The generic builder for decoder LLMs memfit has no exact builder for: embeddings, one layer per
// LayerInfo that ReadTextHyperparameters found (attention of any kind or a recurrent mixer; dense,
// MoE or both), norms, the LM head (tied or not), multi-token-prediction layers (stored, not
// loaded) and an approximate vision tower from "vision_config". Labelled approximate in the
// model's assumptions; its error against every exact builder and index total_size is measured by
// generic_decoder_accuracy_test.cc and printed in docs/architectures.md.
// BuildNestedTextModel (issue 30): an unknown outer model_type whose text_config's model_type
// has a builder, and which states its own width and depth, is that text model, exact, with the
// rest not counted.

#include <fmt/format.h>

#include "formats/hf_config_json.h"
#include "memfit/text_hparams.h"
#include "model/arch/builder_kit.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/generic_layers.h"
#include "model/arch/issue30_families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/quantization.h"
#include "model/hparams/config_keys.h"

namespace memfit::arch {
namespace {

using hparams::ConfigKeys;

generic::Extras ReadExtras(ConfigKeys& k, const Hyperparameters& hp) {
  generic::Extras x;
  x.attention_bias = k.Bool({"attention_bias", "bias"}, false);
  x.qkv_bias =
      k.Bool({"qkv_bias", "add_qkv_bias"}, false) || k.String({"model_type"}).starts_with("qwen2");
  x.qk_norm = k.Bool({"use_qk_norm", "qk_norm", "qk_layernorm"}, false) ||
              k.Has({"qk_norm_type"}) || k.String({"model_type"}).starts_with("qwen3");
  x.output_gate = k.Bool({"attn_output_gate", "attention_output_gate"}, false) ||
                  k.String({"model_type"}) == "qwen3_next";
  x.o_lora_rank = k.Uint({"o_lora_rank"});
  x.o_groups = k.Uint({"o_groups"});
  x.index_n_heads = k.Uint({"index_n_heads"});
  x.index_head_dim = k.Uint({"index_head_dim"});
  x.shared_expert_gate = k.Has({"shared_expert_intermediate_size"});
  x.router_bias = k.String({"topk_method"}) == "noaux_tc" ||
                  k.Bool({"use_routing_bias", "use_moe_router_bias"}, false);
  x.moe_latent = k.Uint({"moe_latent_size", "routed_expert_hidden_size"});
  x.linear_k_heads = k.Uint({"linear_num_key_heads"}, 16);
  x.linear_k_dim = k.Uint({"linear_key_head_dim"}, 128);
  x.linear_v_heads = k.Uint({"linear_num_value_heads"}, 32);
  x.linear_v_dim = k.Uint({"linear_value_head_dim"}, 128);
  for (const auto& L : hp.layers) {
    if (L.mixer == LayerMixer::kMamba2) {
      x.mamba_heads = L.state.heads;
      x.mamba_d_state = k.Uint({"mamba_d_state", "ssm_state_size", "state_size", "d_state"}, 128);
      x.mamba_groups = k.Uint({"mamba_n_groups", "n_groups", "ngroups"}, 1);
      x.mamba_d_inner = L.state.conv_channels - 2 * x.mamba_groups * x.mamba_d_state;
    } else if (L.mixer == LayerMixer::kKimiDelta) {
      x.kda_heads = L.state.heads;
      x.kda_head_dim = L.state.conv_channels / (3 * (L.state.heads ? L.state.heads : 1));
    }
  }
  return x;
}

// An approximate ViT-style tower from "vision_config": patch embedding, depth x (attention +
// MLP + two norms), a merger into the text width. Reported as the "vision_tower" component.
void GenericDecoderVisionTower(ModelBuilder& b, const HfConfig& config, uint64_t text_hidden,
                               std::vector<std::string>& assumptions) {
  auto it = config.raw().find("vision_config");
  if (it == config.raw().end() || !it->is_object()) return;
  auto vc = HfConfig::FromJson(*it, config.where() + ": vision_config");
  if (!vc) return;
  ConfigKeys k(*vc, hparams::TextSection{&vc->raw(), "", false});
  // A vision config memfit cannot read: the text model still answers.
  const auto unreadable = [&] {
    if (k.failed()) assumptions.push_back("vision tower not counted: " + k.error().message);
    return k.failed();
  };
  const uint64_t depth = k.Uint({"depth", "num_hidden_layers", "num_layers", "n_layers"});
  const uint64_t w = k.Uint({"hidden_size", "embed_dim", "width", "d_model"});
  if (unreadable() || depth == 0 || w == 0) return;
  const uint64_t f = k.Uint({"intermediate_size", "mlp_dim", "ffn_dim"}, 4 * w);
  const uint64_t patch = k.Uint({"patch_size", "spatial_patch_size"}, 14);
  const uint64_t channels = k.Uint({"in_channels", "num_channels", "in_chans"}, 3);
  const uint64_t temporal = k.Uint({"temporal_patch_size"}, 1);
  const uint64_t merge = k.Uint({"spatial_merge_size"}, 1);
  const uint64_t out = k.Uint({"out_hidden_size", "projection_dim"}, text_hidden);
  const bool gated = k.String({"hidden_act"}) == "silu";
  if (unreadable()) return;
  b.SetComponent("vision_tower");
  b.Conv("model.visual.patch_embed.proj", channels, w, {temporal, patch, patch}, true);
  for (uint64_t i = 0; i < depth && !b.failed(); ++i) {
    const std::string l = Layer("model.visual.blocks", i);
    b.LayerNorm(l + ".norm1", w);
    b.Linear(l + ".attn.qkv", w, 3 * w, true);
    b.Linear(l + ".attn.proj", w, w, true);
    b.LayerNorm(l + ".norm2", w);
    if (gated) b.Linear(l + ".mlp.gate_proj", w, f, true);
    b.Linear(l + ".mlp.up_proj", w, f, true);
    b.Linear(l + ".mlp.down_proj", f, w, true);
  }
  if (out > 0) {  // a projector into the text model's width
    const uint64_t merged = MulDims(b, w, merge * merge, "vision hidden x merge^2");
    b.LayerNorm("model.visual.merger.norm", w);
    b.Linear("model.visual.merger.fc1", merged, merged, true);
    b.Linear("model.visual.merger.fc2", merged, out, true);
  }
  b.SetComponent("");
  assumptions.push_back(
      fmt::format("vision tower approximated as a {}-block ViT of width {} "
                  "(no exact builder for this family's vision encoder)",
                  depth, w));
}

}  // namespace

Result<Model> BuildGenericDecoder(const HfConfig& c, const BuildOptions& options) {
  MEMFIT_ASSIGN_OR_RETURN(TextHyperparameters text, ReadTextHyperparameters(c));
  hparams::TextSection section = hparams::FindTextSection(c);
  ConfigKeys keys(c, section);
  const std::string type = keys.String({"model_type"}, c.model_type());
  // The checkpoint dtype: the top level, else the text section, else float32 (stated).
  std::vector<std::string> dtype_assumptions;
  Dtype dtype = Dtype::kF32;
  if (auto d = c.torch_dtype()) {
    dtype = *d;
  } else if (auto sub = HfConfig::FromJson(*section.json, text.where); sub && sub->torch_dtype()) {
    dtype = *sub->torch_dtype();
  } else {
    dtype_assumptions.push_back(kFloat32CheckpointAssumption);
  }
  ModelBuilder b(c, dtype);
  Model& m = b.model();
  m.hp = std::move(text.hp);
  const Hyperparameters& hp = m.hp;
  if (hp.vocab_size == 0) {
    return MakeError("{}: no \"vocab_size\": the embedding and LM head cannot be sized",
                     text.where);
  }
  const generic::Extras x = ReadExtras(keys, hp);
  Quantization q = ReadQuantization(b, c, options);
  if (b.failed()) {
    // A quantization format the config-only builders do not model: count the weights in the
    // checkpoint dtype and say so, rather than refuse.
    const nlohmann::json* qc = QuantizationConfigJson(c);
    std::string why =
        qc && qc->is_object() && qc->contains("quant_method") && (*qc)["quant_method"].is_string()
            ? (*qc)["quant_method"].get<std::string>()
            : std::string("?");
    ModelBuilder fresh(c, dtype);
    fresh.model().hp = std::move(m.hp);
    b = std::move(fresh);
    q = Quantization{};
    dtype_assumptions.push_back(fmt::format(
        "quantization_config (quant_method \"{}\") is not modelled from config.json: weights "
        "counted unquantized in {}; the safetensors headers give the stored sizes",
        why, DtypeName(dtype)));
  }
  Model& model = b.model();
  const Hyperparameters& h = model.hp;
  const std::string base = section.key.empty() ? "model." : "model.language_model.";
  b.Embedding(base + "embed_tokens", h.vocab_size, h.hidden_size);
  const uint64_t mtp = std::min<uint64_t>(h.num_mtp_layers, 16);
  for (uint64_t i = 0; i < h.num_layers + mtp && !b.failed(); ++i) {
    const bool is_mtp = i >= h.num_layers;
    const LayerInfo& L = h.layers[is_mtp ? h.num_layers - 1 : i];
    const std::string l = Layer(base + "layers", i);
    const size_t first = model.tensors.size();
    b.RmsNorm(l + ".input_layernorm", h.hidden_size);
    generic::Mixer(b, q, l, L, h, x);
    if (L.moe || L.intermediate_size > 0) {
      b.RmsNorm(l + ".post_attention_layernorm", h.hidden_size);
      generic::Mlp(b, q, l, L, h, x);
    }
    if (is_mtp) {  // DeepSeek-style MTP block: enorm, hnorm, eh_proj; stored, not loaded
      b.RmsNorm(l + ".enorm", h.hidden_size);
      b.RmsNorm(l + ".hnorm", h.hidden_size);
      b.Linear(l + ".eh_proj", 2 * h.hidden_size, h.hidden_size, false);
      MarkStoredOnly(model, first);
    }
  }
  b.RmsNorm(base + "norm", h.hidden_size);
  LmHead(b, base + "embed_tokens");
  GenericDecoderVisionTower(b, c, h.hidden_size, model.assumptions);
  NoteQuantization(b, q);
  model.no_split_patterns = {base + "layers.*", "model.visual.blocks.*"};
  model.base_model_prefix = "model.";
  model.source = "config.json (generic decoder: approximate)";
  model.assumptions.insert(model.assumptions.begin(),
                           fmt::format("approximate: no builder for model_type \"{}\"; weights "
                                       "from standard config keys",
                                       type.empty() ? "?" : type));
  for (auto& a : dtype_assumptions) model.assumptions.push_back(std::move(a));
  for (auto& a : text.assumptions) model.assumptions.push_back(std::move(a));
  if (mtp > 0) {
    model.notes.push_back(
        fmt::format("{} multi-token-prediction layer(s) counted as stored but "
                    "not loaded by transformers",
                    mtp));
  }
  return b.Finish();
}

namespace {

// "mistral4" -> "Mistral4ForCausalLM": a causal-LM class for a text model_type, so that its
// builder emits the LM head.
std::string CausalLmClass(std::string_view type) {
  std::string out;
  bool upper = true;
  for (char ch : type) {
    if (ch == '_' || ch == '-') {
      upper = true;
      continue;
    }
    out += upper && ch >= 'a' && ch <= 'z' ? static_cast<char>(ch - 'a' + 'A') : ch;
    upper = false;
  }
  return out + "ForCausalLM";
}

}  // namespace

std::optional<Result<Model>> BuildNestedTextModel(const HfConfig& c, const BuildOptions& o) {
  const auto it = c.raw().find("text_config");
  if (it == c.raw().end() || !it->is_object()) return std::nullopt;
  const auto type_it = it->find("model_type");
  if (type_it == it->end() || !type_it->is_string()) return std::nullopt;
  const std::string type = type_it->get<std::string>();
  if (type == c.model_type()) return std::nullopt;
  const ArchitectureBuilder* builder = FindArchitectureBuilder(type, "");
  if (builder == nullptr) return std::nullopt;
  // A text_config that states no width or depth of its own (xgen-mm's names only its model_type
  // and a window) would be built from the text family's class defaults: a guess about a model
  // the wrapper's own code defines. Such configs go to the generic reader, as before.
  const auto states_any = [&](std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      if (it->contains(key)) return true;
    }
    return false;
  };
  if (!states_any({"hidden_size", "d_model", "n_embd", "dim"}) ||
      !states_any({"num_hidden_layers", "num_layers", "n_layer", "n_layers"})) {
    return std::nullopt;
  }
  std::vector<std::string> defaulted;
  auto text = TextSubConfig(c, "text_config", type, CausalLmClass(type), defaulted,
                            StoredAndLoadedNames("model.language_model", "lm_head"));
  if (!text) return Result<Model>(text.error());
  BuildOptions text_options = o;
  text_options.head_class.clear();
  auto language = builder->build(*text, text_options);
  if (!language) return Result<Model>(language.error());
  ModelBuilder b(c);
  Model& m = b.model();
  AppendLanguageModel(m, std::move(*language), c, std::move(defaulted), "model.language_model",
                      "lm_head", "language_model");
  m.no_split_patterns = {"model.language_model.layers.*"};
  m.source = "config.json (text_config built exactly; the rest not counted: approximate)";
  m.assumptions.insert(
      m.assumptions.begin(),
      fmt::format("approximate: no builder for model_type \"{}\"; its text_config (model_type "
                  "\"{}\") is built exactly with that family's builder, and the rest of the "
                  "model (vision or audio towers, projectors) is not counted",
                  c.model_type(), type));
  return Result<Model>(b.Finish());
}

Result<Model> BuildGenericVision(const HfConfig& c, const BuildOptions& /*options*/) {
  auto it = c.raw().find("vision_config");
  if (it == c.raw().end() || !it->is_object()) {
    return MakeError("{}: no text model and no \"vision_config\" to build from", c.where());
  }
  ModelBuilder b(c);
  GenericDecoderVisionTower(b, c, 0, b.model().assumptions);
  if (!b.failed() && b.model().tensors.empty()) {
    return MakeError(
        "{}: vision_config has no depth and width (\"num_hidden_layers\", "
        "\"hidden_size\")",
        c.where());
  }
  Model& model = b.model();
  model.no_split_patterns = {"model.visual.blocks.*"};
  model.source = "config.json (generic vision encoder: approximate)";
  model.assumptions.insert(model.assumptions.begin(),
                           fmt::format("approximate: no builder for model_type \"{}\"; only its "
                                       "vision encoder is counted, from \"vision_config\"",
                                       c.model_type()));
  return b.Finish();
}

}  // namespace memfit::arch
