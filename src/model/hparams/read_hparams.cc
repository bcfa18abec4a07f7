// ReadTextHyperparameters: the text model's dimensions under every alias the families use, then
// one LayerInfo per layer from the layer pattern (layer_pattern.cc) and the per-layer facts
// (layer_facts.cc: recurrent state, head lists, block configs). Aliases and their sources are
// listed in docs/architectures.md, "Hyperparameters from any config".

#include <algorithm>
#include <initializer_list>
#include <string_view>
#include <set>

#include <fmt/format.h>

#include "memfit/text_hparams.h"
#include "model/hparams/config_keys.h"
#include "model/hparams/layer_facts.h"
#include "model/hparams/layer_pattern.h"

namespace memfit {
namespace {

using hparams::ConfigKeys;
using hparams::LayerKind;
using hparams::LayerVariants;

// The most layers a text model may have (real ones have at most a few hundred); bounds the
// per-layer vectors a hostile config can make memfit allocate.
constexpr uint64_t kMaxTextLayers = 16384;

// A head count that may be a list, one per layer (issue 30: Laguna's per-layer attention heads,
// OpenELM's, llama.cpp-converted LFM2's "num_key_value_heads" with 0 for conv layers): the
// largest entry as the model's scalar; ApplyHeadList sets each layer's.
uint64_t HeadCount(ConfigKeys& keys, std::initializer_list<std::string_view> names) {
  const nlohmann::json* v = keys.Find(names);
  if (v == nullptr || !v->is_array()) return keys.Uint(names);
  uint64_t most = 0;
  if (auto list = keys.UintList(names)) {
    for (uint64_t x : *list) most = std::max(most, x);
  }
  return most;
}

// The shape every family has: hidden size, layers, vocabulary, context, attention and KV heads,
// head dimension. An error when there are no layers or no hidden size, or absurdly many layers.
Status ReadShape(ConfigKeys& keys, Hyperparameters& hp, std::vector<std::string>& assumptions) {
  hp.hidden_size = keys.Uint({"hidden_size", "n_embd", "n_embed", "d_model", "dim", "model_dim"});
  hp.num_layers = keys.Uint({"num_hidden_layers", "n_layer", "num_layers", "n_layers"});
  hp.vocab_size = keys.Uint({"vocab_size", "padded_vocab_size", "n_vocab"});
  hp.max_position_embeddings = keys.Uint({"max_position_embeddings", "n_positions", "seq_length",
                                          "max_seq_len", "max_sequence_length", "n_ctx",
                                          "model_max_length"});
  hp.num_attention_heads = HeadCount(keys, {"num_attention_heads", "n_head", "num_heads", "n_heads",
                                            "n_attention_heads"});
  if (hp.num_layers == 0) {
    // Nemotron-3-Ultra's config gives the layers only as "layers_block_type".
    if (auto words = keys.StringList({"layers_block_type", "layer_types"})) {
      hp.num_layers = words->size();
    } else if (const auto* p = keys.Find({"hybrid_override_pattern"}); p && p->is_string()) {
      hp.num_layers = p->get<std::string>().size();
    }
  }
  if (keys.failed()) return keys.error();
  if (hp.num_layers == 0 || hp.hidden_size == 0) {
    return MakeError("{}: no number of layers (\"num_hidden_layers\", \"n_layer\", "
                     "\"num_layers\") or hidden size (\"hidden_size\", \"n_embd\", \"d_model\") "
                     "in any part of the config",
                     keys.where());
  }
  if (hp.num_layers > kMaxTextLayers) {
    return MakeError("{}: {} layers is absurd (limit {})", keys.where(), hp.num_layers,
                     kMaxTextLayers);
  }
  // KV heads: "num_key_value_heads" and aliases; "multi_query" (GPT-BigCode, Falcon) is one head;
  // ChatGLM's "multi_query_group_num" applies when "multi_query_attention" is set.
  if (keys.Bool({"multi_query"}, false)) {
    hp.num_kv_heads = 1;
  } else if (keys.Bool({"multi_query_attention"}, false)) {
    hp.num_kv_heads = keys.Uint({"multi_query_group_num"}, 1);
  } else {
    hp.num_kv_heads = HeadCount(keys, {"num_key_value_heads", "num_kv_heads", "n_kv_heads",
                                       "num_query_groups", "n_head_kv", "num_kv"});
  }
  if (hp.num_kv_heads == 0 && hp.num_attention_heads > 0) {
    hp.num_kv_heads = hp.num_attention_heads;
    if (!keys.Has({"num_key_value_heads"})) {
      assumptions.push_back("no \"num_key_value_heads\": multi-head attention assumed (as many "
                            "KV heads as attention heads)");
    }
  }
  hp.head_dim = keys.Uint({"head_dim", "kv_channels", "attention_head_dim", "d_kv", "head_size"});
  if (hp.head_dim == 0 && hp.num_attention_heads > 0) {
    hp.head_dim = hp.hidden_size / hp.num_attention_heads;
  }
  return Ok{};
}

// The MLP: its width (LFM2's adjustment; 4 x hidden when the config names none), activation,
// gating and norm. Returns the dense layers' width ("intermediate_size_mlp",
// "dense_intermediate_size"; else the MLP's).
uint64_t ReadMlp(ConfigKeys& keys, const std::string& model_type, Hyperparameters& hp,
                 std::vector<std::string>& assumptions) {
  hp.intermediate_size = keys.Uint({"intermediate_size", "ffn_hidden_size", "n_inner", "d_ff",
                                    "ffn_dim", "block_ff_dim", "ffn_intermediate_size",
                                    "inner_hidden_size"});
  if (keys.Bool({"block_auto_adjust_ff_dim"}, false) && hp.intermediate_size > 0) {
    // LFM2 (transformers Lfm2MLP): 2/3 of the width, times block_ffn_dim_multiplier, rounded up
    // to block_multiple_of.
    uint64_t ff = 2 * hp.intermediate_size / 3;
    double multiplier = keys.Number({"block_ffn_dim_multiplier"}, 1.0);
    if (!(multiplier > 0 && multiplier <= 16)) multiplier = 1.0;  // NaN or absurd: ignored
    ff = static_cast<uint64_t>(multiplier * static_cast<double>(ff));
    const uint64_t multiple = std::max<uint64_t>(keys.Uint({"block_multiple_of"}, 256), 1);
    hp.intermediate_size = (ff + multiple - 1) / multiple * multiple;
  }
  if (hp.intermediate_size == 0 &&
      !keys.Has({"intermediate_size_mlp", "dense_intermediate_size"})) {
    hp.intermediate_size = 4 * hp.hidden_size;
    assumptions.push_back(fmt::format("no \"intermediate_size\": 4 x hidden = {} assumed",
                                      hp.intermediate_size));
  }
  const uint64_t dense_width = keys.Uint({"intermediate_size_mlp", "dense_intermediate_size"},
                                         hp.intermediate_size);
  hp.activation = keys.String({"hidden_act", "hidden_activation", "activation_function",
                               "mlp_hidden_act", "activation"}, "silu");
  // Plain (two-matrix) MLPs: the GPT-style families and squared-ReLU models; every other
  // current decoder uses a gated one (SwiGLU, GeGLU).
  static const std::set<std::string, std::less<>> kPlainMlp = {
      "gpt2", "gpt_neox", "gptj", "gpt_bigcode", "opt", "bloom", "falcon", "RefinedWeb",
      "RefinedWebModel", "mpt", "phi", "starcoder2", "codegen", "gpt_neo", "persimmon"};
  hp.gated_mlp = hp.activation != "relu2" && !kPlainMlp.count(model_type) &&
                 keys.Bool({"block_use_swiglu", "use_swiglu", "gated_mlp"}, true);
  hp.norm = "rmsnorm";
  return dense_width;
}

// Whether the LM head is tied to the embedding.
void ReadTiedHead(ConfigKeys& keys, const std::string& model_type, Hyperparameters& hp,
                  std::vector<std::string>& assumptions) {
  // Ties: the text section, then the top level; transformers' PretrainedConfig defaults to true,
  // but most decoder families override it to false: the default is stated.
  // Config classes whose default ties the LM head (transformers' configuration_<type>.py).
  static const std::set<std::string, std::less<>> kTiedByDefault = {
      "gemma", "gemma2", "gemma3", "gemma3_text", "gemma4", "gemma4_text", "smollm3", "lfm2",
      "gpt2", "opt", "bloom", "falcon", "mpt", "t5", "qwen3", "qwen2_vl"};
  if (keys.Has({"tie_word_embeddings"})) {
    hp.tie_word_embeddings = keys.Bool({"tie_word_embeddings"}, false);
  } else {
    hp.tie_word_embeddings = kTiedByDefault.count(model_type) > 0;
    assumptions.push_back(fmt::format("no \"tie_word_embeddings\": {} LM head assumed (the "
                                      "config class's default)",
                                      hp.tie_word_embeddings ? "a tied" : "an untied"));
  }
}

// Mixture of experts: experts, experts per token, shared experts and their widths.
Status ReadExperts(ConfigKeys& keys, Hyperparameters& hp) {
  hp.num_experts = keys.Uint({"num_experts", "num_local_experts", "n_routed_experts",
                              "moe_num_experts", "num_routed_experts", "n_experts"});
  hp.experts_per_token = keys.Uint({"num_experts_per_tok", "num_experts_per_token", "moe_top_k",
                                    "top_k_experts", "moe_k", "num_selected_experts",
                                    "experts_per_token"});
  hp.num_shared_experts = keys.Uint({"n_shared_experts", "num_shared_experts",
                                     "moe_num_shared_experts", "shared_experts"});
  hp.moe_intermediate_size = keys.Uint({"moe_intermediate_size", "expert_intermediate_size",
                                        "moe_ffn_hidden_size", "moe_intermediate_dim"});
  if (hp.num_experts > 0 && hp.moe_intermediate_size == 0) {
    hp.moe_intermediate_size = hp.intermediate_size;
  }
  hp.shared_expert_intermediate_size = keys.Uint(
      {"shared_expert_intermediate_size", "moe_shared_expert_intermediate_size",
       "share_expert_dim", "shared_intermediate_size"});
  if (hp.shared_expert_intermediate_size == 0 && hp.num_shared_experts > 0) {
    hp.shared_expert_intermediate_size = hp.num_shared_experts * hp.moe_intermediate_size;
  } else if (hp.shared_expert_intermediate_size > 0 && hp.num_shared_experts == 0) {
    hp.num_shared_experts = 1;
  }
  if (hp.num_experts > (uint64_t{1} << 16)) {
    return MakeError("{}: {} experts is absurd (limit 65536)", keys.where(), hp.num_experts);
  }
  return Ok{};
}

// Multi-head latent attention and DSA, multi-token-prediction layers, dropout.
void ReadLatentAttentionAndDropout(ConfigKeys& keys, Hyperparameters& hp) {
  hp.kv_lora_rank = keys.Uint({"kv_lora_rank"});
  hp.q_lora_rank = keys.Uint({"q_lora_rank"});
  hp.qk_rope_head_dim = keys.Uint({"qk_rope_head_dim"});
  hp.qk_nope_head_dim = keys.Uint({"qk_nope_head_dim"});
  hp.v_head_dim = keys.Uint({"v_head_dim"});
  hp.num_mtp_layers = keys.Uint({"num_nextn_predict_layers", "mtp_num_hidden_layers",
                                 "num_mtp_layers"});
  hp.index_topk = keys.Uint({"index_topk"});
  hp.hidden_dropout = keys.Number({"hidden_dropout", "residual_dropout", "resid_pdrop",
                                   "hidden_dropout_prob", "dropout"}, 0.0);
  hp.attention_dropout = keys.Number({"attention_dropout", "attn_pdrop",
                                      "attention_probs_dropout_prob"}, 0.0);
}


}  // namespace

void FillTrainingDropout(const HfConfig& config, Hyperparameters& hp) {
  ConfigKeys keys(config, hparams::FindTextSection(config));
  if (hp.hidden_dropout == 0) {
    hp.hidden_dropout = keys.Number({"residual_dropout", "hidden_dropout", "resid_pdrop",
                                     "hidden_dropout_prob"}, 0.0);
  }
  if (hp.attention_dropout == 0) {
    hp.attention_dropout = keys.Number({"attention_dropout", "attn_pdrop",
                                        "attention_probs_dropout_prob"}, 0.0);
  }
}

Result<TextHyperparameters> ReadTextHyperparameters(const HfConfig& config) {
  hparams::TextSection section = hparams::FindTextSection(config);
  ConfigKeys keys(config, section);
  TextHyperparameters out;
  out.where = keys.where();
  auto& assumptions = out.assumptions;
  Hyperparameters& hp = out.hp;
  hp.text_config_key = section.key;
  if (section.guessed) {
    assumptions.push_back(
        fmt::format("text model read from \"{}\" (a nested config with layers "
                    "and a hidden size)",
                    section.key));
  }
  const std::string model_type = keys.String({"model_type"}, config.model_type());

  MEMFIT_RETURN_IF_ERROR(ReadShape(keys, hp, assumptions));
  const uint64_t dense_width = ReadMlp(keys, model_type, hp, assumptions);
  ReadTiedHead(keys, model_type, hp, assumptions);
  MEMFIT_RETURN_IF_ERROR(ReadExperts(keys, hp));
  ReadLatentAttentionAndDropout(keys, hp);
  LayerVariants v{.dense_width = dense_width};
  v.window =
      keys.Uint({"sliding_window", "sliding_window_size", "window_size", "attention_window_size"});
  v.chunk = keys.Uint({"attention_chunk_size"});
  v.index_dim = keys.Uint({"index_head_dim"});
  if (const auto* sa = keys.Find({"sparse_attention_config"}); sa && sa->is_object()) {
    auto it = sa->find("sparse_index_dim");
    if (it != sa->end() && it->is_number_integer() && it->get<int64_t>() >= 0 &&
        it->get<uint64_t>() <= kMaxConfigDimension) {
      v.sparse_index_dim = it->get<uint64_t>();
      assumptions.push_back("MiniMax block-sparse attention: indexer keys of \"sparse_index_dim\" "
                            "elements per token assumed, like DeepSeek's DSA indexer");
    }
  }
  if (keys.failed()) return keys.error();

  std::vector<LayerKind> kinds = hparams::ReadLayerKinds(keys, hp.num_layers, model_type,
                                                         assumptions);
  hparams::ReadMoeLayers(keys, hp.num_experts, kinds);
  // Alternative head layouts: MiMo-V2's sliding layers, Gemma 4's global layers.
  v.swa_heads = keys.Uint({"swa_num_attention_heads"}, hp.num_attention_heads);
  v.swa_kv = keys.Uint({"swa_num_key_value_heads"}, hp.num_kv_heads);
  v.swa_hd = keys.Uint({"swa_head_dim"}, hp.head_dim);
  v.swa_vd = keys.Uint({"swa_v_head_dim"}, v.swa_hd);
  const bool k_eq_v = keys.Bool({"attention_k_eq_v"}, false);
  v.global_hd = keys.Uint({"global_head_dim"}, hp.head_dim);
  v.global_kv =
      k_eq_v ? keys.Uint({"num_global_key_value_heads"}, hp.num_kv_heads) : hp.num_kv_heads;
  v.v_dim = hp.v_head_dim ? hp.v_head_dim : hp.head_dim;
  v.shared_kv_latent = keys.Has({"compress_ratios"});
  if (keys.failed()) return keys.error();

  hp.layers.reserve(hp.num_layers);
  for (uint64_t i = 0; i < hp.num_layers; ++i) {
    hp.layers.push_back(hparams::LayerFor(kinds[i], v, hp, keys, assumptions));
  }
  // Per-layer head lists (the keys ReadShape reads).
  hparams::ApplyHeadList(keys, hp, {"num_attention_heads", "n_head", "num_heads", "n_heads",
                                    "n_attention_heads"}, &LayerInfo::num_heads);
  hparams::ApplyHeadList(keys, hp, {"num_key_value_heads", "num_kv_heads", "n_kv_heads",
                                    "num_query_groups", "n_head_kv", "num_kv"},
                         &LayerInfo::num_kv_heads);
  if (keys.failed()) return keys.error();
  hparams::ReadMamba2Chunk(keys, hp, assumptions);
  if (keys.failed()) return keys.error();
  hparams::ApplyDeciBlockConfigs(keys, hp, assumptions);
  if (!keys.defaulted().empty()) {
    std::string list;
    for (const auto& k : keys.defaulted()) list += (list.empty() ? "" : ", ") + k;
    assumptions.push_back(fmt::format("{} leaves fields to its config class (model_type \"{}\"): "
                                      "the class's defaults are used for {} (as transformers "
                                      "does)",
                                      keys.where(), model_type, list));
  }
  // Deduplicate assumptions (ReadState runs once per layer).
  std::vector<std::string> unique;
  for (auto& a : assumptions) {
    if (std::find(unique.begin(), unique.end(), a) == unique.end()) unique.push_back(std::move(a));
  }
  assumptions = std::move(unique);
  return out;
}

Status RequireAttentionHeads(const Model& model, std::string_view estimate) {
  for (const auto& L : model.hp.layers) {
    if (L.attention == AttentionKind::kNone || L.kv_shared) continue;
    if (L.attention == AttentionKind::kMla && model.hp.kv_lora_rank > 0) continue;
    if (L.num_heads == 0) {
      return MakeError("{}: {} needs the number of attention heads (\"num_attention_heads\") "
                       "which the config does not give; `memfit estimate-memory` still answers",
                       model.name, estimate);
    }
    if (L.num_kv_heads == 0) {
      return MakeError("{}: {} needs \"num_key_value_heads\" which the config does not give; "
                       "`memfit estimate-memory` still answers",
                       model.name, estimate);
    }
    if (L.head_dim_k == 0) {
      return MakeError("{}: {} needs \"head_dim\" which the config does not give; "
                       "`memfit estimate-memory` still answers",
                       model.name, estimate);
    }
  }
  return Ok{};
}

}  // namespace memfit
