// Inference memory: weights + KV cache + prefill activation peak + CUDA context, and the
// budgets of serving engines. docs/estimates.md, "Inference".

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "estimate/mamba1_scan.h"
#include "estimate/mamba2_scan.h"
#include "estimate/prefill_terms.h"
#include "estimate/saturating_math.h"
#include "estimate/vllm_profile_run.h"
#include "estimate/weights_internal.h"
#include "memfit/checked_math.h"
#include "memfit/estimate_inference.h"
#include "memfit/engine_release.h"
#include "memfit/stored_format.h"
#include "memfit/units.h"
#include "memfit/vllm_kv_block.h"

namespace memfit {
namespace {

// Saturating: activation terms are bounded by the overflow check on the total.
using estimate::saturating::Add;
using estimate::saturating::Mul;

// The smallest VLLM_FUSED_MOE_CHUNK_SIZE default of the releases read (vllm/envs.py, 16 x 1024).
constexpr uint64_t kFusedMoeChunkTokens = 16384;

struct Peak {
  uint64_t bytes = 0;
  std::string where;
};

// The transformers release that added a model type natively; before it the Hub's own modeling
// code runs (trust_remote_code), whose CausalLM forward computes logits for every prompt token
// and upcasts all of them to float32 (`logits = self.lm_head(hidden_states); logits =
// logits.float()`: DeepSeek-V3's modeling_deepseek.py, validation/README.md names the file).
// deepseek_v3: src/transformers/models/deepseek_v3 first in the v4.51.0 tag.
std::optional<LibraryVersion> NativeSince(std::string_view model_type) {
  if (model_type == "deepseek_v3") return LibraryVersion{4, 51};
  return std::nullopt;
}

bool RunsRemoteCode(std::string_view model_type, const RuntimeVersions& v) {
  auto since = NativeSince(model_type);
  return since && v.transformers < *since;
}

// Whether transformers' generate() computes logits for every prompt token of this model type.
// generate() passes num_logits_to_keep=1 (logits_to_keep from 4.50) only to classes whose
// forward takes it: none before 4.45 (4.45 added it to the Llama family). From 4.45 the model
// types below still lack it (grep num_logits_to_keep in transformers/models/*/modeling_*.py at
// v4.48.3; validation/FINDINGS.md 1a); the list is kept for later releases until re-checked
// (GPT-2 gained logits_to_keep in transformers PR 39016, most older classes in PR 41335).
bool AllTokenLogitsInGenerate(std::string_view model_type, const RuntimeVersions& v) {
  if (v.transformers < LibraryVersion{4, 45} || RunsRemoteCode(model_type, v)) return true;
  static constexpr std::string_view kTypes[] = {
      "gpt2", "gpt_neo", "gpt_neox", "gptj", "gpt_bigcode", "codegen", "bloom", "opt", "mpt",
      "xglm", "biogpt", "mamba", "mamba2", "falcon_mamba", "recurrent_gemma", "granitemoe"};
  return std::find(std::begin(kTypes), std::end(kTypes), model_type) != std::end(kTypes);
}

// Eager attention in transformers 4.48's refactored decoder layers returns the softmax
// probabilities (eager_attention_forward returns attn_weights; modeling_llama.py:335 at v4.48.3,
// `hidden_states, self_attn_weights = self.self_attn(...)`), which the layer holds in a local
// through its MLP; before 4.48 the attention module returned None unless output_attentions, and
// the older classes below drop them inside the attention module in every release.
bool KeepsAttentionWeights(std::string_view model_type, const RuntimeVersions& v) {
  if (v.transformers < LibraryVersion{4, 48}) return false;
  static constexpr std::string_view kDrops[] = {
      "gpt2", "gpt_neo", "gpt_neox", "gptj", "gpt_bigcode", "codegen", "bloom", "opt", "mpt",
      "falcon", "xglm", "biogpt", "bert", "roberta", "t5", "vit"};
  return std::find(std::begin(kDrops), std::end(kDrops), model_type) == std::end(kDrops);
}

// What a vLLM release's profile run does beyond a plain forward (estimate/vllm_profile_run.h):
// `release_rules` false keeps memfit's rules before --engine-version (SGLang, and options
// without a release): the MoE layer as a dense MLP of the expert width, the sampled rows'
// logits over this GPU's vocabulary shard and their float32 copy.
struct EngineForward {
  bool release_rules = false;
  VllmSampler sampler = VllmSampler::kNone;
};

// The logits' part of PrefillPeak: the hidden states the head reads and the logits of
// `logit_tokens` rows as transformers' forward, a serving engine's sampler or a vLLM release's
// profile run holds them (`engine`).
Peak LogitsPeak(const Model& model, uint64_t batch, uint64_t tokens, uint32_t c, uint64_t tp,
                uint64_t logit_tokens, bool transformers, const RuntimeVersions& versions,
                EngineForward engine) {
  const Hyperparameters& hp = model.hp;
  const uint64_t h = hp.hidden_size;
  const uint64_t v = CeilDiv(hp.vocab_size, tp);
  if (engine.release_rules) {
    // vLLM's profile run: the forward's hidden states stay referenced by profile_run, the
    // sampled rows are gathered from them (`hidden_states[logit_indices]`), and their logits
    // are gathered over the whole vocabulary on every rank (LogitsProcessor's all-gather)
    // before the dummy sampler run's working set (estimate/vllm_profile_run.h).
    return {Add({Mul({Add({tokens, logit_tokens}), h, c}),
                 Mul({logit_tokens, hp.vocab_size,
                      estimate::VllmSamplerBytesPerLogit(engine.sampler, c)})}),
            "sampler"};
  }
  if (logit_tokens < tokens || !transformers) {
    // The last token's logits (or the sampled rows of a serving engine's profile run) in the
    // model dtype plus their float32 upcast.
    return {Add({Mul({tokens, h, c}), Mul({logit_tokens, v, c + 4})}), "logits"};
  }
  // Logits for every token stay in the model dtype (no float32 upcast of all of them,
  // measured: validation/FINDINGS.md 1a); generate() upcasts the last row of each sequence.
  if (model.architecture.ends_with("ForMaskedLM")) {
    // A masked LM's forward: the head's transform (dense + LayerNorm outputs) and the logits
    // of every position, in the model dtype (FINDINGS.md, "Masked LM").
    return {Add({Mul({2, tokens, h, c}), Mul({tokens, v, c})}), "logits"};
  }
  if (RunsRemoteCode(model.model_type, versions) ||
      estimate::UpcastsEveryLogit(model.model_type)) {
    // The Hub's modeling code upcasts every token's logits (`logits.float()`), and so do
    // GPT-J and CodeGen (`self.lm_head(hidden_states).to(torch.float32)`): both copies are
    // alive at the upcast; in float32 it is a no-op, and generate()'s clone of the last row
    // comes on top.
    const uint64_t logits = c >= 4 ? Add({Mul({tokens, v, c}), Mul({batch, v, 4})})
                                   : Mul({tokens, v, c + 4});
    return {Add({Mul({tokens, h, c}), logits}), "logits"};
  }
  return {Add({Mul({tokens, h, c}), Mul({tokens, v, c}), Mul({batch, v, 4})}), "logits"};
}

// The largest transient of one forward pass over `tokens` tokens (batch x seq), per GPU.
// `transformers`: logits as transformers' forward leaves them (all tokens in the model dtype);
// otherwise as a serving engine's sampler takes them (logit_tokens rows upcast to float32).
// `scan`: how transformers runs the Mamba-2 layers (the kernels add nothing beyond the layer's
// projections; the torch path's float32 chunk products are counted). `engine`: a vLLM
// release's profile-run rules.
Peak PrefillPeak(const Model& model, uint64_t batch, uint64_t seq, uint32_t c, AttnImpl attn,
                 uint64_t tp, uint64_t logit_tokens, bool transformers,
                 const RuntimeVersions& versions, Mamba2Scan scan,
                 std::vector<std::string>& assumptions, EngineForward engine = {}) {
  const Hyperparameters& hp = model.hp;
  const uint64_t tokens = Mul({batch, seq});
  const uint64_t h = hp.hidden_size;
  const uint64_t stream = Mul({2, tokens, h, c});  // residual + normed input
  Peak best;
  // MLA in transformers (the Hub's DeepSeek code and the native class alike): the prefill's
  // value cache entries are views of kv_b_proj's output (`k_nope, value_states = torch.split(
  // kv, ...)`), so each MLA layer's cache holds heads x (qk_nope + v) per token, qk_nope more
  // than the compact cache, until the first decode step's torch.cat copies them (measured on
  // CPU: validation/FINDINGS.md 1i). Alive through the later layers and the logits.
  uint64_t mla_views = 0;
  if (transformers) {
    for (const auto& L : hp.layers) {
      if (L.attention == AttentionKind::kMla) {
        mla_views =
            Add({mla_views, Mul({tokens, CeilDiv(L.num_heads, tp), hp.qk_nope_head_dim, c})});
      }
    }
  }
  // Gemma and Gemma-2 scale the embedding by sqrt(hidden) into a new tensor (`hidden_states =
  // hidden_states * normalizer`, modeling_gemma2.py:641 at v4.48.3); `inputs_embeds` stays
  // referenced through every layer (measured: validation/FINDINGS.md 1l).
  const bool scaled_embeds = transformers && (model.model_type == "gemma" ||
                                              model.model_type == "gemma2");
  const uint64_t embeds_kept = scaled_embeds ? Mul({tokens, h, c}) : 0;
  // Fused-qkv classes whose prefill cache holds views of the projection's output
  // (estimate::PinnedProjectionElements): what the earlier layers' caches pin beyond their keys
  // and values, alive through the later layers and the logits until the first decode step.
  uint64_t pinned = 0;
  auto consider = [&](uint64_t bytes, std::string where) {
    bytes = Add({bytes, mla_views, embeds_kept, pinned});
    if (bytes > best.bytes) best = {bytes, std::move(where)};
  };
  uint64_t f_dense = hp.intermediate_size;
  uint64_t f_moe = hp.moe_intermediate_size ? hp.moe_intermediate_size : hp.intermediate_size;
  std::vector<LayerInfo> layers = hp.layers;
  if (layers.empty() && hp.num_layers > 0) {
    uint64_t hd = hp.head_dim ? hp.head_dim
                              : (hp.num_attention_heads ? h / hp.num_attention_heads : 0);
    layers.push_back(LayerInfo{.num_heads = hp.num_attention_heads,
                               .num_kv_heads = hp.num_kv_heads ? hp.num_kv_heads : hp.num_attention_heads,
                               .head_dim_k = hd, .head_dim_v = hd, .intermediate_size = f_dense});
  }
  for (const auto& L : layers) {
    const uint64_t nh = CeilDiv(L.num_heads, tp);
    const uint64_t nkv = std::max<uint64_t>(CeilDiv(L.num_kv_heads, tp), 1);
    const uint64_t qkv = Mul({tokens, nh * L.head_dim_k + nkv * (L.head_dim_k + L.head_dim_v), c});
    const uint64_t out = Mul({tokens, nh * L.head_dim_v, c});
    uint64_t kv_len = seq;
    if (L.attention == AttentionKind::kSliding && L.window_tokens && attn == AttnImpl::kFlash) {
      kv_len = std::min(seq, L.window_tokens);
    }
    // Gemma-2's sliding layers (every implementation but flash, modeling_gemma2.py:292-306 at
    // v4.48.3) rebuild the 4-D mask for the window: a bool `torch.tril(ones_like(mask))` and a
    // `torch.where` copy in the model dtype, both alive through the layer (FINDINGS.md 1l).
    uint64_t window_mask = 0;
    if (transformers && attn != AttnImpl::kFlash && L.attention == AttentionKind::kSliding &&
        model.model_type == "gemma2") {
      window_mask = Mul({batch, seq, seq, c + 1});
    }
    uint64_t core = window_mask;
    if (attn == AttnImpl::kEager) {
      // The scores alive together at eager attention's peak, per family (prefill_terms.cc):
      // Llama-style classes softmax in float32 (c + 8 B per score in 16-bit, 8 in float32);
      // GPT-NeoX, GPT-2 and Falcon in the model dtype; BLOOM keeps a masked copy; GPT-J scores
      // in float32. Plus the 4-D causal mask (c) where the class builds one.
      const estimate::EagerScores scores =
          estimate::EagerScoresFor(transformers ? model.model_type : std::string_view(), c);
      core = Add({core, Mul({batch, nh, seq, kv_len, scores.bytes_per_score})});
      if (scores.float_mask) core = Add({core, Mul({batch, seq, kv_len, c})});
    } else {
      core = Add({core, out, Mul({tokens, nh, 4})});  // output + fp32 logsumexp per row
    }
    if (L.attention != AttentionKind::kNone) {
      consider(Add({stream, qkv, core}),
               attn == AttnImpl::kEager ? "attention scores" : "attention");
    }
    // From here this layer's cache entries are stored (its projection output is in `qkv` above).
    if (transformers) {
      pinned = Add({pinned, Mul({tokens, estimate::PinnedProjectionElements(model.model_type, L, tp),
                                  c})});
    }
    if (transformers && scan == Mamba2Scan::kTorch) {
      if (auto shape = estimate::Mamba2ScanShapeFor(model, L, batch, seq, tp)) {
        // torch_forward: in_proj's output (gate | x B C | dt; gate is a view of it until the
        // gated norm) and the conv's activated output stay alive through the scan, whose float32
        // products come on top (estimate/mamba2_scan.h).
        const uint64_t d_inner = Mul({L.state.heads, shape->head_dim});
        const uint64_t proj = Mul({tokens, CeilDiv(d_inner + L.state.conv_channels + L.state.heads, tp), c});
        const uint64_t conv = Mul({tokens, CeilDiv(L.state.conv_channels, tp), c});
        consider(Add({stream, proj, conv, estimate::Mamba2TorchScanBytes(*shape).forward_peak}),
                 "Mamba-2 scan (torch path)");
      }
    }
    if (transformers && scan == Mamba2Scan::kTorch) {
      if (auto shape = estimate::Mamba1ScanShapeFor(model, L, batch, seq, tp)) {
        // slow_forward (modeling_jamba.py, modeling_mamba.py, modeling_falcon_mamba.py): in_proj's
        // output (hidden | gate, 2 d: the gate is a view of it to the end) and the conv's
        // activated output (d) stay alive through the scan, whose float32 discretization and
        // model-dtype locals come on top (estimate/mamba1_scan.h).
        const uint64_t proj = Mul({tokens, 2 * shape->channels, c});
        const uint64_t conv = Mul({tokens, shape->channels, c});
        consider(Add({stream, proj, conv, estimate::Mamba1TorchScanBytes(*shape, c).forward_peak}),
                 "Mamba-1 scan (torch path)");
      }
    }
    uint64_t f = L.moe ? f_moe : (L.intermediate_size ? L.intermediate_size : f_dense);
    f = CeilDiv(f, tp);
    uint64_t mlp = hp.gated_mlp ? Mul({3, tokens, f, c}) : Mul({2, tokens, f, c});
    if (L.moe && hp.num_experts) mlp = Add({mlp, Mul({tokens, hp.num_experts, 4})});
    if (L.moe && engine.release_rules && hp.num_experts && hp.experts_per_token) {
      // vLLM's fused MoE: the routed tokens' workspace, top_k rows per token.
      mlp = estimate::VllmFusedMoeBytes(tokens, hp.num_experts, hp.experts_per_token, f, h,
                                        hp.gated_mlp, c);
    }
    if (attn == AttnImpl::kEager && L.attention != AttentionKind::kNone &&
        KeepsAttentionWeights(model.model_type, versions)) {
      // The decoder layer keeps the attention probabilities (self_attn_weights) until it
      // returns, through its MLP (measured on CPU: validation/FINDINGS.md).
      mlp = Add({mlp, Mul({batch, nh, seq, kv_len, c})});
    }
    consider(Add({stream, mlp, window_mask}), "mlp");
  }
  if (logit_tokens && hp.vocab_size) {
    Peak logits = LogitsPeak(model, batch, tokens, c, tp, logit_tokens, transformers, versions,
                             engine);
    consider(logits.bytes, std::move(logits.where));
  }
  if (hp.layers.empty()) assumptions.push_back("no per-layer description: one generic layer used for the activation peak");
  return best;
}

}  // namespace

std::string_view AttnImplName(AttnImpl impl) {
  switch (impl) {
    case AttnImpl::kEager: return "eager";
    case AttnImpl::kSdpa: return "sdpa";
    case AttnImpl::kFlash: return "flash";
  }
  return "?";
}

Result<AttnImpl> ParseAttnImpl(std::string_view s) {
  if (s == "eager") return AttnImpl::kEager;
  if (s == "sdpa") return AttnImpl::kSdpa;
  if (s == "flash" || s == "flash2" || s == "fa2" || s == "flash_attention_2") return AttnImpl::kFlash;
  return MakeError("--attn {}: expected eager, sdpa or flash", s);
}

std::string_view EngineName(Engine engine) {
  switch (engine) {
    case Engine::kTransformers: return "transformers";
    case Engine::kVllm: return "vllm";
    case Engine::kSglang: return "sglang";
    case Engine::kLlamaCpp: return "llama.cpp";
  }
  return "?";
}

Result<Engine> ParseEngine(std::string_view s) {
  if (s == "transformers" || s == "hf") return Engine::kTransformers;
  if (s == "vllm") return Engine::kVllm;
  if (s == "sglang") return Engine::kSglang;
  if (s == "llama.cpp" || s == "llamacpp" || s == "llama-cpp") return Engine::kLlamaCpp;
  return MakeError("--engine {}: expected transformers, vllm, sglang or llama.cpp", s);
}

ServingBudget ServingBudgetFor(const InferenceEstimate& e, const InferenceOptions& given) {
  // The release's fraction for this GPU (SGLang's depends on its memory).
  const InferenceOptions o = WithEngineDefaults(given);
  const uint64_t sequence_bytes = e.sequence_kv_bytes;
  ServingBudget s;
  s.replicas = e.layout.replicas;
  s.sequence_bytes = sequence_bytes;
  // SGLang: a page of 1 token; vLLM: the block size, raised for hybrid models (kv_cache.cc).
  const uint64_t bs = o.engine == Engine::kVllm
                          ? (e.kv.block_size ? e.kv.block_size : o.block_size)
                          : 1;
  // Per pipeline stage: its weights and the KV bytes per token of its layers. The engine
  // allocates the same number of blocks on every GPU: the fewest any stage can hold.
  std::vector<std::pair<uint64_t, uint64_t>> stages;  // (weights, kv bytes per token)
  // Per stage: one sequence's bytes in its layers (windows, indexer keys, recurrent state), from
  // the request's cache of o.batch sequences.
  std::vector<uint64_t> stage_sequence;
  for (const auto& st : e.sharding.stages) {
    uint64_t per_token = 0, per_sequence = 0;
    if (e.sharding.stages.size() == 1) {
      per_token = e.kv.bytes_per_token;
    } else {
      for (const auto& l : e.kv.layers) {
        if (l.layer >= st.first_layer && l.layer < st.end_layer) {
          per_token = Add({per_token, l.bytes_per_token});
          per_sequence = Add({per_sequence, CeilDiv(l.bytes, std::max<uint64_t>(o.batch, 1))});
        }
      }
    }
    stages.emplace_back(st.bytes, per_token);
    stage_sequence.push_back(per_sequence);
  }
  uint64_t per_token = 0;
  for (const auto& [w, t] : stages) per_token = std::max(per_token, t);
  s.page_bytes = Mul({per_token, bs});
  s.utilization = o.gpu_memory_utilization;
  if (o.gpu_memory_bytes > 0) {
    s.requested_bytes = static_cast<uint64_t>(static_cast<double>(o.gpu_memory_bytes) *
                                              o.gpu_memory_utilization);
    s.num_blocks = UINT64_MAX;
    uint64_t staged_concurrency = UINT64_MAX;  // the fewest sequences any stage holds
    for (size_t i = 0; i < stages.size(); ++i) {
      const auto& [w, t] = stages[i];
      // vLLM >= 0.21 profiles its CUDA graphs inside the budget too.
      const uint64_t non_kv =
          o.engine == Engine::kVllm
              ? Add({w, e.activation_bytes, o.non_torch_bytes,
                     o.cuda_graphs_in_budget ? e.cuda_graph_bytes : 0})
              : w;  // SGLang's static fraction: weights + KV pool
      const uint64_t pool = s.requested_bytes > non_kv ? s.requested_bytes - non_kv : 0;
      const uint64_t page = Mul({t, bs});
      const uint64_t blocks = page ? pool / page : UINT64_MAX;
      if (stage_sequence[i] > 0) {
        staged_concurrency = std::min(staged_concurrency, pool / stage_sequence[i]);
      }
      if (blocks < s.num_blocks) {
        s.num_blocks = blocks;
        s.non_kv_bytes = non_kv;
        s.kv_pool_bytes = pool;
        s.page_bytes = page;
      }
    }
    if (s.num_blocks == UINT64_MAX) s.num_blocks = 0;
    s.token_capacity = Mul({s.num_blocks, bs});
    if (stages.size() == 1 && sequence_bytes > 0) {
      // Sequences of the context that the pool holds, each with its windows, indexer keys and
      // recurrent state (not a full-context page per layer).
      s.max_concurrency = Mul({s.kv_pool_bytes / sequence_bytes, s.replicas});
    } else if (stages.size() > 1 && staged_concurrency != UINT64_MAX) {
      // Pipeline stages: each stage's pool over one sequence's bytes in that stage's layers
      // (windows and recurrent state as in the single-stage case, not full-context pages).
      s.max_concurrency = Mul({staged_concurrency, s.replicas});
    } else {
      uint64_t seq_blocks = CeilDiv(o.context_tokens, bs);
      s.max_concurrency = seq_blocks ? Mul({s.num_blocks / seq_blocks, s.replicas}) : 0;
    }
    s.fits = s.max_concurrency >= o.batch;
  }
  return s;
}

uint64_t ServingNeedBytes(const InferenceEstimate& e, const InferenceOptions& given,
                          const ServingBudget& s) {
  const InferenceOptions o = WithEngineDefaults(given);
  const uint64_t replicas = std::max<uint64_t>(1, s.replicas);
  const uint64_t sequences = CeilDiv(std::max<uint64_t>(1, o.batch), replicas);
  // CUDA graphs: in non_kv when the engine profiles them inside its budget.
  uint64_t need = Add({s.non_kv_bytes, Mul({sequences, e.sequence_kv_bytes}),
                       o.cuda_graphs_in_budget ? 0 : e.cuda_graph_bytes});
  if (o.engine == Engine::kSglang) need = Add({need, e.activation_bytes});
  return need;
}

Result<InferenceWeights> PrepareInferenceWeights(const Model& model, const InferenceOptions& o) {
  InferenceWeights w;
  // Weights: as the checkpoint stores them unless --quant says otherwise, or the engine cannot
  // run the stored format on this GPU (docs/estimates.md, "Weights as stored").
  QuantOptions q = o.quant;
  q.compute_dtype = o.dtype;
  // One pass each over the tensors (a large MoE has ~100k), shared by the weights and the splits.
  const StoredQuantization stored = DetectStoredQuantization(model);
  const std::vector<estimate::RoleTensor> roles = estimate::ClassifyTensors(model);
  if (q.scheme == QuantScheme::kNone && !q.dequantize_stored && o.engine != Engine::kLlamaCpp) {
    MEMFIT_ASSIGN_OR_RETURN(StoredHandling handling,
                            HandleStoredFormat(stored.format, o.engine, o.compute_capability,
                                               w.assumptions));
    q.dequantize_stored = handling == StoredHandling::kDequantize;
  }
  MEMFIT_ASSIGN_OR_RETURN(w.weights, estimate::QuantizedWeightsFrom(model, q, stored, roles));
  if (w.weights.stored_quantized_bytes > 0) {
    w.assumptions.push_back(fmt::format(
        "weights as stored: {} {} ({} in all); --dtype {} applies to the rest (embeddings, norms, "
        "lm_head); --quant none dequantizes, --quant <scheme> re-quantizes",
        FormatBytes(w.weights.stored_quantized_bytes), w.weights.stored_format,
        FormatBytes(w.weights.total_bytes), TorchDtypeName(o.dtype)));
  } else if (w.weights.stored_format != "none" && q.scheme == QuantScheme::kNone) {
    w.assumptions.push_back(fmt::format("the checkpoint's {} weights dequantized to {}",
                                        w.weights.stored_format, TorchDtypeName(o.dtype)));
  }
  w.splits = estimate::SplitsFrom(model, roles);
  return w;
}

Result<InferenceEstimate> EstimateInference(const Model& model, const InferenceOptions& o) {
  if (o.engine == Engine::kLlamaCpp) {
    return MakeError("{}: llama.cpp inference is estimated by the GGUF estimator, not here",
                     model.name);
  }
  MEMFIT_ASSIGN_OR_RETURN(InferenceWeights w, PrepareInferenceWeights(model, o));
  return EstimateInference(model, o, w);
}

namespace {

// The block size vLLM runs with (memfit/vllm_kv_block.h), with an assumption line when an MLA
// backend forced it.
uint64_t VllmBlockSize(const Model& model, const InferenceOptions& o,
                       std::vector<std::string>& assumptions) {
  const VllmKvBlock block = VllmKvBlockFor(model, o.compute_capability, o.block_size);
  if (block.backend.empty()) return block.tokens;
  assumptions.push_back(fmt::format(
      "vLLM {} backend{}: KV block size {} tokens instead of {} (vllm/platforms/cuda.py)",
      block.backend,
      block.assumed_gpu ? " (the GPU's compute capability is unknown: Hopper's rule assumed)" : "",
      block.tokens, o.block_size));
  return block.tokens;
}

}  // namespace

Result<InferenceEstimate> EstimateInference(const Model& model, const InferenceOptions& given,
                                            const InferenceWeights& w) {
  // The release's defaults (gpu_memory_utilization, max_num_seqs, max_num_batched_tokens) for
  // this GPU, applied once (memfit/engine_release.h).
  const InferenceOptions o = WithEngineDefaults(given);
  if (o.engine == Engine::kLlamaCpp) {
    return MakeError("{}: llama.cpp inference is estimated by the GGUF estimator, not here",
                     model.name);
  }
  if (o.tp == 0 || o.batch == 0 || o.context_tokens == 0) {
    return MakeError("inference: --tp, --batch and --context must be at least 1");
  }
  InferenceEstimate e;
  e.tp = o.tp;
  const uint32_t c = DtypeBits(o.dtype) / 8 ? DtypeBits(o.dtype) / 8 : 2;
  // The estimate keeps the weights' summary, not their bytes per tensor: 2 MB for Kimi-K3's
  // 249k tensors, which the deployment planner would copy for every layout it evaluates.
  e.weights = static_cast<const QuantizedWeightsSummary&>(w.weights);
  e.assumptions = w.assumptions;
  ParallelOptions po{.engine = o.engine, .tp = o.tp, .dp = o.dp, .dp_attention = o.dp_attention,
                     .ep = o.ep, .pp = o.pp};
  MEMFIT_ASSIGN_OR_RETURN(e.layout, ResolveParallel(model, po));
  MEMFIT_ASSIGN_OR_RETURN(e.sharding,
                          ShardWeights(model, w.splits, w.weights.tensor_bytes, e.layout));
  for (auto& a : e.layout.assumptions) e.assumptions.push_back(a);
  e.gpus = e.layout.gpus;
  e.weights_bytes = e.sharding.per_gpu_bytes;
  if (e.layout.gpus > 1) {
    e.notes.push_back(fmt::format(
        "weights per GPU (heaviest GPU): {} replicated + {} split + {} routed experts",
        FormatBytes(e.sharding.replicated_bytes), FormatBytes(e.sharding.sharded_bytes),
        FormatBytes(e.sharding.expert_bytes)));
  }
  const bool paged = o.engine != Engine::kTransformers;
  const bool vllm = o.engine == Engine::kVllm;
  KvCacheOptions kv{.context_tokens = o.context_tokens, .batch = o.batch, .dtype = o.kv_dtype,
                    .model_dtype = o.dtype, .tp = e.layout.attn_tp,
                    .block_size = vllm ? VllmBlockSize(model, o, e.assumptions) : 0,
                    .mla_latent = paged, .encoder_tokens = o.encoder_tokens,
                    .decoder_tokens = o.decoder_tokens,
                    .conv_full_kernel = !paged, .recurrent_state_fp32 = !paged,
                    .window_extra_tokens = vllm ? o.max_batched_tokens : 0,
                    .pad_state_to_page = vllm, .fp8_indexer = paged};
  MEMFIT_ASSIGN_OR_RETURN(e.kv, EstimateKvCache(model, kv));
  e.kv_cache_bytes = e.kv.bytes;
  for (auto& a : e.kv.assumptions) e.assumptions.push_back(a);
  if (!paged) {
    for (const auto& L : model.hp.layers) {
      if (L.attention == AttentionKind::kMla) {
        e.notes.push_back("transformers caches MLA keys and values decompressed (per head); "
                          "vLLM/SGLang cache the latent");
        break;
      }
    }
  }

  if (!paged) {
    // Logits for the last token (transformers >= 4.45 for most classes), or for every token:
    // --all-logits, classes without num_logits_to_keep, and masked LMs (a forward pass).
    const bool masked_lm = model.architecture.ends_with("ForMaskedLM");
    const bool class_all = AllTokenLogitsInGenerate(model.model_type, o.versions);
    e.assumptions.push_back(RuntimeVersionsAssumption(o.versions));
    if (RunsRemoteCode(model.model_type, o.versions)) {
      e.assumptions.push_back(fmt::format(
          "transformers {} has no {} class (native from {}): the model's own modeling code "
          "(trust_remote_code) is modelled, with logits for every prompt token in float32",
          LibraryVersionName(o.versions.transformers), model.model_type,
          LibraryVersionName(*NativeSince(model.model_type))));
    } else if (o.last_token_logits && class_all) {
      e.assumptions.push_back(fmt::format(
          "transformers {}: the {} class computes logits for every prompt token in generate() "
          "(no num_logits_to_keep){}", LibraryVersionName(o.versions.transformers),
          model.model_type,
          estimate::UpcastsEveryLogit(model.model_type) ? ", upcast to float32 in its forward" : ""));
    }
    const uint64_t logit_tokens = o.last_token_logits && !class_all && !masked_lm
                                      ? o.batch
                                      : Mul({o.batch, o.context_tokens});
    Peak p = PrefillPeak(model, o.batch, o.context_tokens, c, o.attn, o.tp, logit_tokens,
                         /*transformers=*/true, o.versions, o.mamba2_scan, e.assumptions);
    const bool mamba2 = estimate::HasMamba2Layers(model);
    if (mamba2 || estimate::HasMamba1Layers(model)) {
      // The other path's peak, for the assumption line (same model, same prompt).
      std::vector<std::string> ignored;
      const bool torch = o.mamba2_scan == Mamba2Scan::kTorch;
      const Peak other = PrefillPeak(model, o.batch, o.context_tokens, c, o.attn, o.tp,
                                     logit_tokens, /*transformers=*/true, o.versions,
                                     torch ? Mamba2Scan::kKernels : Mamba2Scan::kTorch, ignored);
      const uint64_t torch_bytes = torch ? p.bytes : other.bytes;
      const uint64_t kernel_bytes = torch ? other.bytes : p.bytes;
      const uint64_t extra = torch_bytes - std::min(torch_bytes, kernel_bytes);
      e.assumptions.push_back(
          mamba2 ? estimate::Mamba2ScanAssumption(o.mamba2_scan, model.hp.ssm_chunk_size, extra)
                 : estimate::Mamba1ScanAssumption(o.mamba2_scan, extra));
    }
    e.activation_bytes = p.bytes;
    e.activation_peak_at = p.where;
    e.notes.push_back("prefill of the whole context in one forward pass (the worst case)");
    // DynamicCache grows by torch.cat: one layer's old and new K/V coexist for a moment.
    uint64_t layer_kv = 0;
    for (const auto& l : e.kv.layers) layer_kv = std::max(layer_kv, l.bytes);
    e.activation_bytes = Add({e.activation_bytes, layer_kv});
    e.cuda_context_bytes = o.overhead.cuda_context_bytes;
    uint64_t allocated = Add({e.weights_bytes, e.kv_cache_bytes, e.activation_bytes});
    e.allocator_reserve_bytes =
        static_cast<uint64_t>(static_cast<double>(allocated) * o.overhead.allocator_reserve_fraction);
    e.total_bytes = Add({allocated, e.cuda_context_bytes, e.allocator_reserve_bytes});
  } else {
    // Profile run: a dummy batch of max_batched_tokens through the model (flash attention),
    // logits for up to max_num_seqs sampled tokens.
    uint64_t prof_tokens = o.max_batched_tokens;
    EngineForward engine;
    if (o.engine == Engine::kVllm && o.release) {
      engine = {.release_rules = true, .sampler = o.release->sampler};
      if (prof_tokens > kFusedMoeChunkTokens && estimate::HasMoeLayers(model)) {
        e.assumptions.push_back(fmt::format(
            "vLLM's fused MoE workspace counted for all {} profile-run tokens at once; "
            "VLLM_FUSED_MOE_CHUNK_SIZE (16384 or more by release) may chunk it",
            prof_tokens));
      }
    }
    Peak p = PrefillPeak(model, 1, prof_tokens, c, AttnImpl::kFlash, e.layout.attn_tp,
                         std::min(o.max_num_seqs, prof_tokens), /*transformers=*/false,
                         o.versions, Mamba2Scan::kKernels, e.assumptions, engine);
    e.activation_bytes = p.bytes;
    e.activation_peak_at = p.where + " (profile run of " + std::to_string(prof_tokens) + " tokens)";
    e.cuda_graph_bytes = o.cuda_graph_bytes;
    // One sequence of the requested context: attention pages (sliding and chunked layers capped
    // at their window), indexer keys and recurrent state, as the KV estimate counts them.
    kv.batch = 1;
    MEMFIT_ASSIGN_OR_RETURN(KvCacheEstimate one, EstimateKvCache(model, kv));
    e.sequence_kv_bytes = one.bytes;
    ServingBudget s = ServingBudgetFor(e, o);
    if (o.gpu_memory_bytes > 0) {
      e.kv_cache_bytes = Mul({s.num_blocks, s.page_bytes});
      e.total_bytes = Add({s.requested_bytes, o.cuda_graphs_in_budget ? 0 : e.cuda_graph_bytes});
      if (o.engine == Engine::kSglang) e.total_bytes = Add({e.total_bytes, e.activation_bytes});
      // A deployment that does not fit: its need, not the budget it would preallocate.
      if (!s.fits) e.total_bytes = std::max(e.total_bytes, ServingNeedBytes(e, o, s));
      e.notes.push_back(fmt::format("{} preallocates the KV pool: {} blocks of {} = {} tokens per "
                                    "GPU; {} sequences of {} tokens fit ({} each){}",
                                    EngineName(o.engine), s.num_blocks, FormatBytes(s.page_bytes),
                                    s.token_capacity, s.max_concurrency, o.context_tokens,
                                    FormatBytes(s.sequence_bytes),
                                    s.replicas > 1 ? fmt::format(" ({} replicas)", s.replicas)
                                                   : std::string()));
      if (o.engine == Engine::kVllm) {
        e.notes.push_back(o.cuda_graphs_in_budget
                              ? "CUDA graphs are profiled inside vLLM's budget (vLLM >= 0.21): "
                                "total = gpu_memory x utilization"
                              : "CUDA graphs are outside vLLM's budget (PR #21489): total = "
                                "gpu_memory x utilization + CUDA graphs");
      }
    } else {
      e.total_bytes = Add({e.weights_bytes, e.kv_cache_bytes, e.activation_bytes,
                           o.non_torch_bytes, e.cuda_graph_bytes});
      e.notes.push_back("no --gpu-memory: KV cache for --batch x --context only (the engine "
                        "would preallocate everything its budget leaves)");
    }
    e.serving = s;
    InferenceEstimate::EngineSettings settings;
    settings.gpu_memory_utilization = o.gpu_memory_utilization;
    settings.max_num_seqs = o.max_num_seqs;
    settings.max_batched_tokens = o.max_batched_tokens;
    settings.cuda_graphs_in_budget = o.cuda_graphs_in_budget;
    settings.equivalent_flags = EquivalentEngineFlags(o, s);
    if (o.release) {
      settings.version = std::string(o.release->version);
      settings.source = std::string(o.release->source);
      e.notes.push_back(fmt::format("{} {} ({}): {}", EngineName(o.engine), settings.version,
                                    settings.source, settings.equivalent_flags));
    }
    e.engine_settings = std::move(settings);
    if (o.engine == Engine::kSglang && o.release && given.gpu_memory_utilization < 0) {
      for (auto& a : SglangRuleAssumptions(o)) e.assumptions.push_back(std::move(a));
    }
  }
  for (const auto& n : e.weights.notes) e.notes.push_back(n);
  if (e.total_bytes == UINT64_MAX) return MakeError("{}: inference total overflows", model.name);
  return e;
}

}  // namespace memfit
