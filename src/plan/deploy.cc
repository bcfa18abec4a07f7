// Deployment planning for serving engines: candidate layouts, one deployment's verdict, the
// smallest deployment that fits (--search) and the GPU grid (--all-gpus). Formulas and sources:
// docs/estimates.md, "Deployment planning".

#include "memfit/deploy.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "memfit/fit.h"
#include "memfit/engine_release.h"
#include "memfit/stored_format.h"
#include "memfit/units.h"
#include "memfit/vllm_kv_block.h"
#include "plan/parallel_layout_fields.h"

namespace memfit {
namespace {

// A layout, and vLLM's KV block for the GPU (memfit/vllm_kv_block.h): the one thing of the GPU
// an estimate depends on, so the GPUs that get the same block share it.
// The engine release's scheduler defaults for the GPU (max_num_seqs, max_num_batched_tokens:
// memfit/engine_release.h) change the profile run, so they are part of the key too.
using LayoutKey = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, bool, uint64_t,
                             std::string_view, bool, uint64_t, uint64_t>;
LayoutKey Key(const DeployLayout& l, const VllmKvBlock& block, const InferenceOptions& o) {
  return {l.tp, l.dp, l.ep, l.pp, l.dp_attention, block.tokens, block.backend, block.assumed_gpu,
          o.max_num_seqs, o.max_batched_tokens};
}

// Parameters read per generated token: packed 4-bit data counts two values per uint8 and eight
// per int32; routed experts count experts_per_token / num_experts of theirs.
double ActiveParameters(const Model& model) {
  const auto& hp = model.hp;
  const double expert_fraction =
      hp.num_experts && hp.experts_per_token
          ? std::min(1.0, static_cast<double>(hp.experts_per_token) / static_cast<double>(hp.num_experts))
          : 1.0;
  double total = 0;
  for (const auto& t : model.tensors) {
    if (t.kind != TensorKind::kParameter || !t.loaded || !t.tied_to.empty()) continue;
    double n = static_cast<double>(t.numel);
    if (t.dtype == Dtype::kU8) n *= 2;
    if (t.dtype == Dtype::kI32 || t.dtype == Dtype::kU32) n *= 8;
    const bool routed = t.name.find(".experts.") != std::string::npos &&
                        t.name.find("shared_expert") == std::string::npos;
    total += routed ? n * expert_fraction : n;
  }
  return total;
}

StoredFormat FormatNamed(std::string_view name) {
  for (int f = 0; f <= static_cast<int>(StoredFormat::kOther); ++f) {
    if (StoredFormatName(static_cast<StoredFormat>(f)) == name) return static_cast<StoredFormat>(f);
  }
  return StoredFormat::kOther;
}

bool Better(const DeploymentRow& a, const DeploymentRow& b) {
  if (a.runs != b.runs) return a.runs;
  if (a.fits != b.fits) return a.fits;
  if (a.max_sequences != b.max_sequences) return a.max_sequences > b.max_sequences;
  return a.weights_per_gpu_bytes < b.weights_per_gpu_bytes;
}

}  // namespace

std::string DeployLayoutName(const DeployLayout& l) {
  std::string s = fmt::format("tp{}", l.tp);
  if (l.ep > 1) s += fmt::format(" ep{}", l.ep);
  if (l.dp > 1) s += fmt::format(" dp{}{}", l.dp, l.dp_attention ? "-attention" : "");
  if (l.pp > 1) s += fmt::format(" pp{}", l.pp);
  return s;
}

std::vector<DeployLayout> CandidateLayouts(const Model& model, Engine engine, uint64_t n,
                                           uint64_t per_node) {
  std::vector<DeployLayout> out;
  if (n == 0) return out;
  const bool moe = model.hp.num_experts > 0;
  if (per_node == 0) per_node = 8;
  if (n <= per_node) {
    out.push_back({.tp = n});
    if (engine == Engine::kTransformers) return out;
    if (n > 1 && n % 2 == 0) out.push_back({.tp = n / 2, .dp = 2});
    if (moe && n > 1) {
      out.push_back({.tp = n, .ep = n});
      if (engine == Engine::kVllm) out.push_back({.tp = 1, .dp = n, .ep = n});
      if (engine == Engine::kSglang) out.push_back({.tp = n, .dp = n, .ep = n, .dp_attention = true});
    }
    return out;
  }
  if (engine == Engine::kTransformers || n % per_node != 0) return out;
  const uint64_t nodes = n / per_node;
  out.push_back({.tp = per_node, .pp = nodes});
  out.push_back({.tp = per_node, .dp = nodes});
  if (moe) {
    out.push_back({.tp = per_node, .ep = per_node, .pp = nodes});
    if (engine == Engine::kVllm) out.push_back({.tp = per_node, .dp = nodes, .ep = n});
    if (engine == Engine::kSglang) out.push_back({.tp = n, .dp = n, .ep = n, .dp_attention = true});
  }
  return out;
}

struct DeployPlanner::Prepared {
  Result<InferenceWeights> weights = MakeError("not prepared");
  std::map<LayoutKey, Result<InferenceEstimate>> estimates;
};

DeployPlanner::DeployPlanner(const Model& model, InferenceOptions base)
    : model_(model), base_(std::move(base)), active_parameters_(ActiveParameters(model)) {}

DeployPlanner::Prepared* DeployPlanner::WeightsFor(bool dequantize) {
  for (const auto& [d, p] : prepared_) {
    if (d == dequantize) return p.get();
  }
  auto p = std::make_shared<Prepared>();
  InferenceOptions o = base_;
  o.quant.dequantize_stored = o.quant.dequantize_stored || dequantize;
  o.compute_capability = 0;
  p->weights = PrepareInferenceWeights(model_, o);
  if (p->weights) {
    // The handling line comes from the GPU being evaluated, not from an unknown one.
    auto& a = p->weights->assumptions;
    a.erase(std::remove_if(a.begin(), a.end(), [](const std::string& s) {
              return s.find("compute capability is unknown") != std::string::npos;
            }), a.end());
  }
  prepared_.emplace_back(dequantize, p);
  return p.get();
}

DeploymentRow DeployPlanner::Evaluate(const DeployGpu& gpu, uint64_t count,
                                      const DeployLayout& layout) {
  DeploymentRow row;
  row.gpu = gpu.name;
  row.gpu_memory_bytes = gpu.memory_bytes;
  row.gpus = count;
  row.layout = layout;
  const Engine engine = base_.engine;
  // vLLM and SGLang have no Apple (Metal) backend; an Apple chip is one device per machine.
  if (gpu.spec && gpu.spec->vendor == GpuVendor::kApple &&
      (engine != Engine::kTransformers || count > 1)) {
    row.refusal = engine != Engine::kTransformers
                      ? fmt::format("{}: no Apple GPU backend", EngineName(engine))
                      : std::string("an Apple chip is one device per machine");
    return row;
  }
  // The stored format on this GPU: kept, dequantized or refused.
  bool dequantize = false;
  const uint32_t cc = gpu.spec ? ComputeCapability(*gpu.spec) : 0;
  if (base_.quant.scheme == QuantScheme::kNone && !base_.quant.dequantize_stored) {
    if (!format_known_) {
      // From the weights prepared as stored (one pass over the tensors, not two).
      Prepared* stored = WeightsFor(false);
      stored_format_ = stored->weights ? FormatNamed(stored->weights->weights.stored_format)
                                       : DetectStoredQuantization(model_).format;
      format_known_ = true;
    }
    auto handling = HandleStoredFormat(stored_format_, engine, cc, row.assumptions);
    if (!handling) {
      row.refusal = handling.error().message;
      return row;
    }
    dequantize = *handling == StoredHandling::kDequantize;
  }
  Prepared* prepared = WeightsFor(dequantize);
  if (!prepared->weights) {
    row.refusal = prepared->weights.error().message;
    return row;
  }
  auto& cache = prepared->estimates;
  const VllmKvBlock block = engine == Engine::kVllm
                               ? VllmKvBlockFor(model_, cc, base_.block_size)
                               : VllmKvBlock{.tokens = base_.block_size};
  // The options on this GPU and layout, the release's defaults for them applied (SGLang's
  // fraction and chunk, vLLM's batch defaults depend on the GPU's memory and name).
  InferenceOptions on_gpu = base_;
  on_gpu.compute_capability = cc;
  plan::CopyParallelLayout(layout, on_gpu);
  on_gpu.gpu_memory_bytes = gpu.memory_bytes;
  on_gpu.gpu_name = gpu.name;
  on_gpu = WithEngineDefaults(on_gpu);
  auto it = cache.find(Key(layout, block, on_gpu));
  if (it == cache.end()) {
    InferenceOptions o = on_gpu;
    o.gpu_memory_bytes = 0;
    it = cache.emplace(Key(layout, block, on_gpu), EstimateInference(model_, o, *prepared->weights))
             .first;
  }
  if (!it->second) {
    row.refusal = it->second.error().message;
    return row;
  }
  const InferenceEstimate& e = *it->second;
  if (e.gpus != count) {
    row.refusal = fmt::format("{} uses {} GPUs, not {}", DeployLayoutName(layout), e.gpus, count);
    return row;
  }
  row.runs = true;
  for (const auto& a : e.assumptions) row.assumptions.push_back(a);
  row.weights_per_gpu_bytes = e.weights_bytes;
  const uint64_t context = base_.context_tokens;
  const uint64_t max_position = model_.hp.max_position_embeddings;
  if (engine == Engine::kVllm || engine == Engine::kSglang) {
    const InferenceOptions& o = on_gpu;
    const ServingBudget s = ServingBudgetFor(e, o);
    row.gpu_memory_utilization = s.utilization;
    row.engine_flags = EquivalentEngineFlags(o, s);
    row.kv_pool_bytes = s.kv_pool_bytes;
    row.max_sequences = s.max_concurrency;
    row.max_context_tokens = max_position ? std::min(s.token_capacity, max_position) : s.token_capacity;
    // s.fits: the batch fits in the pool and a NEXTN draft (SGLang 0.5) beside it in the GPU.
    row.fits = s.num_blocks > 0 && s.fits;
    row.total_per_gpu_bytes = ServingTotalBytes(e, o, s);
  } else {
    // transformers: the estimate at --batch; sequences and context scale its KV cache and
    // activation terms linearly (an approximation, printed).
    row.total_per_gpu_bytes = e.total_bytes;
    const uint64_t fixed = e.total_bytes - std::min(e.total_bytes, e.kv_cache_bytes + e.activation_bytes);
    const uint64_t per_seq = (e.kv_cache_bytes + e.activation_bytes) / std::max<uint64_t>(base_.batch, 1);
    const uint64_t room = gpu.memory_bytes > fixed ? gpu.memory_bytes - fixed : 0;
    row.max_sequences = per_seq ? room / per_seq : 0;
    const uint64_t per_token = e.kv.bytes_per_token + (context ? e.activation_bytes / context : 0);
    row.max_context_tokens = per_token ? room / per_token : 0;
    if (max_position) row.max_context_tokens = std::min(row.max_context_tokens, max_position);
    row.fits = e.total_bytes <= gpu.memory_bytes;
    row.assumptions.push_back("transformers: max sequences and context scale the KV cache and "
                              "activations at --batch linearly");
  }
  // Speed bounds (docs/estimates.md, "Deployment planning").
  if (gpu.spec && gpu.spec->bandwidth_gb_s > 0) {
    const auto& hp = model_.hp;
    const double frac = hp.num_experts && hp.experts_per_token
                            ? std::min(1.0, static_cast<double>(hp.experts_per_token) /
                                                static_cast<double>(hp.num_experts))
                            : 1.0;
    const double read = static_cast<double>(e.sharding.replicated_bytes + e.sharding.sharded_bytes) +
                        static_cast<double>(e.sharding.expert_bytes) * frac +
                        static_cast<double>(e.kv.bytes_per_token) * static_cast<double>(context);
    if (read > 0) {
      row.decode_tokens_per_s = gpu.spec->bandwidth_gb_s * 1e9 / (read * static_cast<double>(layout.pp));
    }
  }
  if (gpu.spec && gpu.spec->tensor_tflops > 0) {
    const double flops = 2 * active_parameters_ + PrefillAttentionFlopsPerToken(model_.hp, context);
    if (flops > 0) {
      row.prefill_tokens_per_s =
          static_cast<double>(count) * gpu.spec->tensor_tflops * 1e12 / flops;
    }
  }
  return row;
}

std::vector<DeploymentRow> DeployPlanner::Search(const DeployGpu& gpu, const DeployRequest& request) {
  std::vector<uint64_t> counts;
  for (uint64_t n : {1, 2, 4, 8}) {
    if (n <= request.max_gpus && n <= request.gpus_per_node) counts.push_back(n);
  }
  const uint64_t node = request.gpus_per_node ? request.gpus_per_node : 8;
  for (uint64_t n = 2 * node; n <= request.max_gpus; n += node) counts.push_back(n);
  std::vector<DeploymentRow> fitting, misses;
  for (uint64_t n : counts) {
    for (const auto& layout : CandidateLayouts(model_, base_.engine, n, node)) {
      DeploymentRow row = Evaluate(gpu, n, layout);
      if (!row.runs) continue;
      (row.fits ? fitting : misses).push_back(std::move(row));
    }
    if (fitting.size() >= request.top) break;
  }
  auto order = [](const DeploymentRow& a, const DeploymentRow& b) {
    if (a.gpus != b.gpus) return a.gpus < b.gpus;
    return Better(a, b);
  };
  if (!fitting.empty()) {
    std::stable_sort(fitting.begin(), fitting.end(), order);
    if (fitting.size() > request.top) fitting.resize(request.top);
    return fitting;
  }
  std::stable_sort(misses.begin(), misses.end(), [](const DeploymentRow& a, const DeploymentRow& b) {
    if (a.max_sequences != b.max_sequences) return a.max_sequences > b.max_sequences;
    if (a.max_context_tokens != b.max_context_tokens) return a.max_context_tokens > b.max_context_tokens;
    return a.gpus < b.gpus;
  });
  if (misses.size() > request.top) misses.resize(request.top);
  return misses;
}

std::vector<DeploymentRow> DeployPlanner::Grid(std::span<const uint64_t> counts) {
  std::vector<DeploymentRow> rows;
  for (const GpuSpec& spec : GpuCatalog()) {
    if (spec.memory_gb == 0) continue;
    DeployGpu gpu{.name = std::string(spec.name), .memory_bytes = MemoryBytes(spec), .spec = &spec};
    for (uint64_t n : counts) {
      std::optional<DeploymentRow> best;
      for (const auto& layout : CandidateLayouts(model_, base_.engine, n, 8)) {
        DeploymentRow row = Evaluate(gpu, n, layout);
        if (!best || Better(row, *best)) best = std::move(row);
      }
      if (best) rows.push_back(std::move(*best));
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const DeploymentRow& a, const DeploymentRow& b) {
    if (a.fits != b.fits) return a.fits;
    const double ca = static_cast<double>(a.gpus) * static_cast<double>(a.gpu_memory_bytes);
    const double cb = static_cast<double>(b.gpus) * static_cast<double>(b.gpu_memory_bytes);
    if (ca != cb) return ca < cb;
    return a.gpu < b.gpu;
  });
  return rows;
}

}  // namespace memfit
