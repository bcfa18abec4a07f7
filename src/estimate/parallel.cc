// Weights per GPU under TP / EP / DP attention / PP, tensor by tensor. What each engine keeps
// replicated and what it shards is in docs/estimates.md, "Parallelism: what each engine
// replicates", with the source lines (vLLM model_executor/models/deepseek_v2.py, llama.py,
// layers/vocab_parallel_embedding.py, layers/fused_moe/config.py, distributed/utils.py; SGLang
// models/deepseek_v2.py, layers/dp_attention.py).

#include "memfit/parallel.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "estimate/modules.h"
#include "estimate/weights_internal.h"
#include "memfit/checked_math.h"

namespace memfit {
namespace {


// vLLM/SGLang DEFAULT_VOCAB_PADDING_SIZE: the vocabulary is padded to a multiple of 64 before
// it is split over the GPUs.
constexpr uint64_t kVocabPadding = 64;

enum class Split : uint8_t { kReplicated, kAttention, kKvProjection, kDense, kExpert, kVocab, kHead };

bool LastSegmentIs(std::string_view module, std::initializer_list<std::string_view> names) {
  size_t dot = module.rfind('.');
  std::string_view last = dot == std::string_view::npos ? module : module.substr(dot + 1);
  for (auto n : names) {
    if (last == n) return true;
  }
  return false;
}

// Routed expert index from "...experts.<n>...", -1 for a fused stack, -2 for no expert.
int64_t ExpertIndex(std::string_view name) {
  if (name.find("shared_expert") != std::string_view::npos) return -2;
  size_t at = name.find(".experts.");
  if (at == std::string_view::npos) return -2;
  size_t i = at + 9;
  if (i >= name.size() || name[i] < '0' || name[i] > '9') return -1;
  int64_t v = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9' && v < (int64_t{1} << 40)) {
    v = v * 10 + (name[i++] - '0');
  }
  return v;
}

Split Classify(const Model& model, const estimate::RoleTensor& r) {
  const Tensor& t = *r.tensor;
  if (t.kind != TensorKind::kParameter) return Split::kReplicated;
  if (t.in_head) return t.shape.size() == 2 ? Split::kHead : Split::kReplicated;
  const std::string_view module = estimate::WeightModule(t.name);
  if (r.role == estimate::Role::kEmbedding) {
    return !t.shape.empty() && model.hp.vocab_size && t.shape[0] >= model.hp.vocab_size
               ? Split::kVocab : Split::kReplicated;
  }
  // Kimi-K2.5/Kimi-VL's patch-merger projector is ReplicatedLinear in vLLM and SGLang
  // (models/kimi_k25.py, kimi_vl.py: KimiK25MultiModalProjector linear_1/linear_2).
  if (t.name.starts_with("mm_projector.")) return Split::kReplicated;
  // Routers (ReplicatedLinear "gate", e_score_correction_bias) stay whole on every GPU.
  if (LastSegmentIs(module, {"gate", "router"}) || t.name.ends_with("e_score_correction_bias")) {
    return Split::kReplicated;
  }
  const int64_t expert = ExpertIndex(t.name);
  if (expert >= -1 && model.hp.num_experts > 0) return Split::kExpert;
  // 1-D tensors (norms, biases, scalar scales) are replicated: exact for norms and row-parallel
  // biases; column-parallel biases are split in the engines (a few KiB left in).
  if (t.shape.size() <= 1) return Split::kReplicated;
  const bool attention = t.name.find("attn") != std::string::npos ||
                         t.name.find("attention") != std::string::npos;
  if (attention) {
    // MLA: the latent down-projections are ReplicatedLinear in vLLM and SGLang.
    if (LastSegmentIs(module, {"q_a_proj", "kv_a_proj_with_mqa", "fused_qkv_a_proj"})) {
      return Split::kReplicated;
    }
    if (LastSegmentIs(module, {"k_proj", "v_proj"})) return Split::kKvProjection;
    return Split::kAttention;
  }
  if (r.role == estimate::Role::kOther && estimate::LayerIndex(t.name) < 0) return Split::kReplicated;
  return Split::kDense;
}

}  // namespace

std::vector<uint64_t> PipelineStageLayers(uint64_t num_layers, uint64_t pp) {
  if (pp == 0) pp = 1;
  std::vector<uint64_t> parts(pp, num_layers / pp);
  const uint64_t rest = num_layers % pp;
  for (uint64_t i = 2; i < rest + 2 && i <= pp; ++i) parts[pp - i] += 1;
  return parts;
}

Result<ParallelLayout> ResolveParallel(const Model& model, const ParallelOptions& o) {
  if (o.tp == 0 || o.dp == 0 || o.ep == 0 || o.pp == 0) {
    return MakeError("parallel: --tp, --dp, --ep and --pp must be at least 1");
  }
  ParallelLayout p;
  p.pp = o.pp;
  p.attn_tp = p.dense_tp = p.vocab_tp = p.head_tp = o.tp;
  const uint64_t experts = model.hp.num_experts;
  if (o.ep > 1 && experts == 0) {
    return MakeError("{}: --ep {} but the model has no routed experts", model.name, o.ep);
  }
  switch (o.engine) {
    case Engine::kVllm: {
      if (o.dp_attention) {
        return MakeError("vllm: --enable-dp-attention is SGLang's; vLLM runs attention data "
                         "parallel with --dp and expert parallel with --ep");
      }
      p.replicas = o.dp;
      p.gpus = o.tp * o.dp * o.pp;
      // FusedMoEParallelConfig.make: with expert parallel the experts span tp x dp GPUs whole;
      // without it each expert is split over the flattened tp x dp group.
      if (o.ep > 1) {
        if (o.ep != o.tp * o.dp) {
          return MakeError("vllm: --ep {}: vLLM's expert parallel spans tp x dp = {} GPUs "
                           "(--enable-expert-parallel)", o.ep, o.tp * o.dp);
        }
        p.ep = o.ep;
        p.expert_tp = 1;
      } else {
        p.expert_tp = o.tp * o.dp;
      }
      if (o.dp > 1 && experts > 0) {
        p.assumptions.push_back(fmt::format(
            "vllm data parallel {}: attention and dense layers per --tp {} on each of {} replicas; "
            "the MoE layers over all {} GPUs", o.dp, o.tp, o.dp, o.tp * o.dp));
      }
      break;
    }
    case Engine::kSglang: {
      if (o.dp_attention) {
        if (o.dp < 1 || o.tp % o.dp != 0) {
          return MakeError("sglang: --dp {} must divide --tp {} with --enable-dp-attention", o.dp, o.tp);
        }
        p.attn_tp = o.tp / o.dp;
        p.vocab_tp = 1;  // VocabParallelEmbedding(enable_tp=not is_dp_attention_enabled())
        p.replicas = o.dp;
        p.gpus = o.tp * o.pp;
        p.assumptions.push_back(fmt::format(
            "sglang DP attention: attention per {} GPU(s) (tp / dp), the input embedding "
            "replicated, lm_head, dense layers and experts over --tp {}", p.attn_tp, o.tp));
      } else {
        p.replicas = o.dp;  // --dp without DP attention: whole replicas behind the router
        p.gpus = o.tp * o.dp * o.pp;
      }
      if (o.ep > 1) {
        if (o.tp % o.ep != 0) {
          return MakeError("sglang: --ep {} must divide --tp {}", o.ep, o.tp);
        }
        p.ep = o.ep;
        p.expert_tp = o.tp / o.ep;
      } else {
        p.expert_tp = o.tp;
      }
      break;
    }
    case Engine::kTransformers: {
      if (o.dp_attention || o.dp > 1 || o.pp > 1) {
        return MakeError("transformers: only --tp (tp_plan=\"auto\") and --ep are modelled");
      }
      p.gpus = o.tp;
      p.vocab_tp = 1;
      p.ep = o.ep;
      p.expert_tp = o.ep > 1 ? 1 : o.tp;
      if (o.tp > 1) {
        p.assumptions.push_back("transformers tp_plan: input embedding replicated, lm_head split "
                                "(colwise_rep), projections split over --tp");
      }
      break;
    }
    case Engine::kLlamaCpp:
      return MakeError("llama.cpp: parallel layouts are planned by the GGUF estimator");
  }
  if (o.engine != Engine::kTransformers) {
    const uint64_t heads = model.hp.num_attention_heads;
    if (heads && heads % p.attn_tp != 0) {
      return MakeError("{}: {} attention heads are not divisible by the attention TP size {} "
                       "(the engine refuses it)", EngineName(o.engine), heads, p.attn_tp);
    }
    const uint64_t layers = model.hp.layers.empty() ? model.hp.num_layers : model.hp.layers.size();
    if (o.pp > layers) {
      return MakeError("{}: --pp {} exceeds the {} decoder layers", EngineName(o.engine), o.pp, layers);
    }
  }
  return p;
}

std::vector<TensorSplit> ClassifySplits(const Model& model) {
  return estimate::SplitsFrom(model, estimate::ClassifyTensors(model));
}

std::vector<TensorSplit> estimate::SplitsFrom(const Model& model,
                                              const std::vector<RoleTensor>& roles) {
  std::vector<TensorSplit> out(model.tensors.size());
  for (const auto& r : roles) {
    const size_t i = static_cast<size_t>(r.tensor - model.tensors.data());
    const Tensor& t = *r.tensor;
    TensorSplit& x = out[i];
    x.kind = static_cast<uint8_t>(Classify(model, r));
    x.layer = estimate::LayerIndex(t.name);
    x.expert = ExpertIndex(t.name);
    x.rows = t.shape.empty() ? 0 : t.shape[0];
    x.norm = t.name.find("norm") != std::string::npos;
  }
  return out;
}

Result<ShardedWeights> ShardWeights(const Model& model, const std::vector<uint64_t>& tensor_bytes,
                                    const ParallelLayout& p) {
  return ShardWeights(model, ClassifySplits(model), tensor_bytes, p);
}

Result<ShardedWeights> ShardWeights(const Model& model, const std::vector<TensorSplit>& splits,
                                    const std::vector<uint64_t>& tensor_bytes,
                                    const ParallelLayout& p) {
  if (tensor_bytes.size() != model.tensors.size() || splits.size() != model.tensors.size()) {
    return MakeError("{}: tensor sizes do not match the model", model.name);
  }
  const uint64_t layers = model.hp.layers.empty() ? model.hp.num_layers : model.hp.layers.size();
  const std::vector<uint64_t> parts = PipelineStageLayers(layers, p.pp);
  ShardedWeights out;
  uint64_t start = 0;
  for (uint64_t n : parts) {
    out.stages.push_back({start, start + n, 0});
    start += n;
  }
  // Per stage: replicated, sharded, experts (for the breakdown of the heaviest stage).
  std::vector<std::array<uint64_t, 3>> parts_bytes(out.stages.size(), {0, 0, 0});
  // A layer's tensors go to its stage (layers past num_layers, MTP, to the last); the input
  // embedding to the first, lm_head and the final norm to the last (vLLM PPMissingLayer).
  auto stage_of = [&](const TensorSplit& x, Split split) -> size_t {
    const size_t last = out.stages.size() - 1;
    if (x.layer >= 0) {
      for (size_t s = 0; s < out.stages.size(); ++s) {
        if (static_cast<uint64_t>(x.layer) < out.stages[s].end_layer) return s;
      }
      return last;
    }
    if (split == Split::kHead) return last;
    if (split == Split::kVocab) return 0;
    return x.norm ? last : 0;
  };
  const uint64_t experts = model.hp.num_experts;
  const uint64_t experts_per_gpu = experts ? CeilDiv(experts, p.ep) : 0;
  const uint64_t kv_heads = model.hp.num_kv_heads ? model.hp.num_kv_heads
                                                  : model.hp.num_attention_heads;
  for (size_t i = 0; i < splits.size(); ++i) {
    const uint64_t bytes = tensor_bytes[i];
    if (bytes == 0) continue;
    const TensorSplit& x = splits[i];
    const Split split = static_cast<Split>(x.kind);
    const size_t s = stage_of(x, split);
    uint64_t share = bytes;
    int part = 1;
    switch (split) {
      case Split::kReplicated:
        part = 0;
        break;
      case Split::kAttention:
        share = CeilDiv(bytes, p.attn_tp);
        break;
      case Split::kKvProjection:
        // QKVParallelLinear: KV heads split while tp <= kv heads, else one head per GPU.
        share = CeilDiv(bytes, std::min(p.attn_tp, std::max<uint64_t>(kv_heads, 1)));
        break;
      case Split::kDense:
        share = CeilDiv(bytes, p.dense_tp);
        break;
      case Split::kVocab:
      case Split::kHead: {
        const uint64_t tp = split == Split::kVocab ? p.vocab_tp : p.head_tp;
        if (tp > 1 && x.rows > 0 && bytes % x.rows == 0) {
          const uint64_t padded = CeilDiv(x.rows, kVocabPadding) * kVocabPadding;
          auto b = CheckedMul(CeilDiv(padded, tp), bytes / x.rows);
          if (!b) return MakeError("{}: size overflows", model.tensors[i].name);
          share = *b;
        } else {
          share = CeilDiv(bytes, tp);
        }
        if (tp == 1) part = 0;
        break;
      }
      case Split::kExpert: {
        part = 2;
        if (x.expert >= 0) {
          if (static_cast<uint64_t>(x.expert) >= experts_per_gpu) continue;  // on another GPU
          // A per-expert scalar (NVFP4 weight_scale_2, input_scale) is whole on every GPU that
          // holds a slice of the expert (the fused-MoE layer keeps [E] scales per rank).
          share = x.rows == 0 ? bytes : CeilDiv(bytes, p.expert_tp);
        } else {
          // A fused stack [experts, ...]: ceil(E / ep) experts of bytes / E each.
          auto b = CheckedMul(CeilDiv(bytes, experts), experts_per_gpu);
          if (!b) return MakeError("{}: size overflows", model.tensors[i].name);
          share = CeilDiv(std::min(*b, bytes), p.expert_tp);
        }
        break;
      }
    }
    auto sum = CheckedAdd(out.stages[s].bytes, share);
    if (!sum) return MakeError("{}: per-GPU weights overflow", model.name);
    out.stages[s].bytes = *sum;
    parts_bytes[s][part] += share;
  }
  size_t heaviest = 0;
  for (size_t s = 0; s < out.stages.size(); ++s) {
    if (out.stages[s].bytes > out.stages[heaviest].bytes) heaviest = s;
  }
  out.per_gpu_bytes = out.stages[heaviest].bytes;
  out.replicated_bytes = parts_bytes[heaviest][0];
  out.sharded_bytes = parts_bytes[heaviest][1];
  out.expert_bytes = parts_bytes[heaviest][2];
  return out;
}

}  // namespace memfit
