// Training memory per GPU: model states per precision/method/strategy, saved activations per
// layer, logits and loss, communication buffers, and the peak per stage. docs/estimates.md.

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "estimate/layer_mixers.h"
#include "estimate/mamba2_scan.h"
#include "estimate/saturating_math.h"
#include "estimate/training_stages.h"
#include "memfit/checked_math.h"
#include "memfit/estimate_train.h"

namespace memfit {
namespace {

using estimate::saturating::Add;

uint64_t Scale(uint64_t v, double f) { return static_cast<uint64_t>(static_cast<double>(v) * f); }

void Append(TrainEstimate& e, estimate::StageMessages&& m) {
  for (auto& a : m.assumptions) e.assumptions.push_back(std::move(a));
  for (auto& n : m.notes) e.notes.push_back(std::move(n));
}

// The estimate with the Mamba-2 scan `scan` (EstimateTraining runs it for both paths when the
// model has Mamba-2 layers): the stage functions of estimate/training_stages.h, in order, then
// the stage table.
Result<TrainEstimate> EstimateTrainingWith(const Model& model, const TrainOptions& o,
                                           Mamba2Scan scan) {
  const Hyperparameters& hp = model.hp;
  TrainEstimate e;
  MEMFIT_ASSIGN_OR_RETURN(estimate::TrainRegime r, estimate::TrainRegimeFor(o));
  if (hp.hidden_size == 0 || hp.num_layers == 0) {
    return MakeError("{}: training estimate needs hidden_size and the number of layers",
                     model.name);
  }
  e.assumptions.push_back(RuntimeVersionsAssumption(o.versions));
  {
    estimate::StageMessages messages;
    r.checkpointing = estimate::CheckpointingInEffect(model, o, messages);
    Append(e, std::move(messages));
  }

  // ---- model states
  MEMFIT_ASSIGN_OR_RETURN(estimate::TrainableTensors tr,
                          estimate::CountTrainableTensors(model, o, r));
  Append(e, std::move(tr.messages));
  e.trainable_params = tr.trainable_numel;
  e.frozen_params = tr.frozen_params;
  MEMFIT_ASSIGN_OR_RETURN(estimate::ModelStatesPerGpu states, estimate::ModelStatesFor(tr, o, r));
  Append(e, std::move(states.messages));
  const uint64_t w = states.weights.weights, master = states.weights.master;
  const uint64_t comm = states.comm;
  const uint64_t autocast_part = states.weights.autocast_copy;
  e.weights_bytes = w;
  e.master_weights_bytes = Add({master, autocast_part});
  e.gradients_bytes = Add({states.gradients.gradients, states.gradients.fp32_partition});
  e.optimizer_bytes = states.optimizer;
  e.comm_bytes = comm;
  e.cpu_bytes = states.cpu;

  // ---- activations, logits and loss, backward, optimizer step
  estimate::ForwardActivations fwd = estimate::ForwardActivationsFor(model, o, r, tr, scan);
  Append(e, std::move(fwd.messages));
  const uint64_t act = fwd.saved_bytes;
  e.activation_bytes = act;
  e.activation_per_layer_bytes = fwd.per_layer_max_bytes;
  estimate::LogitsAndLoss loss = estimate::LogitsAndLossFor(model, o, r, fwd.tokens);
  Append(e, std::move(loss.messages));
  e.logits_bytes = loss.forward_bytes;
  const estimate::BackwardWorkingSet bwd = estimate::BackwardWorkingSetFor(o, r, tr, fwd);
  const uint64_t opt_tmp = estimate::OptimizerStepTransients(o, r, tr);
  const uint64_t recompute = bwd.layer_bytes, logits_bwd = loss.backward_extra_bytes;
  const uint64_t scan_forward = fwd.scan_forward_bytes, scan_backward = fwd.scan_backward_bytes;
  // The torch-path Mamba-2 scan's products are transients too (0 with the kernels).
  e.transient_bytes =
      std::max({logits_bwd, Add({recompute, scan_backward}), opt_tmp, scan_forward});

  // ---- stages (allocated bytes on the GPU, steady state)
  const bool grads_persist = estimate::GradientsPersist(o);
  const uint64_t grads = e.gradients_bytes;
  // Each stage with the parts alive at its peak; a stage's bytes are their sum.
  const auto stage = [&e](std::string name, std::vector<StagePart> parts) {
    StageMemory st{std::move(name), 0, {}};
    for (auto& p : parts) {
      if (p.bytes == 0) continue;
      st.bytes = Add({st.bytes, p.bytes});
      st.parts.push_back(std::move(p));
    }
    e.stages.push_back(std::move(st));
  };
  const auto with_base = [&](std::vector<StagePart> more) {
    std::vector<StagePart> parts{{"weights", w}, {"master weights", master},
                                 {"optimizer states", e.optimizer_bytes}, {"communication", comm}};
    parts.insert(parts.end(), more.begin(), more.end());
    return parts;
  };
  // The forward's scan transients come on top of every saved tensor and the logits (an upper
  // bound: the last Mamba-2 layer runs before the head).
  const std::vector<StagePart> forward_working{{"activations", act},
                                               {"logits and loss", e.logits_bytes},
                                               {"autocast weight copies", autocast_part},
                                               {"Mamba-2 scan (torch path)", scan_forward}};
  stage("model loaded", {{"weights", w}});
  {
    auto parts = with_base(forward_working);
    parts.push_back({"gradients", grads_persist ? grads : 0});
    stage("forward", std::move(parts));
  }
  const uint64_t encoder_grads = CeilDiv(tr.encoder_layer_grad_bytes, r.mp);
  std::vector<StagePart> backward = estimate::BackwardPeakParts(
      {.activations = act,
       .logits_at_loss_backward = loss.at_backward_bytes.value_or(e.logits_bytes),
       .loss_backward = logits_bwd, .autocast_copies = autocast_part, .gradients = grads,
       .gradients_before_encoder = grads_persist ? grads : grads - std::min(grads, encoder_grads),
       .layer_backward = recompute, .tied_embedding = bwd.tied_embedding_bytes,
       .scan_backward = scan_backward, .encoder_activations = fwd.encoder_bytes,
       .gradients_persist = grads_persist});
  stage("backward", with_base(std::move(backward)));
  stage("optimizer step", with_base({{"gradients", grads}, {"optimizer temporaries", opt_tmp}}));
  uint64_t peak = 0;
  for (const auto& st : e.stages) {
    if (st.bytes >= peak) { peak = st.bytes; e.peak_stage = st.stage; }
  }
  e.cuda_context_bytes = o.overhead.cuda_context_bytes;
  e.allocator_reserve_bytes = Scale(peak, o.overhead.allocator_reserve_fraction);
  e.peak_bytes = Add({peak, e.cuda_context_bytes, e.allocator_reserve_bytes});
  if (e.peak_bytes == UINT64_MAX) return MakeError("{}: training estimate overflows", model.name);
  if (o.optimizer == Optimizer::kPagedAdamW || o.optimizer == Optimizer::kPagedAdamW8bit) {
    e.notes.push_back("paged optimizer states live in CUDA unified memory: counted on the GPU, "
                      "paged to CPU RAM only under memory pressure");
  }
  if (o.pp > 1) {
    e.notes.push_back(fmt::format("pipeline: first stage holds {} layers x {} micro-batches in "
                                  "flight (1F1B)", fwd.stage_layers, fwd.in_flight));
  }
  if (hp.hidden_dropout > 0 || hp.attention_dropout > 0) {
    e.notes.push_back(fmt::format("dropout masks counted (hidden {}, attention {}), {}",
                                  hp.hidden_dropout, hp.attention_dropout,
                                  o.device == ComputeDevice::kCpu
                                      ? "in the input's dtype (torch's CPU dropout)"
                                      : "1 byte per element (CUDA)"));
  }
  return e;
}

}  // namespace

Result<TrainEstimate> EstimateTraining(const Model& model, const TrainOptions& o) {
  const Mamba2Scan scan = o.mamba2_scan.value_or(
      o.device == ComputeDevice::kCpu ? Mamba2Scan::kTorch : Mamba2Scan::kKernels);
  MEMFIT_ASSIGN_OR_RETURN(TrainEstimate e, EstimateTrainingWith(model, o, scan));
  if (estimate::HasMixer(model, LayerMixer::kMamba2)) {
    const Mamba2Scan other = scan == Mamba2Scan::kTorch ? Mamba2Scan::kKernels : Mamba2Scan::kTorch;
    MEMFIT_ASSIGN_OR_RETURN(TrainEstimate alt, EstimateTrainingWith(model, o, other));
    const uint64_t torch_peak = scan == Mamba2Scan::kTorch ? e.peak_bytes : alt.peak_bytes;
    const uint64_t kernel_peak = scan == Mamba2Scan::kTorch ? alt.peak_bytes : e.peak_bytes;
    e.assumptions.push_back(estimate::Mamba2ScanAssumption(
        scan, model.hp.ssm_chunk_size, torch_peak - std::min(torch_peak, kernel_peak)));
  }
  return e;
}

}  // namespace memfit
