// `memfit train MODEL`: per-GPU training memory (plus CPU RAM when offloading) with the peak
// and the stage where it occurs.

#include <sstream>

#include "cli/command.h"
#include "cli/model_loader.h"
#include "cli/vocabulary.h"
#include "memfit/context_default.h"
#include "memfit/gpu.h"
#include "memfit/estimate_train.h"
#include "memfit/render_memory.h"
#include "memfit/units.h"

namespace memfit::cli {
namespace {

struct TrainArgs {
  ModelArgs model;
  std::string method = "full", optimizer = "adamw", precision = "bf16-mixed";
  uint64_t batch = 1, seq = 0, grad_accum = 1, gpus = 1, tp = 1, pp = 1;  // seq 0: the default
  uint64_t decoder_tokens = 0;  // 0: --context
  std::string gpu;  // --gpu: a catalog GPU or a size, for the verdict
  std::string checkpointing = "none", attn = "sdpa", strategy = "ddp", offload = "none";
  uint64_t lora_rank = 8;
  double lora_alpha = 8, lora_dropout = 0.0;
  std::string lora_targets;
  std::string qlora_quant = "nf4-dq";
  uint64_t freeze_layers = 2;
  std::string head = "auto";
  std::string cuda_context;
  double allocator_reserve = 0.0;
  bool no_foreach = false;
  bool keep_grads = false;
  std::string loss = "hf";
  VersionArgs versions;
  std::string format = "table";
};

Result<TrainOptions> ToOptions(const TrainArgs& a) {
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
  o.seq = a.seq;
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
  MEMFIT_ASSIGN_OR_RETURN(o.versions, ToRuntimeVersions(a.versions));
  if (a.no_foreach) o.foreach_optimizer = false;
  if (a.keep_grads) o.zero_grad_set_to_none = false;
  MEMFIT_ASSIGN_OR_RETURN(o.loss, ParseLossImpl(a.loss));
  o.overhead.allocator_reserve_fraction = a.allocator_reserve;
  if (!a.cuda_context.empty()) {
    auto b = ParseByteSize(a.cuda_context);
    if (!b) return Wrap(b.error(), "--cuda-context");
    o.overhead.cuda_context_bytes = *b;
  }
  if (o.lora.rank == 0) return MakeError("--lora-rank must be at least 1");
  return o;
}

void RunTrain(const TrainArgs& args, Context& ctx) {
  auto format = ParseOutputFormat(args.format);
  if (!format) return ctx.Fail(format.error());
  auto o = ToOptions(args);
  if (!o) return ctx.Fail(o.error());
  std::vector<DeviceSpec> devices;
  if (!args.gpu.empty()) {
    if (auto parsed = ParseDeviceArg(args.gpu, devices); !parsed) return ctx.Fail(parsed.error());
  }
  auto model = LoadModel(args.model, {});
  if (!model) return ctx.Fail(model.error());
  const ContextChoice context =
      ChooseContext(args.seq, model->hp.max_position_embeddings, ContextUse::kTrain);
  o->seq = context.tokens;
  auto e = EstimateTraining(*model, *o);
  if (!e) return ctx.Fail(e.error());
  if (!context.assumption.empty()) e->assumptions.push_back(context.assumption);
  if (!devices.empty()) {
    // --gpu: the peak per GPU against one GPU of that kind.
    const DeviceSpec& d = devices.front();
    e->notes.push_back(fmt::format("on {} ({}): the peak of {} per GPU {}", d.label,
                                   FormatBytes(d.memory_bytes), FormatBytes(e->peak_bytes),
                                   e->peak_bytes <= d.memory_bytes ? "fits" : "does not fit"));
  }
  ctx.out << RenderTrain(*model, *o, *e, *format);
}

}  // namespace

void AddTrainCommand(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand(
      "train", "memory to fine-tune or train the model, per GPU (and CPU RAM when offloading), "
               "with the peak and the stage where it occurs");
  AddModelArgs(*cmd, a->model);
  cmd->add_option("--method", a->method, "full, freeze, lora or qlora")->capture_default_str();
  cmd->add_option("--optimizer", a->optimizer, "adamw, adam, adamw-8bit, paged-adamw, "
                  "paged-adamw-8bit, adafactor, sgd, sgd-momentum, lion")->capture_default_str();
  cmd->add_option("--precision", a->precision, "fp32, fp16-mixed, bf16-mixed, bf16")->capture_default_str();
  AddBatchOption(*cmd, a->batch, "sequences per GPU per step (the micro-batch)")
      ->capture_default_str();
  cmd->add_option("--micro-batch", a->batch, "the same as --batch");
  AddContextOption(*cmd, a->seq,
                   "tokens per sequence (default: the model's maximum capped at 2048)");
  AddDeprecatedOption(*cmd, ctx, "--seq", "--context", a->seq);
  cmd->add_option("--decoder-tokens", a->decoder_tokens,
                  "encoder-decoder models (T5, BART): target tokens per sequence, the decoder's "
                  "input and labels; --context is the encoder's (default: --context)");
  cmd->add_option("--grad-accum", a->grad_accum, "gradient accumulation steps")->capture_default_str();
  cmd->add_option("--checkpointing", a->checkpointing, "none, full or selective")->capture_default_str();
  cmd->add_option("--attn", a->attn, "eager, sdpa or flash")->capture_default_str();
  cmd->add_option("--gpus", a->gpus, "GPUs in total")->capture_default_str();
  cmd->add_option("--gpu", a->gpu, "a catalog GPU (h100, rtx4090) or a size (24GiB): says "
                  "whether the peak per GPU fits one");
  cmd->add_option("--strategy", a->strategy, "ddp, zero1, zero2, zero3 or fsdp")->capture_default_str();
  cmd->add_option("--offload", a->offload, "none, optimizer or params (to CPU RAM)")->capture_default_str();
  cmd->add_option("--tp", a->tp, "tensor-parallel size")->capture_default_str();
  cmd->add_option("--pp", a->pp, "pipeline stages (1F1B: min(pp, grad-accum) micro-batches in "
                  "flight on the first stage)")->capture_default_str();
  cmd->add_option("--lora-rank", a->lora_rank, "LoRA rank r")->capture_default_str();
  cmd->add_option("--lora-alpha", a->lora_alpha, "LoRA alpha (no memory effect)")->capture_default_str();
  cmd->add_option("--lora-dropout", a->lora_dropout, "LoRA dropout")->capture_default_str();
  cmd->add_option("--lora-targets", a->lora_targets,
                  "comma-separated module names or all-linear (default: PEFT's per model type)");
  cmd->add_option("--qlora-quant", a->qlora_quant, "QLoRA base quantization")->capture_default_str();
  cmd->add_option("--freeze-layers", a->freeze_layers, "freeze: trainable last layers")->capture_default_str();
  cmd->add_option("--head", a->head, "auto, causal-lm, sequence-classification, none")->capture_default_str();
  cmd->add_option("--cuda-context", a->cuda_context, "CUDA context per GPU (default 1343MiB)");
  cmd->add_option("--allocator-reserve", a->allocator_reserve,
                  "allocator cache as a fraction of the allocated peak (default 0)");
  cmd->add_flag("--no-foreach", a->no_foreach, "per-tensor optimizer step (no fp32 temp of all "
                "states; torch < 2.0's default)");
  cmd->add_flag("--keep-grads", a->keep_grads,
                "gradients stay allocated between steps (zero_grad(set_to_none=False); torch < "
                "2.0's default)");
  AddVersionOptions(*cmd, a->versions);
  cmd->add_option("--loss", a->loss, "hf (fp32 logits + log_softmax), fused (Liger/CCE), "
                  "low-precision (TRL selective_log_softmax)")->capture_default_str();
  cmd->add_option("--format", a->format, "table, json, csv or markdown")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
  cmd->callback([a, &ctx] { RunTrain(*a, ctx); });
}

}  // namespace memfit::cli
