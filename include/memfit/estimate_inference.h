#pragma once
// Inference memory: weights (any dtype or quantization scheme), KV cache (GQA/MQA, MLA latent,
// sliding windows, cross-attention, kv dtype, paged blocks, TP replication), prefill activation
// peak, CUDA context, and serving-engine budgets (vLLM, SGLang). Pure; docs/estimates.md.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/engine.h"
#include "memfit/model.h"
#include "memfit/parallel.h"
#include "memfit/quantization.h"
#include "memfit/result.h"
#include "memfit/runtime_versions.h"

namespace memfit {

struct EngineRelease;  // memfit/engine_release.h

enum class AttnImpl : uint8_t { kEager, kSdpa, kFlash };
std::string_view AttnImplName(AttnImpl impl);
Result<AttnImpl> ParseAttnImpl(std::string_view name);  // eager, sdpa, flash (flash2, fa2)

// Fixed per-GPU terms that are not tensors. Defaults are documented in docs/estimates.md.
struct OverheadOptions {
  // CUDA context + kernels: 1343 MiB measured by `torch.ones((1,1)).cuda()` on a V100 (HF
  // model_memory_anatomy.md). Varies with GPU, driver and lazy loading: override it.
  uint64_t cuda_context_bytes = uint64_t{1343} << 20;
  // What the caching allocator holds beyond the peak of live tensors, as a fraction of that peak
  // (nvidia-smi "used" minus context minus max_memory_allocated). 0 reports allocated only.
  double allocator_reserve_fraction = 0.0;
};

// KV cache element type: the model dtype (2 bytes when 16-bit), fp8 / int8 (1 byte), int4 (0.5).
enum class KvDtype : uint8_t { kModel, kF32, kF16, kBF16, kFp8, kInt8, kInt4 };
std::string_view KvDtypeName(KvDtype dtype);
Result<KvDtype> ParseKvDtype(std::string_view name);


struct KvCacheOptions {
  uint64_t context_tokens = 4096;  // prompt + generated, per sequence
  uint64_t batch = 1;              // sequences
  KvDtype dtype = KvDtype::kModel;
  Dtype model_dtype = Dtype::kBF16;  // what kModel means
  uint64_t tp = 1;                   // tensor parallel: KV heads split, replicated when < tp
  uint64_t block_size = 0;           // paged engines: tokens per block (0 = no paging)
  bool mla_latent = true;            // MLA: cache the latent (vLLM/SGLang); false = decompressed K/V
  uint64_t encoder_tokens = 0;       // encoder-decoder cross-attention length (0 = model default)
  // Encoder-decoder models whose prompt is the encoder's input (no stated encoder length: T5):
  // the decoder's self-attention cache holds the decoder's own tokens, the start token and the
  // generated ones fed back (0 = context_tokens, the most it could hold).
  uint64_t decoder_tokens = 0;
  // Recurrent layers. transformers keeps conv_kernel conv steps and a float32 SSM / delta-rule
  // state (modeling_qwen3_next.py, modeling_nemotron_h.py); vLLM keeps conv_kernel - 1 steps and
  // the state in "mamba_ssm_cache_dtype" or the model dtype (mamba_utils.py).
  bool conv_full_kernel = true;
  bool recurrent_state_fp32 = true;
  // vLLM: a sliding-window or chunked layer keeps up to window - 1 + max_num_batched_tokens tokens
  // (SlidingWindowSpec / ChunkedLocalAttentionSpec.max_memory_usage_bytes); 0 = the window alone.
  uint64_t window_extra_tokens = 0;
  // vLLM's hybrid KV manager: the attention block grows until its page holds a recurrent layer's
  // state, and each recurrent layer takes one such page per sequence
  // (HybridAttentionMambaModelConfig.verify_and_update_config).
  bool pad_state_to_page = false;
  // Paged engines store DSA indexer keys in fp8 with a float32 scale per 128 elements
  // (vLLM DeepseekV32IndexerCache, SGLang NSATokenToKVPool); false = the model dtype.
  bool fp8_indexer = false;
};

struct KvLayerBytes {
  uint64_t layer = 0;
  // "full", "sliding", "chunked", "mla", "cross", "indexer", "compressed", "shared", "none", or
  // the recurrent mixer's name ("mamba2", "gated_delta_net", "short_conv", ...).
  std::string kind;
  uint64_t tokens = 0;     // cached tokens per sequence (after window and block rounding)
  uint64_t bytes_per_token = 0;  // per GPU, all sequences excluded (0 for recurrent state)
  uint64_t bytes = 0;      // per GPU, all sequences
};

struct KvCacheEstimate {
  uint64_t bytes = 0;               // per GPU
  uint64_t bytes_per_token = 0;     // per GPU, summed over layers, full-attention token
  uint64_t state_bytes = 0;         // per GPU, all sequences: the recurrent layers' part of bytes
  uint64_t block_size = 0;          // the block size used (vLLM may raise it for hybrid models)
  std::vector<KvLayerBytes> layers;
  std::vector<std::string> assumptions;
};
Result<KvCacheEstimate> EstimateKvCache(const Model& model, const KvCacheOptions& options);

// What SGLang's multimodal adjustment (ServerArgs.adjust_mem_fraction_for_vlm) reads from
// config.json's vision_config: num_hidden_layers and hidden_size, 24 and 1024 (its getattr
// defaults) where a key is absent; `defaulted` names the keys that were.
struct SglangVisionConfig {
  uint64_t num_hidden_layers = 24;
  uint64_t hidden_size = 1024;
  std::string defaulted{};  // "num_hidden_layers", "hidden_size", both joined by " and ", or ""
};

struct InferenceOptions {
  uint64_t context_tokens = 4096;
  uint64_t batch = 1;
  Dtype dtype = Dtype::kBF16;       // weights and activations (unquantized parts)
  QuantOptions quant{};             // scheme kNone = plain `dtype`
  KvDtype kv_dtype = KvDtype::kModel;
  AttnImpl attn = AttnImpl::kSdpa;
  Engine engine = Engine::kTransformers;
  uint64_t tp = 1;
  // Parallelism beyond --tp (memfit/parallel.h): --dp, --ep, --pp, SGLang --enable-dp-attention.
  uint64_t dp = 1;
  uint64_t ep = 1;
  uint64_t pp = 1;
  bool dp_attention = false;
  // The GPU's compute capability, major x 10 + minor (90 = H100; 0 = unknown): decides whether
  // the engine runs a checkpoint's stored quantization or dequantizes it (memfit/stored_format.h).
  uint32_t compute_capability = 0;
  // transformers generate(): logits for the last prompt token only (transformers >= 4.45,
  // logits_to_keep); false = logits for every prompt token, upcast to fp32 (older releases).
  bool last_token_logits = true;
  // torch and transformers releases (memfit/runtime_versions.h): which classes compute logits
  // for every prompt token in generate(), whether eager attention's probabilities outlive it.
  RuntimeVersions versions{};
  // transformers' Mamba scans (memfit/runtime_versions.h): the mamba_ssm kernels (CUDA with
  // the package installed) or the torch path (--mamba-scan torch: CPU, or CUDA without
  // mamba_ssm): Mamba-2's torch_forward chunked scan and Mamba-1's slow_forward (Jamba,
  // Mamba, Falcon-Mamba), whose float32 products are counted in the prefill peak.
  Mamba2Scan mamba2_scan = Mamba2Scan::kKernels;
  uint64_t encoder_tokens = 0;
  uint64_t decoder_tokens = 0;  // KvCacheOptions::decoder_tokens
  // transformers' generate(): the tokens it adds to the prompt (max_new_tokens). The prefill
  // runs over context_tokens - new_tokens, the cache ends at context_tokens; 0: the prefill
  // covers the whole context (the worst case).
  uint64_t new_tokens = 0;
  // Serving engines.
  uint64_t gpu_memory_bytes = 0;          // total memory of one GPU (needed for block counts)
  std::string gpu_name{};                 // the GPU's name (vLLM keeps an A100 on small batches)
  // The engine release whose defaults and rules apply (memfit/engine_release.h, a row of its
  // static table); null: the values below as given. The three values below say "the release's
  // default" with -1 and 0, resolved per GPU by WithEngineDefaults.
  const EngineRelease* release = nullptr;
  double gpu_memory_utilization = 0.9;    // vLLM; SGLang's mem_fraction_static when engine sglang
  uint64_t block_size = 16;               // vLLM default; SGLang page size is 1
  uint64_t max_num_seqs = 256;            // vLLM max_num_seqs
  uint64_t max_batched_tokens = 8192;     // vLLM max_num_batched_tokens; SGLang chunked prefill
  // SGLang: the model's vision_config (nullopt: none, no multimodal adjustment) and
  // --speculative-algorithm ("" none; EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM), both read by its
  // mem_fraction_static rule. The request layer fills the first from config.json.
  std::optional<SglangVisionConfig> sglang_vision{};
  std::string speculative_algorithm{};
  // SGLang: the model's attention is MLA (its MLA backend has no prefill CUDA graphs); the
  // request layer fills it from the model.
  bool sglang_mla = false;
  // vLLM >= 0.21 profiles CUDA-graph memory inside gpu_memory_utilization (set by the release).
  bool cuda_graphs_in_budget = false;
  uint64_t cuda_graph_bytes = uint64_t{650} << 20;   // vLLM log, gemma-3-4b (PR #21489)
  uint64_t non_torch_bytes = uint64_t{70} << 20;     // same log: "non-torch 0.07 GiB"
  OverheadOptions overhead{};
};

// SGLang --speculative-algorithm NEXTN: the checkpoint's multi-token-prediction layers run as a
// draft beside the target, outside mem_fraction_static in SGLang 0.5, inside it from 0.5.14
// (docs/estimates.md, "The NEXTN draft itself"). All zero without one.
struct SpeculativeDraft {
  uint64_t weights_bytes = 0;       // the MTP layers, per GPU
  uint64_t kv_bytes_per_token = 0;  // the draft's KV cache, per GPU
  // draft_runner_cache_size beyond the target's pool tokens: both pools hold this many more
  // (SGLang 0.5; none from 0.5.14).
  uint64_t headroom_tokens = 0;
  bool inside_budget = false;  // 0.5.14 on: weights and KV cache inside mem_fraction_static
};

struct ServingBudget {
  double utilization = 0;         // gpu_memory_utilization / mem_fraction_static used
  uint64_t requested_bytes = 0;   // gpu_memory * utilization
  uint64_t non_kv_bytes = 0;      // weights + activation peak + non-torch
  uint64_t kv_pool_bytes = 0;     // what the engine hands to the KV cache
  uint64_t page_bytes = 0;        // one block over all layers
  uint64_t num_blocks = 0;
  uint64_t token_capacity = 0;
  uint64_t sequence_bytes = 0;    // KV cache + state of one sequence of context_tokens
  uint64_t max_concurrency = 0;   // sequences of context_tokens that fit, all replicas
  uint64_t replicas = 1;          // data-parallel ranks, each with its own KV pool
  // SGLang's NEXTN draft outside its static fraction: the draft's weights, its KV pool of
  // token_capacity + headroom tokens and the target pool's headroom tokens.
  uint64_t draft_bytes = 0;
  // The requested batch x context fits in the pool (and, with a draft, the budget and the
  // draft fit in the GPU's memory).
  bool fits = false;
};

struct InferenceEstimate {
  uint64_t weights_bytes = 0;      // per GPU
  uint64_t kv_cache_bytes = 0;     // per GPU for batch x context
  uint64_t activation_bytes = 0;   // prefill peak of transient tensors
  uint64_t cuda_context_bytes = 0;
  uint64_t allocator_reserve_bytes = 0;
  uint64_t cuda_graph_bytes = 0;   // serving engines
  SpeculativeDraft draft;          // SGLang NEXTN
  uint64_t total_bytes = 0;        // per GPU
  // Paged engines: the KV cache and recurrent state of one sequence at the context, per GPU
  // (windows capped, indexer keys, state pages): what each admitted sequence takes from the pool.
  uint64_t sequence_kv_bytes = 0;
  uint64_t tp = 1;
  uint64_t gpus = 1;               // GPUs of the deployment (tp x dp x pp as the engine counts)
  ParallelLayout layout;
  ShardedWeights sharding;         // weights_bytes = sharding.per_gpu_bytes
  std::string activation_peak_at;  // "attention scores", "mlp", "logits", ...
  KvCacheEstimate kv;
  QuantizedWeightsSummary weights;  // tensor_bytes stays in InferenceWeights
  std::optional<ServingBudget> serving;
  // Serving engines: what the engine ran with, its release's defaults applied.
  struct EngineSettings {
    std::string version;           // the release (memfit/engine_release.h); "" without one
    std::string source;            // where its values were read
    double gpu_memory_utilization = 0;
    uint64_t max_num_seqs = 0;
    uint64_t max_batched_tokens = 0;
    bool cuda_graphs_in_budget = false;
    std::string equivalent_flags;  // the engine's own flags for the same budget
  };
  std::optional<EngineSettings> engine_settings;
  std::vector<std::string> assumptions;
  std::vector<std::string> notes;
};

Result<InferenceEstimate> EstimateInference(const Model& model, const InferenceOptions& options);

// The part of an estimate that depends only on the model, the engine, --dtype, --quant and the
// stored format's handling on the GPU: the weights per tensor, their assumption lines and how
// each tensor splits. Planners that try many layouts or GPUs prepare it once per handling and
// pass it to the overload below.
struct InferenceWeights {
  QuantizedWeights weights;
  std::vector<std::string> assumptions;
  std::vector<TensorSplit> splits;
};
Result<InferenceWeights> PrepareInferenceWeights(const Model& model, const InferenceOptions& options);
Result<InferenceEstimate> EstimateInference(const Model& model, const InferenceOptions& options,
                                            const InferenceWeights& weights);

// A serving engine's KV budget for options.gpu_memory_bytes, from an estimate of the same model,
// engine and layout (its weights per pipeline stage, KV bytes per token, activation peak): the
// GPU grid and the deployment search evaluate every GPU size without re-estimating the weights.
// Zero blocks when gpu_memory_bytes is 0.
ServingBudget ServingBudgetFor(const InferenceEstimate& estimate, const InferenceOptions& options);
// What a serving deployment needs per GPU for --batch sequences of the context: the engine's
// non-KV bytes, the KV cache of its share of the sequences (per replica), CUDA graphs (and
// SGLang's activations, outside its static fraction). When the budget does not hold it, this,
// not the budget, is the deployment's need.
uint64_t ServingNeedBytes(const InferenceEstimate& estimate, const InferenceOptions& options,
                          const ServingBudget& budget);

// The per-GPU total of a serving deployment under `budget`: the budget it preallocates, CUDA
// graphs outside it, SGLang's activations and NEXTN draft (outside its static fraction); when
// the budget does not hold the deployment, ServingNeedBytes where that is more.
uint64_t ServingTotalBytes(const InferenceEstimate& estimate, const InferenceOptions& options,
                           const ServingBudget& budget);

// Bytes of one element of the KV cache; 0.5 byte for int4 is returned as bits / 8 by callers.
uint32_t KvBits(KvDtype dtype, Dtype model_dtype);

}  // namespace memfit
