#pragma once
// Typed requests: what a user asks of `inference` and `train`, in their words (the CLI's flags,
// the API's JSON fields), with every default stated here once. The CLI binds its flags to these
// fields and the server fills them from the JSON body; both hand them to the same Run*Request,
// which resolves the model (through the process's model cache when it is on), turns the words
// into estimator options (each error names the flag: "--dtype: ..."), applies the defaults that
// depend on the model (memfit/context_default.h) and estimates. Rendering is the caller's.
//
// Errors carry their kind (memfit/result.h): resolution's not found / forbidden / unavailable,
// kBadInput for settings that cannot be read or combined.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "memfit/catalog.h"
#include "memfit/context_curve.h"
#include "memfit/deploy.h"
#include "memfit/estimate_inference.h"
#include "memfit/estimate_load.h"
#include "memfit/estimate_train.h"
#include "memfit/fit.h"
#include "memfit/gpu.h"
#include "memfit/render.h"
#include "memfit/resolve.h"
#include "memfit/result.h"
#include "memfit/verdict.h"

namespace memfit {

// `memfit estimate-memory` / POST /api/v1/estimate-memory: load memory per dtype, or
// accelerate's own view (--accelerate).
struct LoadRequest {
  ModelQuery model;                 // MODEL, --revision, --offline, --token, --gguf-file
  std::vector<std::string> dtypes;  // --dtypes: empty = every dtype
  bool accelerate = false;          // --accelerate
  std::string library_name;         // --library_name: "" = the config's kind; transformers, timm
  bool trust_remote_code = false;   // --trust_remote_code: accepted; memfit never runs remote code
};

// What RenderLoadEstimate (or, for --accelerate, RenderAccelerate) needs.
struct LoadAnswer {
  // Without --accelerate a compact model (BuildOptions::compact_repeats): read its fields, its
  // load summary and its totals; its tensors only through repeat-aware functions (memfit/model.h).
  std::shared_ptr<const DescribedModel> model;
  LoadEstimate estimate;                         // without --accelerate
  std::optional<AccelerateEstimate> accelerate;  // with --accelerate,
  std::string library;                           // the library accelerate would build with,
  bool without_config = false;                   // and whether no config.json was found
};

Result<LoadAnswer> RunLoadRequest(const LoadRequest& request);

// `memfit inference` / POST /api/v1/inference. Field comments name the flag (= the JSON key).
struct InferenceRequest {
  ModelQuery model{};                    // MODEL, --revision, --offline, --token, --gguf-file
  uint64_t context = 0;                  // --context: 0 = memfit/context_default.h (kServe)
  uint64_t batch = 1;                    // --batch: sequences at once
  uint64_t gpus = 0;                     // --gpus: all GPUs (tp = gpus / (dp x pp)); 0: from --tp
  std::string dtype = "bfloat16";        // --dtype
  std::string quant = "stored";          // --quant
  std::string kv_dtype = "model";        // --kv-dtype
  std::string attn = "sdpa";             // --attn
  std::string engine = "transformers";   // --engine
  std::string engine_version{};          // --engine-version: "" = the newest release modelled
  double gpu_memory_utilization = -1;    // --gpu-memory-utilization: < 0 = the release's default
  std::string gpu_memory{};              // --gpu-memory: a size; "" = --gpu's
  uint64_t block_size = 16;              // --block-size
  uint64_t max_num_seqs = 0;             // --max-num-seqs: 0 = the release's default
  uint64_t max_batched_tokens = 0;       // --max-batched-tokens: 0 = the release's default
  uint64_t tp = 0;                       // --tp: 0 = from --gpus, else 1
  uint64_t dp = 1;                       // --dp
  uint64_t ep = 1;                       // --ep
  uint64_t pp = 1;                       // --pp
  bool dp_attention = false;             // --enable-dp-attention
  std::string speculative_algorithm{};   // --speculative-algorithm: SGLang's; "" = none
  std::string gpu;                       // --gpu: a catalog GPU
  uint64_t encoder_tokens = 0;           // --encoder-tokens
  uint64_t decoder_tokens = 0;           // --decoder-tokens: T5-style; 0 = the context
  uint64_t new_tokens = 0;               // --new-tokens: generate()'s; 0 = all prefilled
  std::string cuda_context{};            // --cuda-context: a size; "" = the default
  double allocator_reserve = 0.0;        // --allocator-reserve
  bool all_logits = false;               // --all-logits
  std::string torch_version{};           // --torch-version: "" = the current release
  std::string transformers_version{};    // --transformers-version: "" = the current release
  std::string mamba_scan{};              // --mamba-scan: kernels or torch; "" = kernels
  bool curve = false;                    // --curve
  std::vector<std::string> curve_gpus;   // --curve-gpu (default: --gpu)
};

// What the renderers need (RenderInference). `llamacpp`: the request is llama.cpp's (--engine
// llama.cpp, a .gguf MODEL, --gguf-file, or MODEL resolved to a GGUF model, then in `resolved`)
// and nothing was estimated: the caller answers it with the llama.cpp estimator.
struct InferenceAnswer {
  bool llamacpp = false;
  std::optional<ResolvedModel> resolved;                // llamacpp, when MODEL was resolved
  std::shared_ptr<const DescribedModel> model;          // otherwise: the model,
  InferenceOptions options;                             // the settings,
  InferenceEstimate estimate;                           // the estimate,
  std::optional<ContextCurve> curve;                    // and --curve's points
  std::optional<HardwareVerdict> verdict;               // with --gpu or --gpu-memory
};

Result<InferenceAnswer> RunInferenceRequest(const InferenceRequest& request);
// The report of a (non-llama.cpp) answer, its verdict first (`memfit inference --format ...`).
std::string RenderInferenceAnswer(const InferenceAnswer& answer, OutputFormat format,
                                  const TextLayout& layout = {});

// `memfit train` / POST /api/v1/train.
struct TrainRequest {
  ModelQuery model;                      // MODEL, --revision, --offline, --token, --gguf-file
  std::string method = "full";           // --method
  std::string optimizer = "adamw";       // --optimizer
  std::string precision = "bf16-mixed";  // --precision
  uint64_t batch = 1;                    // --batch (--micro-batch): sequences per GPU per step
  uint64_t context = 0;                  // --context: 0 = memfit/context_default.h (kTrain)
  uint64_t decoder_tokens = 0;           // --decoder-tokens: encoder-decoders; 0 = the context
  uint64_t grad_accum = 1;               // --grad-accum
  uint64_t gpus = 1;                     // --gpus
  uint64_t tp = 1;                       // --tp
  uint64_t pp = 1;                       // --pp
  std::string gpu;                       // --gpu: a catalog GPU or a size, for the verdict
  std::string checkpointing = "none";    // --checkpointing
  std::string attn = "sdpa";             // --attn
  std::string strategy = "ddp";          // --strategy
  std::string offload = "none";          // --offload
  uint64_t lora_rank = 8;                // --lora-rank
  double lora_alpha = 8;                 // --lora-alpha
  double lora_dropout = 0.0;             // --lora-dropout
  std::string lora_targets;              // --lora-targets: comma-separated; "" = PEFT's
  std::string qlora_quant = "nf4-dq";    // --qlora-quant
  uint64_t freeze_layers = 2;            // --freeze-layers
  std::string head = "auto";             // --head
  std::string cuda_context;              // --cuda-context: a size; "" = the default
  double allocator_reserve = 0.0;        // --allocator-reserve
  bool no_foreach = false;               // --no-foreach
  bool keep_grads = false;               // --keep-grads
  std::string loss = "hf";               // --loss
  std::string torch_version;             // --torch-version
  std::string transformers_version;      // --transformers-version
  std::string mamba_scan;                // --mamba-scan: kernels or torch; "" = kernels
};

// What RenderTrain needs.
struct TrainAnswer {
  std::shared_ptr<const DescribedModel> model;
  TrainOptions options;
  TrainEstimate estimate;
  std::optional<HardwareVerdict> verdict;  // with --gpu
};

Result<TrainAnswer> RunTrainRequest(const TrainRequest& request);
std::string RenderTrainAnswer(const TrainAnswer& answer, OutputFormat format,
                              const TextLayout& layout = {});

// `memfit fit` / POST /api/v1/fit: will the model run on these devices (accelerate's device map),
// or a serving deployment (--engine, --search, --all-gpus), or llama.cpp's --fit for a GGUF model.
// (FitRequest, memfit/fit.h, is the planner's own input, which this request becomes.)
struct FitCommandRequest {
  ModelQuery model{};                    // MODEL, --revision, --offline, --token, --gguf-file
  std::vector<std::string> gpus{};       // --gpu: catalog names, sizes or counts (2xH100)
  std::string ram;                       // --ram: a size or "unlimited"; "" = none
  std::string disk{};                    // --disk: a size or "unlimited"; "" = none
  std::string reserve{};                 // --reserve: kept free per GPU; "" = nothing
  std::string dtype = "stored";          // --dtype
  std::string task = "load";             // --task: load, inference or train
  uint64_t context = 0;                  // --context: 0 = memfit/context_default.h
  uint64_t batch = 1;                    // --batch: sequences (training: per GPU per step)
  uint64_t gpu_count = 0;                // --gpus: N of the one --gpu kind (= --gpu NxKIND)
  std::string strategy = "balanced";     // --strategy: balanced or sequential
  double pcie_gb_s = 32;                 // --pcie-gbps
  double disk_gb_s = 3;                  // --disk-gbps
  bool no_advice = false;                // --no-advice
  bool device_map_only = false;          // --device-map: only the device_map JSON
  std::string engine{};                  // --engine: "" = the device map (vllm with --search)
  bool search = false;                   // --search
  bool all_gpus = false;                 // --all-gpus
  uint64_t max_gpus = 64;                // --max-gpus
  uint64_t top = 5;                      // --top
  std::string quant = "stored";          // --quant
  std::string kv_dtype = "model";        // --kv-dtype
  std::string engine_version{};          // --engine-version: "" = the newest release modelled
  double gpu_memory_utilization = -1;    // --gpu-memory-utilization: < 0 = the release's default
  uint64_t block_size = 16;              // --block-size
  uint64_t max_num_seqs = 0;             // --max-num-seqs: 0 = the release's default
  uint64_t max_batched_tokens = 0;       // --max-batched-tokens: 0 = the release's default
  uint64_t tp = 0;                       // --tp: 0 = all --gpu / (dp x pp)
  uint64_t dp = 1;                       // --dp
  uint64_t ep = 1;                       // --ep
  uint64_t pp = 1;                       // --pp
  bool dp_attention = false;             // --enable-dp-attention
  std::string speculative_algorithm{};   // --speculative-algorithm: SGLang's; "" = none
  std::string method = "full";           // --method: --task train's method (full, lora, qlora)
};

// What the fit renderers need (RenderFitAnswer), by kind: the device map (model, planner
// request, runtime, plan), a serving deployment (model, options, mode, rows), or llama.cpp: the
// request is llama.cpp's (a .gguf MODEL, --gguf-file, --engine llama.cpp, or MODEL resolved to a
// GGUF model, then in `resolved`) and nothing was planned: the caller plans it with llama.cpp's
// --fit order over `gpus`.
struct FitAnswer {
  enum class Kind : uint8_t { kDeviceMap, kDeploy, kLlamaCpp };
  Kind kind = Kind::kDeviceMap;
  std::vector<std::string> gpus;           // --gpu's words with --gpus N applied
  std::optional<ResolvedModel> resolved;   // kLlamaCpp, when MODEL was resolved
  std::shared_ptr<const Model> model;      // kDeviceMap, kDeploy
  // kDeviceMap: the catalog's smaller siblings, largest first (plan_request.smaller_siblings)
  std::vector<std::shared_ptr<const Model>> siblings;
  FitRequest plan_request;                 // kDeviceMap
  RuntimeModel runtime;                    // kDeviceMap
  FitPlan plan;                            // kDeviceMap
  bool device_map_only = false;            // kDeviceMap: --device-map
  InferenceOptions deploy_options;         // kDeploy
  std::string deploy_mode;                 // kDeploy: "deployment", "search" or "grid"
  std::vector<DeploymentRow> rows;         // kDeploy
  std::optional<HardwareVerdict> verdict;  // kDeviceMap
};

Result<FitAnswer> RunFitCommandRequest(const FitCommandRequest& request);
// The report of a device-map or deployment answer (`memfit fit --format ...`); --device-map: the
// device_map JSON alone, whatever the format.
std::string RenderFitAnswer(const FitAnswer& answer, OutputFormat format,
                            const TextLayout& layout = {});

// `memfit inspect` / POST /api/v1/inspect: tensors grouped by module.
struct InspectRequest {
  ModelQuery model;    // MODEL, --revision, --offline, --token, --gguf-file
  uint64_t depth = 3;  // --depth: 1 to 16
};
struct InspectAnswer {
  std::shared_ptr<const DescribedModel> model;
  int depth = 3;
};
Result<InspectAnswer> RunInspectRequest(const InspectRequest& request);

// `memfit gpus` / GET|POST /api/v1/gpus: the GPU catalog, filtered.
struct GpusRequest {
  std::string min_memory;  // --min-memory: a size; "" = any
  std::string vendor;      // --vendor: nvidia, amd, apple, intel; "" = any
};
Result<std::vector<const GpuSpec*>> RunGpusRequest(const GpusRequest& request);

// `memfit models` / GET|POST /api/v1/models: the built-in model catalog. (--export-configs, which
// writes files, is the CLI's alone.)
struct ModelsRequest {
  std::string family;  // --family: "" = every family
};
Result<std::vector<const CatalogEntry*>> RunModelsRequest(const ModelsRequest& request);

// --torch-version / --transformers-version -> the releases whose allocations to follow.
Result<RuntimeVersions> ParseRuntimeVersions(const std::string& torch,
                                             const std::string& transformers);
// --curve-gpu's words: a catalog name (its memory and compute capability) or a size ("24GiB").
Result<std::vector<CurveGpu>> ParseCurveGpus(const std::vector<std::string>& words);

}  // namespace memfit
