// A TrainRequest (memfit/requests.h) -> the model, the options and the estimate, with --gpu's
// verdict as a note. The checks run in the order `memfit train` always ran them.

#include <sstream>

#include "memfit/context_default.h"
#include "memfit/gpu.h"
#include "memfit/requests.h"
#include "memfit/units.h"
#include "memfit/render_memory.h"
#include "request/request_options.h"
#include "request/verdicts.h"

namespace memfit {

Result<TrainOptions> TrainOptionsFor(const TrainRequest& a) {
  TrainOptions o;
  MEMFIT_ASSIGN_OR_RETURN(o.method, ParseTrainMethod(a.method));
  MEMFIT_ASSIGN_OR_RETURN(o.optimizer, ParseOptimizer(a.optimizer));
  MEMFIT_ASSIGN_OR_RETURN(o.precision, ParsePrecision(a.precision));
  MEMFIT_ASSIGN_OR_RETURN(o.checkpointing, ParseCheckpointing(a.checkpointing));
  MEMFIT_ASSIGN_OR_RETURN(o.attn, ParseAttnImpl(a.attn));
  MEMFIT_ASSIGN_OR_RETURN(o.strategy, ParseStrategy(a.strategy));
  MEMFIT_ASSIGN_OR_RETURN(o.offload, ParseOffload(a.offload));
  MEMFIT_ASSIGN_OR_RETURN(o.head, ParseTaskHead(a.head));
  MEMFIT_ASSIGN_OR_RETURN(o.qlora_quant, ParseQuant(a.qlora_quant));
  o.batch = a.batch;
  o.seq = a.context;
  o.decoder_tokens = a.decoder_tokens;
  o.grad_accum = a.grad_accum;
  o.gpus = a.gpus;
  o.tp = a.tp;
  o.pp = a.pp;
  o.lora.rank = a.lora_rank;
  o.lora.alpha = a.lora_alpha;
  o.lora.dropout = a.lora_dropout;
  std::stringstream ss(a.lora_targets);
  for (std::string t; std::getline(ss, t, ',');) {
    if (!t.empty()) o.lora.targets.push_back(t);
  }
  o.freeze_trainable_layers = a.freeze_layers;
  MEMFIT_ASSIGN_OR_RETURN(o.versions, ParseRuntimeVersions(a.torch_version, a.transformers_version));
  if (a.no_foreach) o.foreach_optimizer = false;
  if (a.keep_grads) o.zero_grad_set_to_none = false;
  MEMFIT_ASSIGN_OR_RETURN(o.loss, ParseLossImpl(a.loss));
  if (!a.mamba_scan.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(o.mamba2_scan, ParseMamba2Scan(a.mamba_scan, "--mamba-scan"));
  }
  o.overhead.allocator_reserve_fraction = a.allocator_reserve;
  if (!a.cuda_context.empty()) {
    auto b = ParseByteSize(a.cuda_context);
    if (!b) return Wrap(b.error(), "--cuda-context");
    o.overhead.cuda_context_bytes = *b;
  }
  if (o.lora.rank == 0) return MakeError("--lora-rank must be at least 1");
  return o;
}

std::string AbsurdTotalWarning(uint64_t bytes_per_gpu) {
  constexpr uint64_t kAbsurd = uint64_t{64} << 40;
  if (bytes_per_gpu <= kAbsurd) return "";
  return fmt::format("warning: {} per GPU is more memory than any machine has: check --context "
                     "and --batch",
                     FormatBytes(bytes_per_gpu));
}

Result<TrainAnswer> RunTrainRequest(const TrainRequest& r) {
  TrainAnswer answer;
  MEMFIT_ASSIGN_OR_RETURN(answer.options, TrainOptionsFor(r));
  std::vector<DeviceSpec> devices;
  if (!r.gpu.empty()) MEMFIT_RETURN_IF_ERROR(ParseDeviceArg(r.gpu, devices));
  // --gpu NxKIND: N GPUs in total, the same as --gpus N (1 is --gpus's default).
  if (devices.size() > 1) {
    if (r.gpus != 1 && r.gpus != devices.size()) {
      return MakeError("--gpu {} and --gpus {} disagree: give the count once", r.gpu, r.gpus);
    }
    answer.options.gpus = devices.size();
  }
  MEMFIT_ASSIGN_OR_RETURN(
      answer.model,
      ResolveAndDescribeShared(r.model,
                               {.build = {.transformers = answer.options.versions.transformers}}));
  const Model& model = answer.model->model();
  const ContextChoice context =
      ChooseContext(r.context, model.hp.max_position_embeddings, ContextUse::kTrain);
  answer.options.seq = context.tokens;
  MEMFIT_ASSIGN_OR_RETURN(answer.estimate, EstimateTraining(model, answer.options));
  TrainEstimate& e = answer.estimate;
  if (!context.assumption.empty()) e.assumptions.push_back(context.assumption);
  if (std::string warning = AbsurdTotalWarning(e.peak_bytes); !warning.empty()) {
    e.notes.push_back(std::move(warning));
  }
  // --gpu: the peak per GPU against one GPU of that kind, and when it does not fit, how many
  // would hold it and the cheapest settings that fit (memfit/train_search.h).
  if (!devices.empty()) answer.verdict = TrainVerdict(model, devices.front(), answer.options, e);
  return answer;
}

std::string RenderTrainAnswer(const TrainAnswer& a, OutputFormat format, const TextLayout& layout) {
  if (!a.model) return "";
  return RenderTrain(a.model->model(), a.options, a.estimate, format,
                     a.verdict ? &*a.verdict : nullptr, layout);
}

}  // namespace memfit
