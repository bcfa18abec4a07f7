// SGLang's NEXTN draft (speculative_draft.h). Read from SGLang 0.5.6
// (python/sglang/srt/model_executor/model_runner.py init_memory_pool and profile_max_num_token,
// python/sglang/srt/server_args.py auto_choose_speculative_params); docs/estimates.md,
// "Speculative decoding".

#include "estimate/speculative_draft.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "estimate/saturating_math.h"
#include "memfit/checked_math.h"
#include "memfit/engine_release.h"
#include "memfit/parallel.h"
#include "memfit/units.h"

namespace memfit::estimate {
namespace {

using saturating::Add;
using saturating::Mul;

// max_running_requests under EAGLE, EAGLE3 and STANDALONE (NEXTN runs as EAGLE) when the user
// leaves it unset (server_args.py).
constexpr uint64_t kSpeculativeMaxRequests = 48;
// draft_runner_cache_size's "buffer".
constexpr uint64_t kHeadroomBuffer = 100;

}  // namespace

SpeculativeParams SglangSpeculativeDefaults(const std::string& architecture) {
  for (const char* a : {"DeepseekV3ForCausalLM", "DeepseekV2ForCausalLM", "DeepseekV32ForCausalLM",
                        "GptOssForCausalLM", "Glm4MoeForCausalLM"}) {
    if (architecture == a) return {.num_steps = 3, .eagle_topk = 1, .num_draft_tokens = 4};
  }
  return {.num_steps = 5, .eagle_topk = 4, .num_draft_tokens = 8};
}

Result<SpeculativeDraft> NextnDraft(const Model& model, const InferenceOptions& o,
                                    const InferenceEstimate& e,
                                    std::vector<std::string>& assumptions) {
  SpeculativeDraft d;
  if (o.engine != Engine::kSglang || o.speculative_algorithm != "NEXTN") return d;
  // The draft is the checkpoint's MTP layers, loaded as the target's weights are: the same
  // estimator (--quant, the stored format, --dtype for floating-point tensors) and the same
  // split (tp, and ep for the MTP layer's experts). The MTP layer's own embedding and head
  // (DeepSeek-V3's embed_tokens and shared_head.head) are dropped for the target's (eagle_worker
  // set_embed_and_head).
  // Everything but the tensors is the target's (its quantization_config names the stored format).
  Model draft = model;
  std::erase_if(draft.tensors, [](const Tensor& t) {
    return !t.stored || t.loaded || t.name.find("embed_tokens") != std::string::npos ||
           t.name.find("shared_head.head") != std::string::npos ||
           t.name.find("lm_head") != std::string::npos;
  });
  for (Tensor& t : draft.tensors) t.loaded = true;
  if (model.hp.num_mtp_layers == 0 || draft.tensors.empty()) {
    return MakeError(
        "--speculative-algorithm NEXTN: {} has no multi-token-prediction layers "
        "(num_nextn_predict_layers) to draft with; EAGLE, EAGLE3 and STANDALONE "
        "take a draft checkpoint of their own",
        model.name);
  }
  MEMFIT_ASSIGN_OR_RETURN(InferenceWeights w, PrepareInferenceWeights(draft, o));
  MEMFIT_ASSIGN_OR_RETURN(ShardedWeights shard,
                          ShardWeights(draft, w.splits, w.weights.tensor_bytes, e.layout));
  d.weights_bytes = shard.per_gpu_bytes;
  const uint64_t tp = std::max<uint64_t>(e.tp, 1);
  // An MTP layer is a full decoder layer: its cache per token is the model's largest attention
  // layer's (MLA latent, indexer keys and all), per GPU as the target's.
  std::map<uint64_t, uint64_t> per_layer;
  for (const auto& l : e.kv.layers)
    per_layer[l.layer] = Add({per_layer[l.layer], l.bytes_per_token});
  uint64_t largest = 0;
  for (const auto& [layer, bytes] : per_layer) largest = std::max(largest, bytes);
  d.kv_bytes_per_token = Mul({largest, model.hp.num_mtp_layers});
  d.inside_budget = o.release && o.release->sglang_draft_inside;
  if (d.inside_budget) {
    // 0.5.14 on: the draft's weights are loaded before the pool is sized, and the pool's cell
    // grows by the draft's layers (pool_configurator.py: cell x (1 + draft layers / layers)),
    // with no headroom (PR #15748 removed it on 2025-12-24).
    assumptions.push_back(fmt::format(
        "SGLang {} NEXTN draft: the checkpoint's {} multi-token-prediction layer(s), {} per GPU "
        "(split as the target's over tp {}, weights as the target's are loaded; its embedding and "
        "head are the target's), inside mem_fraction_static before the KV pool is sized, and {} per token of "
        "draft KV cache in every pool token",
        o.release->version, model.hp.num_mtp_layers, FormatBytes(d.weights_bytes), tp,
        FormatBytes(d.kv_bytes_per_token)));
    return d;
  }
  const SpeculativeParams p = SglangSpeculativeDefaults(model.architecture);
  d.headroom_tokens = Add({Mul({kSpeculativeMaxRequests, p.num_steps, p.eagle_topk}),
                           Mul({kSpeculativeMaxRequests, p.num_draft_tokens}), kHeadroomBuffer});
  assumptions.push_back(fmt::format(
      "SGLang NEXTN draft: the checkpoint's {} multi-token-prediction layer(s), {} per GPU (split "
      "as the target's over tp {}, weights as the target's are loaded; its embedding and head "
      "are the target's), "
      "and its KV pool at {} per token, as many tokens as the target's pool plus {} "
      "(draft_runner_cache_size: 48 requests x ({} steps x top-k {} + {} draft tokens) + 100, "
      "which the target's pool gets too); both outside mem_fraction_static, as SGLang 0.5 loads "
      "the draft after the target's pool",
      model.hp.num_mtp_layers, FormatBytes(d.weights_bytes), tp, FormatBytes(d.kv_bytes_per_token),
      d.headroom_tokens, p.num_steps, p.eagle_topk, p.num_draft_tokens));
  return d;
}

}  // namespace memfit::estimate
