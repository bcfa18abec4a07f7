#pragma once
// Weights per GPU under tensor, expert, data-parallel-attention and pipeline parallelism, per
// serving engine: which tensors each engine replicates and which it shards, tensor by tensor.
// Pure; docs/estimates.md, "Parallelism: what each engine replicates".

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/engine.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit {

// What the user asked for, in the engine's own words.
struct ParallelOptions {
  Engine engine = Engine::kVllm;
  uint64_t tp = 1;  // --tensor-parallel-size / --tp
  // vLLM --data-parallel-size: whole engine replicas (tp GPUs each), the MoE layers shared over
  // all tp x dp GPUs. SGLang --dp with --enable-dp-attention: attention runs data parallel
  // inside the tp GPUs (attention TP = tp / dp).
  uint64_t dp = 1;
  bool dp_attention = false;  // SGLang --enable-dp-attention
  // Experts sharded whole over GPUs (vLLM --enable-expert-parallel: over tp x dp; SGLang
  // --ep-size N: over N of the tp GPUs); the other weights per --tp.
  uint64_t ep = 1;
  uint64_t pp = 1;  // --pipeline-parallel-size: decoder layers split into stages
};

// The degrees each kind of tensor is split over, resolved from ParallelOptions.
struct ParallelLayout {
  uint64_t gpus = 1;       // GPUs of the deployment (tp x dp x pp for vLLM; tp x pp for SGLang)
  uint64_t attn_tp = 1;    // attention projections (and the KV cache) split over
  uint64_t dense_tp = 1;   // dense MLPs and shared experts
  uint64_t ep = 1;         // routed experts: whole experts over ep GPUs
  uint64_t expert_tp = 1;  // ... each expert split over expert_tp GPUs
  uint64_t vocab_tp = 1;   // input embedding (VocabParallelEmbedding), 1 = replicated
  uint64_t head_tp = 1;    // lm_head (ParallelLMHead)
  uint64_t pp = 1;
  uint64_t replicas = 1;   // independent KV pools (data-parallel ranks) in the deployment
  std::vector<std::string> assumptions;
};
Result<ParallelLayout> ResolveParallel(const Model& model, const ParallelOptions& options);

struct StageWeights {
  uint64_t first_layer = 0;  // decoder layers [first_layer, end_layer)
  uint64_t end_layer = 0;
  uint64_t bytes = 0;        // weights on one GPU of this stage
};

struct ShardedWeights {
  uint64_t per_gpu_bytes = 0;     // the heaviest GPU
  uint64_t replicated_bytes = 0;  // of which: whole on every GPU of its stage
  uint64_t sharded_bytes = 0;     // of which: a 1/attn_tp, 1/dense_tp or vocab share
  uint64_t expert_bytes = 0;      // of which: routed experts (ceil(E / ep) of them, / expert_tp)
  std::vector<StageWeights> stages;  // one per pipeline stage (vLLM get_pp_indices)
};
// How each tensor splits, read once from its name and shape (replicated, attention, KV
// projection, dense, routed expert, vocabulary, lm_head), so that many layouts cost a loop each.
struct TensorSplit {
  uint8_t kind = 0;     // private enumeration of parallel.cc
  int64_t layer = -1;   // decoder layer index, -1 outside the layers
  int64_t expert = -2;  // routed expert index; -1 a fused stack of all experts; -2 none
  uint64_t rows = 0;    // shape[0] (vocabulary rows of embeddings and lm_head)
  bool norm = false;    // a norm outside the layers goes to the last pipeline stage
};
std::vector<TensorSplit> ClassifySplits(const Model& model);

// `tensor_bytes`: bytes of each of model.tensors as loaded (QuantizedWeights::tensor_bytes).
Result<ShardedWeights> ShardWeights(const Model& model, const std::vector<uint64_t>& tensor_bytes,
                                    const ParallelLayout& layout);
Result<ShardedWeights> ShardWeights(const Model& model, const std::vector<TensorSplit>& splits,
                                    const std::vector<uint64_t>& tensor_bytes,
                                    const ParallelLayout& layout);

// vLLM get_pp_indices: layers per stage, the remainder one each to the stages before the last.
std::vector<uint64_t> PipelineStageLayers(uint64_t num_layers, uint64_t pp);

}  // namespace memfit
