// Inference memory: weights + KV cache + prefill activation peak + CUDA context, and the
// budgets of serving engines (the activation peak itself: inference_peaks.cc).
// docs/estimates.md, "Inference".

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "base/enum_names.h"
#include "estimate/inference_peaks.h"
#include "estimate/layer_mixers.h"
#include "estimate/mamba1_scan.h"
#include "estimate/mamba2_scan.h"
#include "estimate/prefill_terms.h"
#include "estimate/saturating_math.h"
#include "estimate/speculative_draft.h"
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

// --attn's and --engine's words: each value's name, then the other spellings read.
constexpr auto kAttnImpls = std::to_array<EnumWord<AttnImpl>>({
    {"eager", AttnImpl::kEager}, {"sdpa", AttnImpl::kSdpa},
    {"flash", AttnImpl::kFlash}, {"flash2", AttnImpl::kFlash}, {"fa2", AttnImpl::kFlash},
    {"flash_attention_2", AttnImpl::kFlash}});
constexpr auto kEngines = std::to_array<EnumWord<Engine>>({
    {"transformers", Engine::kTransformers}, {"hf", Engine::kTransformers},
    {"vllm", Engine::kVllm}, {"sglang", Engine::kSglang},
    {"llama.cpp", Engine::kLlamaCpp}, {"llamacpp", Engine::kLlamaCpp},
    {"llama-cpp", Engine::kLlamaCpp}});

}  // namespace

std::string_view AttnImplName(AttnImpl impl) { return NameOf(impl, kAttnImpls); }

Result<AttnImpl> ParseAttnImpl(std::string_view s) {
  if (auto impl = FindWord(s, kAttnImpls)) return *impl;
  return MakeError("--attn {}: expected eager, sdpa or flash", s);
}

std::string_view EngineName(Engine engine) { return NameOf(engine, kEngines); }

Result<Engine> ParseEngine(std::string_view s) {
  if (auto engine = FindWord(s, kEngines)) return *engine;
  return MakeError("--engine {}: expected transformers, vllm, sglang or llama.cpp", s);
}

ServingBudget ServingBudgetFor(const InferenceEstimate& e, const InferenceOptions& given) {
  // The release's fraction for this GPU (SGLang's depends on its memory).
  const InferenceOptions o = WithEngineDefaults(given);
  // SGLang >= 0.5.14: a NEXTN draft's weights beside the target's and its KV cache in every
  // pool token, inside the fraction.
  const bool draft_inside = e.draft.inside_budget && e.draft.weights_bytes > 0;
  const uint64_t draft_token = draft_inside ? e.draft.kv_bytes_per_token : 0;
  const uint64_t sequence_bytes = Add({e.sequence_kv_bytes, Mul({draft_token, o.context_tokens})});
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
    stages.emplace_back(Add({st.bytes, draft_inside ? e.draft.weights_bytes : 0}),
                        Add({per_token, draft_token}));
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
    if (e.draft.weights_bytes > 0 && !draft_inside) {
      // SGLang 0.5's NEXTN draft, after its static fraction is spent: the draft's weights, its
      // pool of the target's tokens plus the headroom, and the target pool raised by the same
      // headroom (a page is one token in SGLang).
      s.draft_bytes =
          Add({e.draft.weights_bytes,
               Mul({Add({s.token_capacity, e.draft.headroom_tokens}), e.draft.kv_bytes_per_token}),
               Mul({e.draft.headroom_tokens, s.page_bytes})});
    }
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
    s.fits = s.max_concurrency >= o.batch &&
             (s.draft_bytes == 0 || Add({s.requested_bytes, s.draft_bytes}) <= o.gpu_memory_bytes);
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
  if (o.engine == Engine::kSglang) need = Add({need, e.activation_bytes, s.draft_bytes});
  return need;
}

uint64_t ServingTotalBytes(const InferenceEstimate& e, const InferenceOptions& given,
                           const ServingBudget& s) {
  const InferenceOptions o = WithEngineDefaults(given);
  uint64_t total = Add({s.requested_bytes, o.cuda_graphs_in_budget ? 0 : e.cuda_graph_bytes});
  // SGLang: its activations and a NEXTN draft (0.5) are outside its static fraction.
  if (o.engine == Engine::kSglang) total = Add({total, e.activation_bytes, s.draft_bytes});
  // A deployment that does not fit: its need, not the budget it would preallocate.
  return s.fits ? total : std::max(total, ServingNeedBytes(e, o, s));
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
        "weights as stored: {} {} ({} in all); --dtype {} applies to the tensors not stored "
        "quantized; --quant none dequantizes, --quant <scheme> re-quantizes",
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

// The weights on each GPU under the parallel layout, with the layout's assumptions and, on
// several GPUs, what the heaviest one holds.
Status ShardInferenceWeights(const Model& model, const InferenceOptions& o,
                             const InferenceWeights& w, InferenceEstimate& e) {
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
  return Ok{};
}

// The cache as the engine keeps it: transformers' DynamicCache (MLA decompressed per head,
// recurrent state in float32, the conv's whole kernel) or a paged engine's pages (vLLM's block
// size, its window's extra tokens and its hybrid page padding). May add vLLM's block line.
KvCacheOptions InferenceKvOptions(const Model& model, const InferenceOptions& o,
                                  InferenceEstimate& e) {
  const bool paged = o.engine != Engine::kTransformers;
  const bool vllm = o.engine == Engine::kVllm;
  return {.context_tokens = o.context_tokens, .batch = o.batch, .dtype = o.kv_dtype,
          .model_dtype = o.dtype, .tp = e.layout.attn_tp,
          .block_size = vllm ? VllmBlockSize(model, o, e.assumptions) : 0,
          .mla_latent = paged, .encoder_tokens = o.encoder_tokens,
          .decoder_tokens = o.decoder_tokens,
          .conv_full_kernel = !paged, .recurrent_state_fp32 = !paged,
          .window_extra_tokens = vllm ? o.max_batched_tokens : 0,
          .pad_state_to_page = vllm, .fp8_indexer = paged};
}

// The rows transformers computes logits for: the last token of each sequence (transformers >=
// 4.45 for most classes), or every token (--all-logits, classes without num_logits_to_keep,
// masked LMs: a forward pass); an assumption line says why where the class decides it.
uint64_t TransformersLogitTokens(const Model& model, const InferenceOptions& o,
                                 std::vector<std::string>& assumptions) {
  const bool masked_lm = model.architecture.ends_with("ForMaskedLM");
  const bool class_all = estimate::AllTokenLogitsInGenerate(model.model_type, o.versions);
  if (estimate::RunsRemoteCode(model.model_type, o.versions)) {
    assumptions.push_back(fmt::format(
        "transformers {} has no {} class (native from {}): the model's own modeling code "
        "(trust_remote_code) is modelled, with logits for every prompt token in float32",
        LibraryVersionName(o.versions.transformers), model.model_type,
        LibraryVersionName(*estimate::NativeSince(model.model_type))));
  } else if (o.last_token_logits && class_all) {
    assumptions.push_back(fmt::format(
        "transformers {}: the {} class computes logits for every prompt token in generate() "
        "(no num_logits_to_keep){}",
        LibraryVersionName(o.versions.transformers), model.model_type,
        estimate::UpcastsEveryLogit(model.model_type) ? ", upcast to float32 in its forward"
                                                      : ""));
  }
  return o.last_token_logits && !class_all && !masked_lm ? o.batch
                                                         : Mul({o.batch, o.context_tokens});
}

// For a model with Mamba layers: the line naming the scan path and what the torch path costs
// beyond the kernels (the other path's peak, same model, same prompt).
std::optional<std::string> MambaScanLine(const Model& model, const estimate::PrefillPass& pass,
                                         const estimate::ActivationPeak& peak) {
  const bool mamba2 = estimate::HasMixer(model, LayerMixer::kMamba2);
  if (!mamba2 && !estimate::HasMixer(model, LayerMixer::kMamba)) return std::nullopt;
  std::vector<std::string> ignored;
  const bool torch = pass.scan == Mamba2Scan::kTorch;
  estimate::PrefillPass other_pass = pass;
  other_pass.scan = torch ? Mamba2Scan::kKernels : Mamba2Scan::kTorch;
  const estimate::ActivationPeak other = estimate::PrefillPeak(model, other_pass, ignored);
  const uint64_t torch_bytes = torch ? peak.bytes : other.bytes;
  const uint64_t kernel_bytes = torch ? other.bytes : peak.bytes;
  const uint64_t extra = torch_bytes - std::min(torch_bytes, kernel_bytes);
  return mamba2 ? estimate::Mamba2ScanAssumption(pass.scan, model.hp.ssm_chunk_size, extra)
                : estimate::Mamba1ScanAssumption(pass.scan, extra);
}

// transformers: the prefill of the whole context in one forward pass (the worst case), the
// cache's growth, the CUDA context and the caching allocator's reserve.
Status EstimateTransformersInference(const Model& model, const InferenceOptions& o,
                                     const KvCacheOptions& kv_options, uint32_t c,
                                     InferenceEstimate& e) {
  e.assumptions.push_back(RuntimeVersionsAssumption(o.versions));
  // generate() prefills the prompt, then adds --new-tokens one at a time: the prefill's cache is
  // the prompt's (a second estimate at its length), the final cache the whole context's.
  // (An encoder-decoder's prompt is its encoder's, --context; its decoder's, --decoder-tokens.)
  const uint64_t new_tokens = model.hp.is_encoder_decoder ? 0 : o.new_tokens;
  const uint64_t prompt = o.context_tokens - std::min(new_tokens, o.context_tokens - 1);
  KvCacheEstimate prompt_kv_estimate;
  if (prompt < o.context_tokens) {
    KvCacheOptions at_prompt = kv_options;
    at_prompt.context_tokens = prompt;
    MEMFIT_ASSIGN_OR_RETURN(prompt_kv_estimate, EstimateKvCache(model, at_prompt));
  }
  const KvCacheEstimate& prompt_kv = prompt < o.context_tokens ? prompt_kv_estimate : e.kv;
  // The prefill's cache: an attention layer's K/V exist from that layer's attention on; the
  // recurrent states and static caches are allocated before the first layer, at the whole
  // context's size (a static cache is sized for it).
  std::vector<uint64_t> grown(model.hp.layers.size(), 0);
  uint64_t grown_final = 0;
  const bool preallocated = estimate::PreallocatesCache(model.model_type);
  auto is_grown = [&](const auto& l) {
    return !preallocated && l.bytes_per_token > 0 && l.kind != "cross" && l.layer < grown.size();
  };
  for (const auto& l : prompt_kv.layers) {
    if (!is_grown(l)) continue;
    grown[l.layer] = Add({grown[l.layer], l.bytes});
  }
  // An encoder-decoder's cross-attention entries are made by the decoder's first step, after the
  // encoder's forward (generate() runs the encoder alone first): not alive at the encoder's peak.
  uint64_t cross = 0;
  for (const auto& l : e.kv.layers) {
    if (is_grown(l)) grown_final = Add({grown_final, l.bytes});
    if (l.kind == "cross" && model.hp.is_encoder_decoder) cross = Add({cross, l.bytes});
  }
  const estimate::PrefillPass pass{
      .batch = o.batch, .seq = prompt, .elem_bytes = c, .fp16 = o.dtype == Dtype::kF16,
      .attn = o.attn, .tp = o.tp,
      .logit_tokens = TransformersLogitTokens(model, o, e.assumptions), .transformers = true,
      .versions = o.versions, .scan = o.mamba2_scan, .layer_cache = std::move(grown)};
  const estimate::ActivationPeak p = estimate::PrefillPeak(model, pass, e.assumptions);
  if (auto line = MambaScanLine(model, pass, p)) e.assumptions.push_back(std::move(*line));
  e.notes.push_back(prompt < o.context_tokens
                        ? fmt::format("prefill of the {}-token prompt in one forward pass, then "
                                      "{} new tokens one at a time (--new-tokens)",
                                      prompt, o.context_tokens - prompt)
                        : "prefill of the whole context in one forward pass (the worst case)");
  // The prefill's peak holds the cache of the layers before it (in p.bytes) and the cache
  // allocated up front; a decode step the whole cache plus one layer's K/V growing by
  // torch.cat (DynamicCache.update: old and new coexist for a moment), the last step's the
  // largest. activation_bytes is what the larger of the two needs beyond the whole cache.
  uint64_t layer_kv = 0;
  for (const auto& l : e.kv.layers) layer_kv = std::max(layer_kv, l.bytes);
  const uint64_t up_front = e.kv.bytes - std::min(e.kv.bytes, Add({grown_final, cross}));
  const uint64_t prefill = Add({p.bytes, up_front});
  const uint64_t decode = Add({e.kv.bytes, layer_kv});
  e.activation_bytes = std::max(prefill, decode) - e.kv.bytes;  // decode >= the whole cache
  e.activation_peak_at = prefill >= decode ? p.where
                         : prompt < o.context_tokens ? "the last decode step's cache growth"
                                                     : "the first decode step's cache growth";
  e.cuda_context_bytes = o.overhead.cuda_context_bytes;
  const uint64_t allocated = Add({e.weights_bytes, e.kv_cache_bytes, e.activation_bytes});
  e.allocator_reserve_bytes = static_cast<uint64_t>(static_cast<double>(allocated) *
                                                    o.overhead.allocator_reserve_fraction);
  e.total_bytes = Add({allocated, e.cuda_context_bytes, e.allocator_reserve_bytes});
  return Ok{};
}

// A serving engine's profile run: a dummy batch of max_batched_tokens through the model (flash
// attention), logits for up to max_num_seqs sampled tokens; vLLM's release rules with a release.
void ServingProfileRun(const Model& model, const InferenceOptions& o, uint32_t c,
                       InferenceEstimate& e) {
  const uint64_t prof_tokens = o.max_batched_tokens;
  estimate::EngineForward engine;
  if (o.engine == Engine::kVllm && o.release) {
    engine = {.release_rules = true, .sampler = o.release->sampler};
    if (prof_tokens > kFusedMoeChunkTokens && estimate::HasMoeLayers(model)) {
      e.assumptions.push_back(fmt::format(
          "vLLM's fused MoE workspace counted for all {} profile-run tokens at once; "
          "VLLM_FUSED_MOE_CHUNK_SIZE (16384 or more by release) may chunk it",
          prof_tokens));
    }
  }
  const estimate::PrefillPass pass{
      .batch = 1, .seq = prof_tokens, .elem_bytes = c, .attn = AttnImpl::kFlash,
      .tp = e.layout.attn_tp, .logit_tokens = std::min(o.max_num_seqs, prof_tokens),
      .transformers = false, .versions = o.versions, .scan = Mamba2Scan::kKernels,
      .engine = engine};
  const estimate::ActivationPeak p = estimate::PrefillPeak(model, pass, e.assumptions);
  e.activation_bytes = p.bytes;
  e.activation_peak_at = p.where + " (profile run of " + std::to_string(prof_tokens) + " tokens)";
  if (engine.release_rules && estimate::HasMultimodalEncoder(model)) {
    // profile_run runs the encoder over a dummy batch first; its outputs stay in the encoder
    // cache through _dummy_run (docs/estimates.md, "vLLM's profile run").
    const uint64_t held = estimate::VllmEncoderCacheBytes(prof_tokens, model.hp.hidden_size, c);
    e.activation_bytes = Add({e.activation_bytes, held});
    e.activation_peak_at += " with the encoder cache";
    e.assumptions.push_back(fmt::format(
        "vLLM's multimodal profile run: the encoder's dummy outputs held through the language "
        "model's, {} ({} tokens x hidden {}: the encoder budget is at least "
        "max_num_batched_tokens; an item larger than that raises it{}); the encoder's own "
        "forward is not counted",
        FormatBytes(held), prof_tokens, model.hp.hidden_size,
        o.release->pads_encoder_outputs
            ? fmt::format(", and vLLM {} pads every dummy item's output to the budget: this "
                          "counts one item",
                          o.release->version)
            : ""));
  }
}

// The total under the engine's budget for a GPU of o.gpu_memory_bytes: the budget it
// preallocates (SGLang's activations outside its static fraction), or, for a deployment that
// does not fit, its need.
void ServingBudgetTotals(const InferenceOptions& o, const ServingBudget& s, InferenceEstimate& e) {
  e.kv_cache_bytes = Mul({s.num_blocks, s.page_bytes});
  e.total_bytes = ServingTotalBytes(e, o, s);
  if (s.draft_bytes > 0) {
    e.notes.push_back(fmt::format(
        "SGLang's NEXTN draft outside mem_fraction_static: {} ({} weights, {} tokens of draft KV "
        "cache, {} more tokens of the target's){}",
        FormatBytes(s.draft_bytes), FormatBytes(e.draft.weights_bytes),
        s.token_capacity + e.draft.headroom_tokens, e.draft.headroom_tokens,
        s.fits || s.max_concurrency < o.batch ? ""
                                              : "; with it the deployment exceeds the GPU"));
  }
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
}

// The engine's settings as run, with the flags that give the same budget; the release's line.
InferenceEstimate::EngineSettings ServingEngineSettings(const InferenceOptions& o,
                                                        const ServingBudget& s,
                                                        std::vector<std::string>& notes) {
  InferenceEstimate::EngineSettings settings;
  settings.gpu_memory_utilization = o.gpu_memory_utilization;
  settings.max_num_seqs = o.max_num_seqs;
  settings.max_batched_tokens = o.max_batched_tokens;
  settings.cuda_graphs_in_budget = o.cuda_graphs_in_budget;
  settings.equivalent_flags = EquivalentEngineFlags(o, s);
  if (o.release) {
    settings.version = std::string(o.release->version);
    settings.source = std::string(o.release->source);
    notes.push_back(fmt::format("{} {} ({}): {}", EngineName(o.engine), settings.version,
                                settings.source, settings.equivalent_flags));
  }
  return settings;
}

// vLLM and SGLang: the profile run's activations, one sequence's cache, and the pool the
// engine's budget leaves (ServingBudgetFor). `kv`: the request's cache options.
Status EstimateServingInference(const Model& model, const InferenceOptions& given,
                                const InferenceOptions& o, uint32_t c, KvCacheOptions kv,
                                InferenceEstimate& e) {
  ServingProfileRun(model, o, c, e);
  e.cuda_graph_bytes = o.cuda_graph_bytes;
  MEMFIT_ASSIGN_OR_RETURN(e.draft, estimate::NextnDraft(model, o, e, e.assumptions));
  // One sequence of the requested context: attention pages (sliding and chunked layers capped
  // at their window), indexer keys and recurrent state, as the KV estimate counts them.
  kv.batch = 1;
  MEMFIT_ASSIGN_OR_RETURN(KvCacheEstimate one, EstimateKvCache(model, kv));
  e.sequence_kv_bytes = one.bytes;
  ServingBudget s = ServingBudgetFor(e, o);
  if (o.gpu_memory_bytes > 0) {
    ServingBudgetTotals(o, s, e);
  } else {
    e.total_bytes = Add({e.weights_bytes, e.kv_cache_bytes, e.activation_bytes,
                         o.non_torch_bytes, e.cuda_graph_bytes, e.draft.weights_bytes,
                         Mul({e.draft.kv_bytes_per_token, o.batch, o.context_tokens})});
    e.notes.push_back("no --gpu-memory: KV cache for --batch x --context only (the engine "
                      "would preallocate everything its budget leaves)");
  }
  e.serving = s;
  e.engine_settings = ServingEngineSettings(o, s, e.notes);
  if (o.engine == Engine::kSglang && o.release && given.gpu_memory_utilization < 0) {
    for (auto& a : SglangRuleAssumptions(o)) e.assumptions.push_back(std::move(a));
  }
  return Ok{};
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
  MEMFIT_RETURN_IF_ERROR(ShardInferenceWeights(model, o, w, e));
  const bool paged = o.engine != Engine::kTransformers;
  const KvCacheOptions kv = InferenceKvOptions(model, o, e);
  MEMFIT_ASSIGN_OR_RETURN(e.kv, EstimateKvCache(model, kv));
  e.kv_cache_bytes = e.kv.bytes;
  for (auto& a : e.kv.assumptions) e.assumptions.push_back(a);
  const bool has_mla = std::any_of(model.hp.layers.begin(), model.hp.layers.end(),
                                   [](const LayerInfo& L) {
                                     return L.attention == AttentionKind::kMla;
                                   });
  if (!paged && has_mla) {
    e.notes.push_back("transformers caches MLA keys and values decompressed (per head); "
                      "vLLM/SGLang cache the latent");
  }
  if (!paged) {
    MEMFIT_RETURN_IF_ERROR(EstimateTransformersInference(model, o, kv, c, e));
  } else {
    MEMFIT_RETURN_IF_ERROR(EstimateServingInference(model, given, o, c, kv, e));
  }
  for (const auto& n : e.weights.notes) e.notes.push_back(n);
  if (e.total_bytes == UINT64_MAX) return MakeError("{}: inference total overflows", model.name);
  return e;
}

}  // namespace memfit
