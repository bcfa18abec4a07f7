// The per-layer half of ReadTextHyperparameters (layer_facts.h): a layer's LayerInfo from its
// kind, its recurrent state (vLLM's and transformers' state shapes), and the per-layer overrides
// (head lists, DeciLM block configs, the Mamba-2 scan chunk). read_hparams.cc reads the
// model-wide fields these start from.

#include "model/hparams/layer_facts.h"

#include <algorithm>

#include <fmt/format.h>

#include "memfit/checked_math.h"

namespace memfit::hparams {
namespace {

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

// A state of `heads` recurrent states of `per_head` elements each beside a causal conv of
// `kernel` over `conv_channels`; the sizes checked as config dimensions, named for `mixer`.
RecurrentState ConvAndState(ConfigKeys& keys, std::string_view mixer, uint64_t kernel,
                            CheckedU64 conv_channels, uint64_t heads, CheckedU64 per_head) {
  RecurrentState s;
  s.conv_kernel = kernel;
  s.conv_channels = Dim(keys, conv_channels, fmt::format("the {} conv channels", mixer));
  s.heads = heads;
  s.elements_per_head = Dim(keys, per_head, fmt::format("the {} state", mixer));
  return s;
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
      uint64_t d_state =
          keys.Uint({"mamba_d_state", "ssm_state_size", "state_size", "d_state"}, 128);
      const uint64_t kernel =
          keys.Uint({"mamba_d_conv", "conv_kernel", "d_conv", "mamba_conv_kernel"}, 4);
      s = ConvAndState(keys, "Mamba2", kernel, CheckedU64(2) * groups * d_state + d_inner, heads,
                       CheckedU64(head_dim) * d_state);
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
      const uint64_t kernel = keys.Uint({"linear_conv_kernel_dim"}, 4);
      s = ConvAndState(keys, "gated delta-net", kernel,
                       CheckedU64(2) * nk * dk + CheckedU64(nv) * dv, nv, CheckedU64(dk) * dv);
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
      // One fused q|k|v short-conv state.
      s = ConvAndState(keys, "KDA", kernel, CheckedU64(3) * heads * head_dim, heads,
                       CheckedU64(head_dim) * head_dim);
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

}  // namespace

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

void ReadMamba2Chunk(ConfigKeys& keys, Hyperparameters& hp, std::vector<std::string>& assumptions) {
  const bool mamba2 = std::any_of(hp.layers.begin(), hp.layers.end(), [](const LayerInfo& L) {
    return L.mixer == LayerMixer::kMamba2;
  });
  if (!mamba2) return;
  if (hp.ssm_state_size == 0) {
    hp.ssm_state_size =
        keys.Uint({"mamba_d_state", "ssm_state_size", "state_size", "d_state"}, 128);
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
          const uint64_t width =
              static_cast<uint64_t>(2 * mult * static_cast<double>(hp.hidden_size) / 3);
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

}  // namespace memfit::hparams
