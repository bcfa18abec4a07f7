// ReadTextHyperparameters: the text model's dimensions under every alias the families use, then
// one LayerInfo per layer from the layer pattern (layer_pattern.cc). Aliases and their sources are
// listed in docs/architectures.md, "Hyperparameters from any config".

#include <algorithm>
#include <initializer_list>
#include <string_view>
#include <set>

#include <fmt/format.h>

#include "memfit/checked_math.h"
#include "memfit/text_hparams.h"
#include "model/hparams/config_keys.h"
#include "model/hparams/layer_pattern.h"

namespace memfit {
namespace {

using hparams::ConfigKeys;
using hparams::LayerKind;

// The most layers a text model may have (real ones have at most a few hundred); bounds the
// per-layer vectors a hostile config can make memfit allocate.
constexpr uint64_t kMaxTextLayers = 16384;

// Bits of a state dtype named in the config ("mamba_ssm_cache_dtype": "float32"); 0 = the model's.
uint32_t StateBits(ConfigKeys& keys) {
  std::string name = keys.String({"mamba_ssm_cache_dtype", "mamba_ssm_dtype", "ssm_state_dtype"});
  if (name == "float32" || name == "fp32") return 32;
  if (name == "bfloat16" || name == "float16" || name == "bf16" || name == "fp16") return 16;
  return 0;
}

// a x b + c as a config dimension: at most kMaxConfigDimension, else an error naming `what`.
uint64_t Dim(ConfigKeys& keys, CheckedU64 value, std::string_view what) {
  if (value.overflowed() || value.value() > kMaxConfigDimension) {
    keys.Fail(MakeError("{}: {} is absurdly large (limit 2^40)", keys.where(), what));
    return 0;
  }
  return value.value();
}

// The recurrent state of one non-attention layer (vllm/model_executor/layers/mamba/mamba_utils.py
// MambaStateShapeCalculator; transformers' cache classes of each family).
RecurrentState ReadState(ConfigKeys& keys, LayerMixer mixer, const Hyperparameters& hp,
                         std::vector<std::string>& assumptions) {
  RecurrentState s;
  const uint64_t h = hp.hidden_size;
  switch (mixer) {
    case LayerMixer::kMamba2: {
      // Mamba2Config keeps the SSM heads as num_heads/head_dim; hybrids prefix them "mamba_".
      const bool pure = hp.num_attention_heads == 0 || keys.String({"model_type"}) == "mamba2";
      uint64_t heads = keys.Uint({"mamba_num_heads", "mamba_n_heads"});
      uint64_t head_dim = keys.Uint({"mamba_head_dim", "mamba_d_head"});
      if (pure && heads == 0) heads = keys.Uint({"num_heads"});
      if (pure && head_dim == 0) head_dim = keys.Uint({"head_dim"}, 64);
      uint64_t expand = keys.Uint({"mamba_expand", "expand"}, 2);
      uint64_t d_inner = Dim(keys, heads && head_dim ? CheckedU64(heads) * head_dim
                                                     : CheckedU64(expand) * h,
                             "the Mamba2 inner size");
      if (heads == 0) {
        head_dim = head_dim ? head_dim : 64;
        heads = d_inner / head_dim;
        assumptions.push_back(fmt::format("Mamba2 heads not in the config: d_inner {} / head_dim "
                                          "{} = {}", d_inner, head_dim, heads));
      }
      uint64_t groups = keys.Uint({"mamba_n_groups", "n_groups", "ngroups"}, 1);
      uint64_t d_state = keys.Uint({"mamba_d_state", "ssm_state_size", "state_size", "d_state"}, 128);
      s.conv_kernel = keys.Uint({"mamba_d_conv", "conv_kernel", "d_conv", "mamba_conv_kernel"}, 4);
      s.conv_channels = Dim(keys, CheckedU64(2) * groups * d_state + d_inner,
                            "the Mamba2 conv channels");
      s.heads = heads;
      s.elements_per_head = Dim(keys, CheckedU64(head_dim) * d_state, "the Mamba2 state");
      s.state_bits = StateBits(keys);
      break;
    }
    case LayerMixer::kMamba: {
      uint64_t expand = keys.Uint({"mamba_expand", "expand"}, 2);
      uint64_t d_inner = keys.Uint({"mamba_d_inner"});
      if (d_inner == 0) {
        const uint64_t expanded = Dim(keys, CheckedU64(expand) * h, "the Mamba inner size");
        d_inner = keys.String({"model_type"}).find("mamba") != std::string::npos
                      ? keys.Uint({"intermediate_size"}, expanded)
                      : expanded;
      }
      s.conv_kernel = keys.Uint({"mamba_d_conv", "conv_kernel", "d_conv"}, 4);
      s.conv_channels = d_inner;
      s.heads = d_inner;  // one state row per channel: splits under TP like the channels
      s.elements_per_head = keys.Uint({"mamba_d_state", "state_size", "d_state"}, 16);
      s.state_bits = StateBits(keys);
      break;
    }
    case LayerMixer::kGatedDeltaNet: {
      uint64_t nk = keys.Uint({"linear_num_key_heads"}, 16);
      uint64_t nv = keys.Uint({"linear_num_value_heads"}, 32);
      uint64_t dk = keys.Uint({"linear_key_head_dim"}, 128);
      uint64_t dv = keys.Uint({"linear_value_head_dim"}, 128);
      s.conv_kernel = keys.Uint({"linear_conv_kernel_dim"}, 4);
      s.conv_channels = Dim(keys, CheckedU64(2) * nk * dk + CheckedU64(nv) * dv,
                            "the gated delta-net conv channels");
      s.heads = nv;
      s.elements_per_head = Dim(keys, CheckedU64(dk) * dv, "the gated delta-net state");
      s.state_bits = StateBits(keys);
      break;
    }
    case LayerMixer::kKimiDelta: {
      uint64_t heads = hp.num_attention_heads, head_dim = 128, kernel = 4;
      if (const auto* lac = keys.Find({"linear_attn_config"}); lac && lac->is_object()) {
        auto get = [&](const char* k, uint64_t fallback) {
          auto it = lac->find(k);
          return it != lac->end() && it->is_number_integer() && it->get<int64_t>() >= 0 &&
                         it->get<uint64_t>() <= kMaxConfigDimension
                     ? it->get<uint64_t>()
                     : fallback;
        };
        heads = get("num_heads", heads);
        head_dim = get("head_dim", head_dim);
        kernel = get("short_conv_kernel_size", kernel);
      }
      s.conv_kernel = kernel;
      // One fused q|k|v short-conv state.
      s.conv_channels = Dim(keys, CheckedU64(3) * heads * head_dim, "the KDA conv channels");
      s.heads = heads;
      s.elements_per_head = Dim(keys, CheckedU64(head_dim) * head_dim, "the KDA state");
      s.state_bits = 32;  // vLLM kda_state_dtype: the recurrent state is always float32
      break;
    }
    case LayerMixer::kShortConv:
      s.conv_kernel = keys.Uint({"conv_L_cache", "conv_kernel", "short_conv_kernel_size"}, 3);
      s.conv_channels = keys.Uint({"conv_dim"}, h);
      break;
    case LayerMixer::kLinearAttention: {
      s.heads = hp.num_attention_heads;
      s.elements_per_head = Dim(keys, CheckedU64(hp.head_dim) * hp.head_dim,
                                "the linear attention state");
      break;
    }
    case LayerMixer::kAttention:
    case LayerMixer::kNone: break;
  }
  return s;
}

// A boolean member of a JSON object; false when absent or not a boolean (never throws).
bool FlagOf(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

// DeciLM / Nemotron-NAS ("block_configs", one per layer): attention with its own KV-head
// grouping or none ("no_op"), an FFN of width find_multiple(int(2 * ffn_mult * hidden / 3), 256)
// or none (transformers-compatible modeling_decilm.py, _ffn_mult_to_intermediate_size).
// Mamba-2 layers: d_state, groups and the SSD chunk of transformers' torch_forward scan
// (memfit/model.h ssm_chunk_size). The chunk's key and default per config class:
// Mamba2Config / Zamba2Config "chunk_size" 256, NemotronHConfig "chunk_size" 128 (alias
// "mamba_chunk_size"), BambaConfig / GraniteMoeHybridConfig / FalconH1Config "mamba_chunk_size"
// 256. Absent: the class's default, said as an assumption.
void ReadMamba2Chunk(ConfigKeys& keys, Hyperparameters& hp, std::vector<std::string>& assumptions) {
  const bool mamba2 = std::any_of(hp.layers.begin(), hp.layers.end(), [](const LayerInfo& L) {
    return L.mixer == LayerMixer::kMamba2;
  });
  if (!mamba2) return;
  if (hp.ssm_state_size == 0) {
    hp.ssm_state_size = keys.Uint({"mamba_d_state", "ssm_state_size", "state_size", "d_state"}, 128);
  }
  if (hp.ssm_group_count == 0) {
    hp.ssm_group_count = keys.Uint({"mamba_n_groups", "n_groups", "ngroups", "mamba_ngroups"}, 1);
  }
  const std::string type = keys.String({"model_type"});
  const uint64_t fallback = type == "nemotron_h" ? 128 : 256;
  const bool chunk_first = type == "mamba2" || type == "zamba2" || type == "nemotron_h";
  std::string_view found;
  const auto* value = chunk_first ? keys.Find({"chunk_size", "mamba_chunk_size"}, &found)
                                  : keys.Find({"mamba_chunk_size", "chunk_size"}, &found);
  if (value == nullptr) {
    hp.ssm_chunk_size = fallback;
    assumptions.push_back(fmt::format("no \"{}\": the config class's default {} (Mamba-2 scan "
                                      "chunk)", chunk_first ? "chunk_size" : "mamba_chunk_size",
                                      fallback));
    return;
  }
  hp.ssm_chunk_size = keys.Uint({found}, fallback);
  if (!keys.failed() && hp.ssm_chunk_size == 0) {
    keys.Fail(MakeError("{}: \"{}\" must be positive", keys.where(), found));
  }
}

void ApplyDeciBlockConfigs(ConfigKeys& keys, Hyperparameters& hp,
                           std::vector<std::string>& assumptions) {
  const auto* blocks = keys.Find({"block_configs"});
  if (!blocks || !blocks->is_array()) return;
  if (blocks->size() != hp.layers.size()) {
    assumptions.push_back(fmt::format("\"block_configs\" lists {} layers, the model has {}: "
                                      "ignored", blocks->size(), hp.layers.size()));
    return;
  }
  bool linear = false;
  for (size_t i = 0; i < blocks->size(); ++i) {
    const auto& b = (*blocks)[i];
    LayerInfo& L = hp.layers[i];
    if (!b.is_object()) continue;
    if (auto a = b.find("attention"); a != b.end() && a->is_object()) {
      const bool no_op = FlagOf(*a, "no_op"), as_linear = FlagOf(*a, "replace_with_linear");
      if (no_op || as_linear) {
        L.mixer = LayerMixer::kNone;
        L.attention = AttentionKind::kNone;
        linear = linear || as_linear;
      } else if (auto g = a->find("n_heads_in_group"); g != a->end() && g->is_number_integer() &&
                                                       g->get<int64_t>() > 0) {
        L.num_kv_heads = std::max<uint64_t>(L.num_heads / g->get<uint64_t>(), 1);
      }
    }
    if (auto f = b.find("ffn"); f != b.end() && f->is_object()) {
      const bool no_op = FlagOf(*f, "no_op"), as_linear = FlagOf(*f, "replace_with_linear");
      if (no_op || as_linear) {
        L.intermediate_size = 0;
        L.moe = false;
        linear = linear || as_linear;
      } else if (auto m = f->find("ffn_mult"); m != f->end() && m->is_number()) {
        const double mult = m->get<double>();
        if (mult > 0 && mult < 64) {
          const uint64_t width = static_cast<uint64_t>(2 * mult * static_cast<double>(hp.hidden_size) / 3);
          L.intermediate_size = (width + 255) / 256 * 256;
        }
      }
    }
  }
  if (linear) {
    assumptions.push_back("block_configs: layers \"replace_with_linear\" are counted without "
                          "their hidden x hidden linear");
  }
}

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

// A per-layer head list over the layers ReadTextHyperparameters built: one entry per layer;
// attention layers take theirs.
void ApplyHeadList(ConfigKeys& keys, Hyperparameters& hp,
                   std::initializer_list<std::string_view> names, uint64_t LayerInfo::*field) {
  std::string_view key;
  const nlohmann::json* v = keys.Find(names, &key);
  if (v == nullptr || !v->is_array()) return;
  const auto list = keys.UintList(names);
  if (!list) return;
  if (list->size() != hp.layers.size()) {
    keys.Fail(MakeError("{}: \"{}\" lists {} values for {} layers", keys.where(), key,
                        list->size(), hp.layers.size()));
    return;
  }
  for (size_t i = 0; i < list->size(); ++i) {
    LayerInfo& L = hp.layers[i];
    if (L.attention != AttentionKind::kNone && !L.kv_shared) L.*field = (*list)[i];
  }
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
  if (hp.intermediate_size == 0 && !keys.Has({"intermediate_size_mlp", "dense_intermediate_size"})) {
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

// What a layer's kind selects beyond the model-wide shape: windows, indexer width, the alternative
// head layouts (MiMo-V2's sliding layers, Gemma 4's global layers), DeepSeek-V4's shared K=V.
struct LayerVariants {
  uint64_t window = 0;            // "sliding_window"
  uint64_t chunk = 0;             // "attention_chunk_size"
  uint64_t index_dim = 0;         // "index_head_dim"
  uint64_t sparse_index_dim = 0;  // "sparse_attention_config" "sparse_index_dim"
  uint64_t swa_heads = 0, swa_kv = 0, swa_hd = 0, swa_vd = 0;
  uint64_t global_hd = 0, global_kv = 0;
  uint64_t v_dim = 0;
  bool shared_kv_latent = false;  // "compress_ratios"
  uint64_t dense_width = 0;       // ReadMlp's
};

// One layer of kind `k`.
LayerInfo LayerFor(const LayerKind& k, const LayerVariants& v, const Hyperparameters& hp,
                   ConfigKeys& keys, std::vector<std::string>& assumptions) {
  LayerInfo L;
  L.mixer = k.mixer;
  L.attention = k.attention;
  L.num_heads = hp.num_attention_heads;
  L.num_kv_heads = hp.num_kv_heads;
  L.head_dim_k = hp.head_dim;
  L.head_dim_v = v.v_dim;
  if (k.attention != AttentionKind::kNone && hp.kv_lora_rank > 0) {
    L.attention = AttentionKind::kMla;
    L.head_dim_k = hp.qk_nope_head_dim + hp.qk_rope_head_dim;
    L.head_dim_v = v.v_dim;
  }
  if (k.swa_dims) {
    L.num_heads = v.swa_heads;
    L.num_kv_heads = v.swa_kv;
    L.head_dim_k = v.swa_hd;
    L.head_dim_v = v.swa_vd;
  }
  if (k.global_dims) {
    L.num_kv_heads = v.global_kv;
    L.head_dim_k = L.head_dim_v = v.global_hd;
  }
  if (k.attention == AttentionKind::kSliding) L.window_tokens = v.window;
  if (k.attention == AttentionKind::kChunked) L.window_tokens = v.chunk;
  if (L.attention == AttentionKind::kSliding && v.window == 0) L.attention = AttentionKind::kFull;
  L.compress_ratio = k.compress_ratio;
  if (v.shared_kv_latent) {
    L.k_eq_v = true;  // DeepSeek-V4 caches one shared K=V entry (window and compressed)
    L.head_dim_v = 0;
  }
  if (k.sparse_indexer) L.indexer_head_dim = v.index_dim ? v.index_dim : v.sparse_index_dim;
  L.kv_shared = k.kv_shared;
  if (k.mixer != LayerMixer::kAttention && k.mixer != LayerMixer::kNone) {
    L.recurrent = true;
    L.state = ReadState(keys, k.mixer, hp, assumptions);
  }
  L.moe = k.moe;
  L.intermediate_size =
      k.has_mlp && (!k.moe || keys.Bool({"enable_moe_block"}, false)) ? v.dense_width : 0;
  if (k.pattern_sets_mlp && k.has_mlp && !k.moe) L.intermediate_size = v.dense_width;
  return L;
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
    hp.layers.push_back(LayerFor(kinds[i], v, hp, keys, assumptions));
  }
  // Per-layer head lists (the keys ReadShape reads).
  ApplyHeadList(keys, hp, {"num_attention_heads", "n_head", "num_heads", "n_heads",
                           "n_attention_heads"}, &LayerInfo::num_heads);
  ApplyHeadList(keys, hp, {"num_key_value_heads", "num_kv_heads", "n_kv_heads",
                           "num_query_groups", "n_head_kv", "num_kv"}, &LayerInfo::num_kv_heads);
  if (keys.failed()) return keys.error();
  ReadMamba2Chunk(keys, hp, assumptions);
  if (keys.failed()) return keys.error();
  ApplyDeciBlockConfigs(keys, hp, assumptions);
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
