#pragma once
// The fit planner: will a model run on the given devices, how (device map), how fast at most, and
// what to change so that it does. Pure functions over a Model and a FitRequest; see
// docs/estimates.md, "Fit planner".
//
// The planner knows weights (per tensor, at the chosen dtype) and takes everything else from a
// RuntimeModel supplied by the caller: the inference and training estimators plug in there.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "memfit/device_map.h"
#include "memfit/estimate_inference.h"
#include "memfit/estimate_load.h"
#include "memfit/estimate_train.h"
#include "memfit/gpu.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit {

// Memory beyond the weights, at a context length and batch size.
struct RuntimeBytes {
  uint64_t per_gpu_bytes = 0;    // on every GPU used: CUDA context, activation workspace, logits
  uint64_t per_layer_bytes = 0;  // with each no-split block (decoder layer): its KV cache
  // Extra bytes per weight byte, placed with the weights: gradients and optimizer states when
  // training (e.g. 16 B/param over 2 B bf16 weights = 7.0). 0 for inference.
  double per_weight_byte = 0;
};
using RuntimeBytesFn = std::function<Result<RuntimeBytes>(uint64_t context_tokens, uint64_t batch)>;

// A change to the runtime settings the advice can try (KV-cache dtype, flash attention, gradient
// checkpointing, LoRA, QLoRA, 8-bit optimizer): the estimator that owns the setting supplies it.
struct RuntimeAlternative {
  std::string name;         // "KV cache in fp8"
  int quality_cost = 0;     // 0 none .. 4 severe (see QualityCostName)
  std::string quality_note;
  RuntimeBytesFn bytes_for;
  // Weight transform that comes with it (QLoRA loads the base in NF4); empty: unchanged.
  std::function<uint64_t(const Tensor&)> weight_size_of;
  std::string flags{};  // the command-line flags that choose it ("--checkpointing full"), or ""
};

struct RuntimeModel {
  std::string task = "load";     // "load", "inference", "train"
  RuntimeBytesFn bytes_for{};    // empty: weights only (load)
  uint64_t context_tokens = 0;   // the chosen settings
  uint64_t batch = 1;
  uint64_t max_context_tokens = 0;  // the model's limit (max_position_embeddings)
  std::vector<RuntimeAlternative> alternatives{};
  bool offload_allowed = true;   // training does not run from offloaded weights
  // train: the chosen training settings (--method; seq and batch come per call), which the
  // advice's search starts from (memfit/train_search.h).
  std::optional<TrainOptions> train_options{};
  // The weights as the task loads them when not at FitRequest::dtype (QLoRA's NF4 base); the
  // key names the rule for the planner's size cache.
  std::function<uint64_t(const Tensor&)> weight_size_of{};
  std::string weight_rule_key{};
};

struct FitRequest {
  std::vector<DeviceSpec> gpus;          // --gpu, in order (GPU 0 first)
  uint64_t reserve_bytes_per_gpu = 0;    // --reserve: kept free on every GPU
  std::optional<uint64_t> ram_bytes;     // --ram: CPU offload budget
  std::optional<uint64_t> disk_bytes;    // --disk: disk offload budget (UINT64_MAX unlimited)
  LoadDtype dtype = LoadDtype::kAsStored;  // weights as loaded
  DeviceMapStrategy strategy = DeviceMapStrategy::kBalanced;
  double pcie_gb_s = 32;   // host-to-device for CPU-offloaded weights (PCIe 4.0 x16 ~31.5 GB/s)
  double disk_gb_s = 3;    // disk read for disk-offloaded weights (NVMe)
  bool advise = true;
  // The catalog's smaller siblings, largest first (the sibling's sibling, ...), for advice: the
  // largest one that fits is offered, none when none fits.
  std::vector<const Model*> smaller_siblings;
};

enum class Verdict : uint8_t { kFits, kFitsWithOffload, kDoesNotFit };
std::string_view VerdictName(Verdict verdict);  // "fits", "fits with offload", "does not fit"
std::string_view QualityCostName(int cost);     // "none", "negligible", "small", ...

struct SpeedBound {
  double decode_tokens_per_s = 0;   // one sequence, memory-bandwidth bound
  double prefill_tokens_per_s = 0;  // compute bound; 0 when a device's TFLOPS are unknown
  uint64_t bytes_per_token = 0;     // weights (active experts only) + KV read per decoded token
  uint64_t active_parameters = 0;
  std::vector<std::string> notes;   // what is unknown or left out
};

struct Limits {
  std::optional<uint64_t> max_context_tokens;  // at the chosen batch, on the GPUs alone
  std::optional<uint64_t> max_batch;           // at the chosen context
};

struct Advice {
  std::string action;          // "load the weights in NF4 (bitsandbytes 4-bit)"
  int quality_cost = 0;
  std::string quality_note{};
  uint64_t total_bytes = 0;    // weights + runtime after the change
  int64_t saved_bytes = 0;     // against the plan's total (negative: costs memory)
  Verdict verdict = Verdict::kDoesNotFit;
  std::string detail{};  // how the number was computed
  std::string flags{};   // the command-line flags that apply it ("--method qlora ..."), or ""
};

// The terms of FitPlan::total_bytes; they add up to it exactly.
struct FitTotalTerms {
  uint64_t weight_bytes = 0;    // the module tree's weights and buffers as loaded
  uint64_t state_bytes = 0;     // training: gradients, master weights, optimizer states
  uint64_t kv_cache_bytes = 0;  // inference: the KV cache, placed with its layers
  uint64_t per_gpu_bytes = 0;   // runtime on every GPU used (CUDA context, activations, ...)
  uint64_t gpus_used = 1;       // per_gpu_bytes counts once per GPU used
};

struct FitPlan {
  Verdict verdict = Verdict::kDoesNotFit;
  uint64_t weight_bytes = 0;       // resident weights at the chosen dtype
  RuntimeBytes runtime;            // at the chosen settings
  uint64_t total_bytes = 0;        // weights + runtime on the GPUs used
  DeviceMap map;
  // GPUs of the first kind needed for the whole thing on GPUs (accelerate map, no offload);
  // nullopt when even 1024 are not enough (a block larger than one GPU).
  std::optional<uint64_t> gpus_needed;
  Limits limits;
  SpeedBound speed;
  std::vector<Advice> advice;      // ranked: fitting first, then by quality cost, then savings
  std::vector<std::string> notes;
  FitTotalTerms terms;             // what total_bytes is made of
  std::string no_count_reason;     // gpus_needed is nullopt: why no number of GPUs holds it
};

namespace plan {
struct ModuleTree;
class SizeCache;
}

// A model prepared for planning: its module tree is built once, and the tree sizes of every
// what-if (dtype, quantization, pruning) are computed on first use and kept, so every plan for
// this model (the GPU grid, the server) shares them. Thread-safe. Keeps a pointer to `model`,
// which must outlive it.
class FitModel {
 public:
  explicit FitModel(const Model& model);
  const Model& model() const { return *model_; }
  const plan::ModuleTree& tree() const { return *tree_; }
  plan::SizeCache& sizes() const { return *sizes_; }

 private:
  const Model* model_;
  std::shared_ptr<const plan::ModuleTree> tree_;
  std::shared_ptr<plan::SizeCache> sizes_;
};

// Runs the planner. Errors: no devices, a runtime estimator error.
Result<FitPlan> PlanFit(const FitModel& model, const FitRequest& request,
                        const RuntimeModel& runtime = {});
Result<FitPlan> PlanFit(const Model& model, const FitRequest& request,
                        const RuntimeModel& runtime = {});

// LoadedTensorBytes (bytes of a tensor at a load dtype): memfit/estimate_load.h.

// Attention FLOPs per token of a causal prompt of `prompt_tokens` tokens, averaged over its
// positions (docs/estimates.md, "Speed bounds"): per layer 2 x heads x (d_k + d_v) per attended
// token (QK^T and AV), a query at position t attending to min(t, window) tokens. 0 for layers
// without attention and for a prompt of 0 tokens.
double PrefillAttentionFlopsPerToken(const Hyperparameters& hp, uint64_t prompt_tokens);

// The runtime model for `--task`: "load" is weights only; "inference" and "train" take their
// bytes from the inference and training estimators (src/plan/runtime_task.cc; docs/estimates.md,
// "Fit planner").
struct TaskSettings {
  std::string task = "load";
  uint64_t context_tokens = 0;  // 0: memfit/context_default.h
  uint64_t batch = 1;
  KvDtype kv_dtype = KvDtype::kModel;  // inference: the KV cache's dtype (--kv-dtype)
  TrainMethod train_method = TrainMethod::kFull;  // train: --method
};
Result<RuntimeModel> RuntimeForTask(const Model& model, const TaskSettings& settings);

// Training with `options` as the planner sees it (context and batch come per call): bytes per
// GPU and per weight byte, and for QLoRA the weights of its NF4 base (weight_size_of).
Result<RuntimeAlternative> TrainRuntime(const Model& model, const TrainOptions& options);

}  // namespace memfit
