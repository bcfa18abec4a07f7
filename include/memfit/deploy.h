#pragma once
// Serving deployments: on how many GPUs of a kind, in which parallel layout (TP / EP / DP / PP),
// an engine serves a model at a context length and a number of concurrent sequences; and the
// "runs on" grid over the GPU catalog. Pure functions over the inference estimator; see
// docs/estimates.md, "Deployment planning".

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "memfit/estimate_inference.h"
#include "memfit/gpu.h"
#include "memfit/model.h"
#include "memfit/result.h"
#include "memfit/stored_format.h"

namespace memfit {

struct DeployLayout {
  uint64_t tp = 1;
  uint64_t dp = 1;
  uint64_t ep = 1;
  uint64_t pp = 1;
  bool dp_attention = false;  // SGLang --enable-dp-attention
};
std::string DeployLayoutName(const DeployLayout& layout);  // "tp8", "tp4 ep4 dp4-attention", ...

struct DeploymentRow {
  std::string gpu;                 // catalog name, or "80.00 GiB GPU" for a bare size
  uint64_t gpu_memory_bytes = 0;
  uint64_t gpus = 0;
  DeployLayout layout{};
  bool runs = false;               // the engine accepts the layout and the stored format
  std::string refusal{};           // why not, when !runs
  bool fits = false;               // the requested sequences of the requested context fit
  uint64_t weights_per_gpu_bytes = 0;  // the heaviest GPU
  uint64_t total_per_gpu_bytes = 0;
  uint64_t kv_pool_bytes = 0;      // per GPU
  // vLLM/SGLang: the budget fraction used on this GPU (the release's default or the given one)
  // and the engine's own flags for the same budget (memfit/engine_release.h).
  double gpu_memory_utilization = 0;
  std::string engine_flags{};
  uint64_t max_sequences = 0;      // of the requested context, the whole deployment
  uint64_t max_context_tokens = 0; // one sequence, capped at max_position_embeddings
  double decode_tokens_per_s = 0;  // one sequence: memory bandwidth bound (0: unknown GPU)
  double prefill_tokens_per_s = 0; // all GPUs: compute bound (0: unknown TFLOPS)
  std::vector<std::string> assumptions{};
};

// One GPU kind: a catalog entry or a bare memory size.
struct DeployGpu {
  std::string name;
  uint64_t memory_bytes = 0;
  const GpuSpec* spec = nullptr;  // bandwidth, TFLOPS, compute capability; null for a bare size
};

struct DeployRequest {
  // Engine (vLLM, SGLang or transformers), context_tokens, batch (the sequences wanted), KV
  // dtype, --gpu-memory-utilization, --dtype, --quant. gpu_memory_bytes, compute_capability and
  // the parallel degrees are set per candidate.
  InferenceOptions inference;
  uint64_t max_gpus = 64;      // --search: 1, 2, 4, 8, then whole nodes up to this
  uint64_t gpus_per_node = 8;  // TP stays inside a node; PP and DP span nodes
  size_t top = 5;
};

// Layouts tried on `gpus` GPUs: TP over all of them inside a node (TP per node and PP across
// nodes beyond it), TP/2 x DP 2, and for MoE models expert parallel (vLLM TP + EP, DP + EP;
// SGLang TP + EP with DP attention).
std::vector<DeployLayout> CandidateLayouts(const Model& model, Engine engine, uint64_t gpus,
                                           uint64_t gpus_per_node);

// Evaluates deployments of one model, preparing the weights once per stored-format handling and
// the estimate once per layout, so that many GPU kinds and counts cost little. Not thread-safe;
// keeps a reference to `model`.
class DeployPlanner {
 public:
  DeployPlanner(const Model& model, InferenceOptions base);
  DeployPlanner(Model&& model, InferenceOptions base) = delete;  // it would dangle
  DeploymentRow Evaluate(const DeployGpu& gpu, uint64_t count, const DeployLayout& layout);
  // The fewest GPUs of `gpu` that fit the request, then the most sequences: up to request.top
  // rows, fitting ones first (the closest misses when nothing fits).
  std::vector<DeploymentRow> Search(const DeployGpu& gpu, const DeployRequest& request);
  // Every catalog GPU with memory at each of `counts`: the best layout per (GPU, count), sorted
  // fitting first, then by total memory bought (GPUs x memory: the cheapest that fits), name.
  std::vector<DeploymentRow> Grid(std::span<const uint64_t> counts);

 private:
  struct Prepared;
  Prepared* WeightsFor(bool dequantize);
  const Model& model_;
  InferenceOptions base_;
  std::vector<std::pair<bool, std::shared_ptr<Prepared>>> prepared_;
  double active_parameters_ = 0;
  StoredFormat stored_format_ = StoredFormat::kNone;
  bool format_known_ = false;
};

}  // namespace memfit
