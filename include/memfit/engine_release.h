#pragma once
// Serving engines as their releases behave (--engine-version): the defaults and rules of each
// vLLM, SGLang and llama.cpp release memfit models, each row naming the source it was read from.
// Pure; docs/estimates.md, "Engine releases", says which releases are left out and why.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/engine.h"
#include "memfit/estimate_inference.h"
#include "memfit/result.h"

namespace memfit {

// vLLM's scheduler defaults for `vllm serve` (UsageContext.OPENAI_API_SERVER), by GPU: a GPU with
// at least `large_gpu_bytes` whose name does not contain "a100" gets the large pair
// (vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults / _set_default_args_v1).
struct VllmBatchDefaults {
  uint64_t large_gpu_bytes = 0;
  uint64_t large_max_num_seqs = 0;
  uint64_t large_max_batched_tokens = 0;
  uint64_t small_max_num_seqs = 0;
  uint64_t small_max_batched_tokens = 0;
};

// How vLLM's profile run samples its dummy rows (gpu_model_runner.py `_dummy_sampler_run`: top-k
// vocab - 1 and top-p 0.9 on every row, so the top-k/top-p path always runs), which decides the
// sampler's working set (memfit's estimate/vllm_profile_run.h counts it).
enum class VllmSampler : uint8_t {
  kNone,        // not vLLM: the sampled rows' logits and their float32 copy only
  kTorchSort,   // PyTorch-native: sorts the whole vocabulary (topk_topp_sampler.py apply_top_k_top_p)
  kFlashInfer,  // FlashInfer's top_k_top_p_sampling_from_logits: no sort
};

struct EngineRelease {
  Engine engine = Engine::kVllm;
  std::string_view version;  // the minor release: "0.11"; llama.cpp: "all"
  std::string_view source;   // the files and tag the values were read from
  // vLLM: CacheConfig.gpu_memory_utilization's default (vllm/config/cache.py).
  double gpu_memory_utilization = 0;
  VllmBatchDefaults batch;
  // vLLM: CUDA-graph memory is profiled inside gpu_memory_utilization (vLLM >= 0.21,
  // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1); false: captured after, outside the budget.
  bool cuda_graphs_in_budget = false;
  // SGLang: mem_fraction_static from the GPU's memory (SglangMemoryDefaults).
  bool sglang_mem_fraction_rule = false;
  // SGLang >= 0.5.14: a speculative draft's weights and KV cache inside mem_fraction_static (no
  // reserve for it; PR #23862, PR #28855), and the prefill CUDA graphs' reserve (PR #23906).
  bool sglang_draft_inside = false;
  // memfit's --kv-dtype values the release accepts: a bit per KvDtype (KvDtypeBit).
  uint32_t kv_dtypes = 0;
  std::string_view kv_dtype_words;  // the engine's own --kv-cache-dtype / --cache-type-k values
  // vLLM: the top-k/top-p sampler the profile run's dummy sampler run takes by default.
  VllmSampler sampler = VllmSampler::kNone;
  // vLLM: the multimodal profile run pads every dummy item's encoder output to the whole
  // encoder budget (PR #25810, 2025-09-27, until PR #29386, 2025-11-25).
  bool pads_encoder_outputs = false;
};

constexpr uint32_t KvDtypeBit(KvDtype dtype) { return uint32_t{1} << static_cast<uint32_t>(dtype); }

// The release `version_text` names for `engine`: "0.11", "0.11.2" and "v0.11.0" all name the 0.11
// row; "" names the newest. transformers has no rows: "" gives nullptr, any text an error (its
// releases are --transformers-version's). Errors name --engine-version and list the known
// versions, with "did you mean" for a near miss.
Result<const EngineRelease*> FindEngineRelease(Engine engine, std::string_view version_text);

// The versions memfit models for `engine`, oldest first.
std::vector<std::string> EngineReleaseVersions(Engine engine);

// "vLLM 0.10, 0.11 and 0.31; SGLang 0.5; llama.cpp all": for help text.
std::string EngineReleaseSummary();

// vLLM's (max_num_seqs, max_num_batched_tokens) on a GPU of `gpu_memory_bytes` named `gpu_name`
// (0 bytes: vLLM could not query the device and takes the small pair).
struct VllmSchedulerDefaults {
  uint64_t max_num_seqs = 0;
  uint64_t max_batched_tokens = 0;
};
VllmSchedulerDefaults VllmDefaultsFor(const EngineRelease& release, uint64_t gpu_memory_bytes,
                                      std::string_view gpu_name);

// SGLang's memory settings for one GPU (python/sglang/srt/server_args.py,
// ServerArgs._handle_gpu_memory_settings; MiB as SGLang counts them): chunked_prefill_size and
// cuda_graph_max_bs by the GPU's memory and tp, then mem_fraction_static =
// round((gpu - reserved) / gpu, 3) with reserved = 512 + max(chunked, 2048) x 1.5 +
// cuda_graph_max_bs x 2 + tp x pp / 8 x 1024 (+ DP-attention padding), at least 10 GiB on GPUs
// above 60 GiB, plus 6 GiB for a STANDALONE draft model or 2 GiB for any other speculative
// algorithm but NGRAM. From 0.5.14 (`release` with sglang_draft_inside): no speculative reserve,
// and before the floor 8 MiB per prefill CUDA-graph batch size (SglangPrefillGraphSizes) unless
// the model is MLA or multimodal or DP attention is on (SGLang disables those graphs there). An
// unknown GPU (0 bytes): 4096, 160 and SGLang's fallback 0.88. A multimodal model's fraction is
// then scaled by SglangVisionFactor.
struct SglangMemorySettings {
  uint64_t chunked_prefill_size = 0;  // tokens
  uint64_t cuda_graph_max_bs = 0;     // sequences
  double reserved_mib = 0;
  double prefill_graphs_mib = 0;  // 0.5.14 on: the prefill CUDA graphs' part of reserved_mib
  double speculative_mib = 0;     // 0.5: the draft's part of reserved_mib
  double mem_fraction_static = 0;
};
// What the rule reads of the release and the model beyond the GPU and the layout.
struct SglangRuleInputs {
  std::string_view speculative_algorithm{};  // "" none
  const EngineRelease* release = nullptr;  // null: the 0.5 rule
  bool mla = false;                        // SGLang's MLA attention backend
  bool multimodal = false;
  // The user's chunked_prefill_size (memfit's --max-batched-tokens); 0: the GPU tier's. SGLang
  // sets the tier's only `if self.chunked_prefill_size is None`, and its reserve reads the value.
  uint64_t chunked_prefill_size = 0;
};
SglangMemorySettings SglangMemoryDefaults(uint64_t gpu_memory_bytes, uint64_t tp, uint64_t pp,
                                          uint64_t dp, bool dp_attention,
                                          const SglangRuleInputs& inputs = {});
// SGLang's default prefill CUDA-graph batch sizes up to `max_bs` (its chunked_prefill_size):
// 4..32 by 4, 48..256 by 16, 288..512 by 32, 576..1024 by 64, 1280..4096 by 256, 4608.. by 512
// (server_args.py CudaGraphConfig): 42 for 2048, 50 for 4096, 58 for 8192, 74 for 16384.
uint64_t SglangPrefillGraphSizes(uint64_t max_bs);

// SGLang's adjust_mem_fraction_for_vlm: 0.95 x clamp(1 - 0.1 x (L x H^2 / (24 x 1024^2) - 1),
// 0.8, 1.05) for a vision_config of L layers of width H (ViT-L/14 = 1: 0.95; twice its
// complexity: 0.855; from 3 times on: 0.76).
double SglangVisionFactor(const SglangVisionConfig& vision);

// SGLang's --speculative-algorithm words (EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM, any case;
// "" = none), upper-cased; the error names the flag and the words.
Result<std::string> ParseSpeculativeAlgorithm(std::string_view word);

// Whether the release accepts the KV dtype; the error names --kv-dtype and the engine's words.
Status CheckKvDtype(const EngineRelease& release, KvDtype dtype);

// The options as the release runs them on the GPU `o` names (o.gpu_memory_bytes, o.gpu_name):
// its gpu_memory_utilization / mem_fraction_static where o's is < 0, its max_num_seqs and
// max_num_batched_tokens (SGLang: chunked_prefill_size) where o's are 0, and whether CUDA graphs
// are inside the budget. Without a release: 0.9 (SGLang 0.88), 256 and 8192, memfit's defaults
// before --engine-version. Options that say nothing is a default come back unchanged.
InferenceOptions WithEngineDefaults(const InferenceOptions& o);

// The flags that give the engine the same budget: "--gpu-memory-utilization 0.92" (vLLM, with
// "--kv-cache-memory-bytes N" when the pool is known) or "--mem-fraction-static 0.836" (SGLang).
// `resolved`: options after WithEngineDefaults.
std::string EquivalentEngineFlags(const InferenceOptions& resolved, const ServingBudget& budget);

// What SGLang's mem_fraction_static rule took from the model and --speculative-algorithm, as
// assumption lines: the multimodal scaling (o.sglang_vision) and the draft's reserve. For an
// SGLang estimate whose fraction is the release's rule (no --mem-fraction-static given).
std::vector<std::string> SglangRuleAssumptions(const InferenceOptions& o);

}  // namespace memfit
