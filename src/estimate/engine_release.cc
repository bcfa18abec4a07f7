// The engine-release table and the rules each release applies (memfit/engine_release.h). Every
// value names where it was read; docs/estimates.md, "Engine releases", lists the releases left out.

#include "memfit/engine_release.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "base/enum_names.h"
#include "base/join_words.h"
#include "memfit/suggest.h"
#include "memfit/units.h"

namespace memfit {
namespace {

constexpr uint64_t kGiBytes = uint64_t{1} << 30;
constexpr uint64_t kMiBytes = uint64_t{1} << 20;

constexpr uint32_t Bits(std::initializer_list<KvDtype> dtypes) {
  uint32_t bits = 0;
  for (KvDtype d : dtypes) bits |= KvDtypeBit(d);
  return bits;
}

// vLLM's batch defaults from 0.9 on: >= 70 GiB and not an A100 -> 8192 tokens and 1024
// sequences, else 2048 and 256 (vllm/engine/arg_utils.py; PR #17073 sized them by memory,
// PR #17885 kept the A100 on the small pair and sized max_num_seqs per usage context).
constexpr VllmBatchDefaults kVllmBatch2025{.large_gpu_bytes = 70 * kGiBytes,
                                           .large_max_num_seqs = 1024,
                                           .large_max_batched_tokens = 8192,
                                           .small_max_num_seqs = 256,
                                           .small_max_batched_tokens = 2048};
// PR #51726 (2026-08-10): the large GPUs' max_num_batched_tokens 8192 -> 16384.
constexpr VllmBatchDefaults kVllmBatch2026{.large_gpu_bytes = 70 * kGiBytes,
                                           .large_max_num_seqs = 1024,
                                           .large_max_batched_tokens = 16384,
                                           .small_max_num_seqs = 256,
                                           .small_max_batched_tokens = 2048};

// Oldest first per engine; the last row of an engine is its default.
const std::array<EngineRelease, 6> kReleases = {{
    {.engine = Engine::kVllm,
     .version = "0.10",
     .source = "vllm v0.10.2 vllm/config/cache.py (gpu_memory_utilization = 0.9, CacheDType), "
               "vllm/engine/arg_utils.py (batch defaults), CUDA graphs captured after profiling "
               "(PR #21489)",
     .gpu_memory_utilization = 0.9,
     .batch = kVllmBatch2025,
     .cuda_graphs_in_budget = false,
     .kv_dtypes = Bits({KvDtype::kModel, KvDtype::kFp8}),
     .kv_dtype_words = "auto, fp8, fp8_e4m3, fp8_e5m2, fp8_inc",
     // TopKTopPSampler takes FlashInfer only when flashinfer-python is installed; the PyTorch
     // sort otherwise (counted: the larger).
     .sampler = VllmSampler::kTorchSort},
    {.engine = Engine::kVllm,
     .version = "0.11",
     .source = "vllm v0.11.1 vllm/config/cache.py (gpu_memory_utilization Field(default=0.9), "
               "CacheDType), vllm/engine/arg_utils.py (batch defaults), CUDA graphs captured "
               "after profiling",
     .gpu_memory_utilization = 0.9,
     .batch = kVllmBatch2025,
     .cuda_graphs_in_budget = false,
     .kv_dtypes = Bits({KvDtype::kModel, KvDtype::kBF16, KvDtype::kFp8}),
     .kv_dtype_words = "auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc, fp8_ds_mla",
     // PR #26859 (2025-10-15): FlashInfer's sampler off unless VLLM_USE_FLASHINFER_SAMPLER=1.
     .sampler = VllmSampler::kTorchSort,
     .pads_encoder_outputs = true},
    {.engine = Engine::kVllm,
     .version = "0.31",
     .source = "vllm 2026 vllm/config/cache.py (gpu_memory_utilization Field(default=0.92), "
               "CacheDType), vllm/engine/arg_utils.py (PR #51726: 16384 batched tokens on large "
               "GPUs), vllm/envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 (default since "
               "v0.21.0, vllm/v1/worker/gpu_worker.py)",
     .gpu_memory_utilization = 0.92,
     .batch = kVllmBatch2026,
     .cuda_graphs_in_budget = true,
     .kv_dtypes = Bits({KvDtype::kModel, KvDtype::kF16, KvDtype::kBF16, KvDtype::kFp8,
                        KvDtype::kInt8, KvDtype::kInt4}),
     .kv_dtype_words = "auto, float16, bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc, fp8_ds_mla, "
                       "nvfp4_ds_mla, nvfp4, nvfp4_4over6, int8_per_token_head, "
                       "int4_per_token_head, fp8_per_token_head, turboquant_*",
     // PR #40376 (2026-04-20): FlashInfer's top-k/top-p sampler on by default again.
     .sampler = VllmSampler::kFlashInfer},
    {.engine = Engine::kSglang,
     .version = "0.5",
     .source = "sglang python/sglang/srt/server_args.py ServerArgs._handle_gpu_memory_settings "
               "(PR #10975, 2025-09-27; PR #11076, 2025-09-30)",
     .batch = {},
     .sglang_mem_fraction_rule = true,
     .kv_dtypes = Bits({KvDtype::kModel, KvDtype::kFp8}),
     .kv_dtype_words = "auto, fp8_e5m2, fp8_e4m3"},
    {.engine = Engine::kSglang,
     .version = "0.5.14",
     .source = "sglang v0.5.15 (f63458b5b, 2026-07-09) python/sglang/srt/server_args.py "
               "ServerArgs._handle_gpu_memory_settings (PR #23862, 2026-06-12: the draft's KV "
               "inside mem_fraction_static; PR #28855, 2026-06-21: its weights; PR #23906, "
               "2026-06-09: the prefill CUDA graphs' reserve), mem_cache/pool_configurator.py",
     .batch = {},
     .sglang_mem_fraction_rule = true,
     .sglang_draft_inside = true,
     .kv_dtypes = Bits({KvDtype::kModel, KvDtype::kBF16, KvDtype::kFp8}),
     .kv_dtype_words = "auto, fp8_e5m2, fp8_e4m3, bf16, bfloat16, fp4_e2m1"},
    {.engine = Engine::kLlamaCpp,
     .version = "all",
     .source = "llama.cpp common/arg.cpp kv_cache_types (--cache-type-k / --cache-type-v)",
     .batch = {},
     .kv_dtypes = Bits({KvDtype::kModel, KvDtype::kF32, KvDtype::kF16, KvDtype::kBF16,
                        KvDtype::kInt8, KvDtype::kInt4}),
     .kv_dtype_words = "f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1"},
}};

// How the engines spell their own names.
constexpr auto kDisplayNames = std::to_array<EnumWord<Engine>>({
    {"vLLM", Engine::kVllm}, {"SGLang", Engine::kSglang}, {"llama.cpp", Engine::kLlamaCpp},
    {"transformers", Engine::kTransformers}});

std::string_view DisplayName(Engine engine) { return NameOf(engine, kDisplayNames); }

// llama.cpp's one row: what memfit models of it (the accepted cache types) is the same in every
// build read; a build number bNNNN or "all" names it.
bool NamesLlamaCppRow(std::string_view text) {
  if (text == "all") return true;
  return text.size() > 1 && text[0] == 'b' &&
         std::all_of(text.begin() + 1, text.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

struct Version {
  uint64_t major = 0, minor = 0, patch = 0;
};

// Digits at `text[i]` on: their value (saturating), `i` past them; nullopt for none.
std::optional<uint64_t> Digits(std::string_view text, size_t& i) {
  const size_t start = i;
  uint64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    v = std::min<uint64_t>(v * 10 + static_cast<uint64_t>(text[i] - '0'), 1u << 30);
    ++i;
  }
  if (i == start) return std::nullopt;
  return v;
}

// "v0.11.2" -> 0.11.2; "0.11" -> 0.11.0; "0.10.1.post1" -> 0.10.1 (what follows the patch is
// dropped). nullopt when the text is not major.minor[.patch...].
std::optional<Version> ParseVersion(std::string_view text) {
  if (!text.empty() && (text[0] == 'v' || text[0] == 'V')) text.remove_prefix(1);
  size_t i = 0;
  Version v;
  auto major = Digits(text, i);
  if (!major || i >= text.size() || text[i] != '.') return std::nullopt;
  ++i;
  auto minor = Digits(text, i);
  if (!minor || (i < text.size() && text[i] != '.')) return std::nullopt;
  v.major = *major;
  v.minor = *minor;
  if (i < text.size()) {
    ++i;
    v.patch = Digits(text, i).value_or(0);
  }
  return v;
}

}  // namespace

std::vector<std::string> EngineReleaseVersions(Engine engine) {
  std::vector<std::string> out;
  for (const auto& r : kReleases) {
    if (r.engine == engine) out.emplace_back(r.version);
  }
  return out;
}

std::string EngineReleaseSummary() {
  std::string out;
  for (Engine e : {Engine::kVllm, Engine::kSglang, Engine::kLlamaCpp}) {
    if (!out.empty()) out += "; ";
    out += fmt::format("{} {}", DisplayName(e), JoinWords(EngineReleaseVersions(e), "and"));
  }
  return out;
}

Result<const EngineRelease*> FindEngineRelease(Engine engine, std::string_view text) {
  if (engine == Engine::kTransformers) {
    if (text.empty()) return static_cast<const EngineRelease*>(nullptr);
    return MakeError("--engine-version {}: --engine transformers has no engine release (its "
                     "release is --transformers-version)",
                     text);
  }
  const EngineRelease* newest = nullptr;
  for (const auto& r : kReleases) {
    if (r.engine == engine) newest = &r;
  }
  if (text.empty()) return newest;
  const std::optional<Version> v =
      engine == Engine::kLlamaCpp ? std::nullopt : ParseVersion(text);
  if (engine == Engine::kLlamaCpp && NamesLlamaCppRow(text)) return newest;
  // A row "0.5" stands for 0.5.0 on, a row "0.5.14" for 0.5.14 on, within the minor release.
  const EngineRelease* match = nullptr;
  uint64_t match_patch = 0;
  for (const auto& r : kReleases) {
    const std::optional<Version> row = ParseVersion(r.version);
    if (r.engine != engine || !v || !row || row->major != v->major || row->minor != v->minor ||
        row->patch > v->patch || (match && row->patch < match_patch)) {
      continue;
    }
    match = &r;
    match_patch = row->patch;
  }
  if (match) return match;
  // A well-formed version missing from the table is a release memfit does not model, not a typo:
  // "did you mean" only for text that is no version ("0.1l").
  const std::vector<std::string> known = EngineReleaseVersions(engine);
  const bool well_formed = v.has_value() || (engine == Engine::kLlamaCpp && ParseVersion(text));
  return MakeError("--engine-version {}: memfit models {} {}{}", text, DisplayName(engine),
                   JoinWords(known, "and"), well_formed ? "" : DidYouMean(text, known));
}

VllmSchedulerDefaults VllmDefaultsFor(const EngineRelease& r, uint64_t gpu_memory_bytes,
                                      std::string_view gpu_name) {
  std::string name(gpu_name);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // NOTE(Kuntai) in arg_utils.py: a large max_num_batched_tokens slows the A100 (PR #17885).
  const bool large = gpu_memory_bytes >= r.batch.large_gpu_bytes &&
                     name.find("a100") == std::string::npos;
  return large ? VllmSchedulerDefaults{r.batch.large_max_num_seqs, r.batch.large_max_batched_tokens}
               : VllmSchedulerDefaults{r.batch.small_max_num_seqs, r.batch.small_max_batched_tokens};
}

uint64_t SglangPrefillGraphSizes(uint64_t max_bs) {
  struct Run {
    uint64_t first, last, step;
  };
  uint64_t n = 0;
  for (const Run r : {Run{4, 32, 4}, Run{48, 256, 16}, Run{288, 512, 32}, Run{576, 1024, 64},
                      Run{1280, 4096, 256}, Run{4608, max_bs, 512}}) {
    for (uint64_t bs = r.first; bs <= std::min(r.last, max_bs); bs += r.step) ++n;
  }
  return n;
}

SglangMemorySettings SglangMemoryDefaults(uint64_t gpu_memory_bytes, uint64_t tp, uint64_t pp,
                                          uint64_t dp, bool dp_attention,
                                          const SglangRuleInputs& in) {
  const std::string_view speculative_algorithm = in.speculative_algorithm;
  const bool v514 = in.release && in.release->sglang_draft_inside;
  SglangMemorySettings s;
  tp = std::max<uint64_t>(tp, 1);
  pp = std::max<uint64_t>(pp, 1);
  dp = std::max<uint64_t>(dp, 1);
  if (gpu_memory_bytes == 0) {
    // "Fallback defaults when gpu_mem is None", and mem_fraction_static's `else 0.88`.
    s.chunked_prefill_size = 4096;
    s.cuda_graph_max_bs = 160;
    s.mem_fraction_static = 0.88;
    if (in.chunked_prefill_size) s.chunked_prefill_size = in.chunked_prefill_size;
    return s;
  }
  // get_device_memory_capacity: MiB.
  const double gpu_mib = static_cast<double>(gpu_memory_bytes) / static_cast<double>(kMiBytes);
  if (gpu_mib < 20 * 1024) {  // T4, 4080
    s.chunked_prefill_size = 2048;
    s.cuda_graph_max_bs = 8;
  } else if (gpu_mib < 35 * 1024) {  // A10, 4090, 5090
    s.chunked_prefill_size = 2048;
    s.cuda_graph_max_bs = tp < 4 ? 24 : 80;
  } else if (gpu_mib < 60 * 1024) {  // A100 40GB, L40
    s.chunked_prefill_size = 4096;
    s.cuda_graph_max_bs = tp < 4 ? 32 : 160;
  } else if (gpu_mib < 160 * 1024) {  // H100, A100 80GB, H20, H200
    s.chunked_prefill_size = 8192;
    s.cuda_graph_max_bs = tp < 4 ? 256 : 512;
  } else {  // B200, MI300
    s.chunked_prefill_size = 16384;
    s.cuda_graph_max_bs = 512;
  }
  if (in.chunked_prefill_size) s.chunked_prefill_size = in.chunked_prefill_size;
  const double bs = static_cast<double>(s.cuda_graph_max_bs);
  double reserved = 512;  // constant metadata (attention backends)
  reserved += static_cast<double>(std::max<uint64_t>(s.chunked_prefill_size, 2048)) * 1.5;
  reserved += bs * 2;  // CUDA graphs
  reserved += static_cast<double>(tp * pp) / 8 * 1024;  // large parallel sizes
  if (dp_attention) {
    reserved += bs * static_cast<double>(dp) * 3;
    if (s.cuda_graph_max_bs > 300) reserved += bs * static_cast<double>(dp) * 1.5;
  }
  // 0.5.14 on: the prefill CUDA graphs (off for MLA, multimodal models and DP attention).
  if (v514 && !in.mla && !in.multimodal && !dp_attention) {
    s.prefill_graphs_mib = static_cast<double>(SglangPrefillGraphSizes(s.chunked_prefill_size)) * 8;
    reserved += s.prefill_graphs_mib;
  }
  if (gpu_mib > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
  // After the floor, before 0.5.14: the draft model and its CUDA graphs (EAGLE's: 2 GiB).
  if (!v514 && speculative_algorithm == "STANDALONE") {
    s.speculative_mib = 6 * 1024;
  } else if (!v514 && !speculative_algorithm.empty() && speculative_algorithm != "NGRAM") {
    s.speculative_mib = 2 * 1024;
  }
  reserved += s.speculative_mib;
  s.reserved_mib = reserved;
  s.mem_fraction_static = std::round((gpu_mib - reserved) / gpu_mib * 1000) / 1000;
  return s;
}

double SglangVisionFactor(const SglangVisionConfig& v) {
  // "weight params count" of the ViT against ViT-L/14's (24 layers of 1024).
  const double complexity = static_cast<double>(v.num_hidden_layers) *
                            static_cast<double>(v.hidden_size) * static_cast<double>(v.hidden_size);
  const double ratio = complexity / (24.0 * 1024 * 1024);
  // "every time the complexity grows 100%, adjust final factor for 10%"
  const double dynamic = std::clamp(1.0 - 0.1 * (ratio - 1.0), 0.8, 1.05);
  return 0.95 * dynamic;
}

Result<std::string> ParseSpeculativeAlgorithm(std::string_view word) {
  std::string upper;
  for (char c : word) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (std::string_view known : {"", "EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"}) {
    if (upper == known) return upper;
  }
  return MakeError("--speculative-algorithm {}: expected EAGLE, EAGLE3, NEXTN, STANDALONE or NGRAM "
                   "(SGLang's words)", word);
}

Status CheckKvDtype(const EngineRelease& r, KvDtype dtype) {
  if (r.kv_dtypes & KvDtypeBit(dtype)) return Ok{};
  const std::string release = r.engine == Engine::kLlamaCpp
                                  ? std::string("llama.cpp")
                                  : fmt::format("{} {}", DisplayName(r.engine), r.version);
  const std::string flag = r.engine == Engine::kLlamaCpp ? "--cache-type-k" : "--kv-cache-dtype";
  return MakeError("--kv-dtype {}: {} has no {} KV cache ({} accepts {})", KvDtypeName(dtype),
                   release, KvDtypeName(dtype), flag, r.kv_dtype_words);
}

namespace {

// SglangMemoryDefaults for the options' GPU, layout, release and model.
SglangMemorySettings SglangMemoryDefaultsFor(const InferenceOptions& o) {
  return SglangMemoryDefaults(o.gpu_memory_bytes, o.tp, o.pp, o.dp, o.dp_attention,
                              {.speculative_algorithm = o.speculative_algorithm,
                               .release = o.release, .mla = o.sglang_mla,
                               .multimodal = o.sglang_vision.has_value(),
                               .chunked_prefill_size = o.max_batched_tokens});
}

}  // namespace

InferenceOptions WithEngineDefaults(const InferenceOptions& given) {
  InferenceOptions o = given;
  const bool paged = o.engine == Engine::kVllm || o.engine == Engine::kSglang;
  const EngineRelease* r = paged ? o.release : nullptr;
  if (r) o.cuda_graphs_in_budget = r->cuda_graphs_in_budget;
  if (o.engine == Engine::kSglang) {
    const SglangMemorySettings s = SglangMemoryDefaultsFor(o);
    if (o.gpu_memory_utilization < 0) {
      // The release's rule, then its multimodal scaling ("if model_config.is_multimodal").
      o.gpu_memory_utilization = r ? s.mem_fraction_static : 0.88;
      if (r && o.sglang_vision) o.gpu_memory_utilization *= SglangVisionFactor(*o.sglang_vision);
    }
    if (o.max_batched_tokens == 0) o.max_batched_tokens = r ? s.chunked_prefill_size : 8192;
    if (o.max_num_seqs == 0) o.max_num_seqs = 256;  // memfit's: the profile run's sampled tokens
    return o;
  }
  if (o.gpu_memory_utilization < 0) o.gpu_memory_utilization = r ? r->gpu_memory_utilization : 0.9;
  if (r && (o.max_num_seqs == 0 || o.max_batched_tokens == 0)) {
    const VllmSchedulerDefaults d = VllmDefaultsFor(*r, o.gpu_memory_bytes, o.gpu_name);
    if (o.max_num_seqs == 0) o.max_num_seqs = d.max_num_seqs;
    if (o.max_batched_tokens == 0) o.max_batched_tokens = d.max_batched_tokens;
  }
  if (o.max_num_seqs == 0) o.max_num_seqs = 256;
  if (o.max_batched_tokens == 0) o.max_batched_tokens = 8192;
  return o;
}

std::string EquivalentEngineFlags(const InferenceOptions& o, const ServingBudget& s) {
  if (o.engine == Engine::kSglang) {
    return fmt::format("--mem-fraction-static {:.3f} --chunked-prefill-size {}",
                       o.gpu_memory_utilization, o.max_batched_tokens);
  }
  if (o.engine != Engine::kVllm) return "";
  std::string flags = fmt::format("--gpu-memory-utilization {} --max-num-seqs {} "
                                  "--max-num-batched-tokens {}",
                                  o.gpu_memory_utilization, o.max_num_seqs, o.max_batched_tokens);
  // kv_cache_memory_bytes replaces the utilization: the pool this budget leaves.
  if (o.gpu_memory_bytes > 0 && s.kv_pool_bytes > 0) {
    flags += fmt::format(" (or --kv-cache-memory-bytes {})", s.kv_pool_bytes);
  }
  return flags;
}

// The draft reserves are SglangMemoryDefaults' (the speculative branch of its rule).
std::vector<std::string> SglangRuleAssumptions(const InferenceOptions& o) {
  std::vector<std::string> out;
  if (o.sglang_vision) {
    const SglangVisionConfig& v = *o.sglang_vision;
    out.push_back(fmt::format(
        "SGLang scales a multimodal model's mem_fraction_static by {:.4f} "
        "(adjust_mem_fraction_for_vlm: a vision_config of {} layers x {} wide against ViT-L/14's "
        "24 x 1024){}",
        SglangVisionFactor(v), v.num_hidden_layers, v.hidden_size,
        v.defaulted.empty() ? std::string()
                            : fmt::format("; vision_config has no {}: SGLang's getattr default "
                                          "(a config class's own default would win)",
                                          v.defaulted)));
  }
  const SglangMemorySettings s = SglangMemoryDefaultsFor(o);
  if (s.prefill_graphs_mib > 0) {
    out.push_back(fmt::format("SGLang {} reserves {} MiB outside mem_fraction_static for its "
                              "prefill CUDA graphs (8 MiB per batch size up to "
                              "chunked_prefill_size {}; none for MLA, multimodal models or DP "
                              "attention)",
                              o.release->version, s.prefill_graphs_mib, s.chunked_prefill_size));
  }
  if (!o.speculative_algorithm.empty()) {
    const bool nextn = o.speculative_algorithm == "NEXTN";
    const bool ngram = o.speculative_algorithm == "NGRAM";
    out.push_back(fmt::format("SGLang --speculative-algorithm {}: {} more reserved outside "
                              "mem_fraction_static{}",
                              o.speculative_algorithm,
                              s.speculative_mib > 0 ? FormatBytes(static_cast<uint64_t>(
                                                          s.speculative_mib * kMiBytes))
                                                    : std::string("nothing"),
                              nextn   ? " (the draft itself: the NEXTN draft line)"
                              : ngram ? ""
                                      : "; the draft checkpoint's weights and KV cache are not "
                                        "counted (memfit does not read a draft model)"));
  }
  return out;
}

}  // namespace memfit
