// `memfit train MODEL`: per-GPU training memory (plus CPU RAM when offloading) with the peak
// and the stage where it occurs.

#include <sstream>

#include "cli/command.h"
#include "cli/model_loader.h"
#include "cli/request_flags.h"
#include "cli/terminal.h"
#include "cli/vocabulary.h"
#include "memfit/context_default.h"
#include "memfit/gpu.h"
#include "memfit/estimate_train.h"
#include "memfit/render_memory.h"
#include "memfit/requests.h"
#include "memfit/units.h"

namespace memfit::cli {
namespace {

// The request's fields are the flags' variables (memfit/requests.h states the defaults).
struct TrainArgs {
  ModelArgs model;
  TrainRequest request;
  VersionArgs versions;
  std::string format = "table";
  bool wide = false;
};

void RunTrain(TrainArgs& args, Context& ctx) {
  auto format = ParseOutputFormat(args.format);
  if (!format) return ctx.Fail(format.error());
  args.request.torch_version = args.versions.torch;
  args.request.transformers_version = args.versions.transformers;
  auto answer = WithQuery(args.model, [&](ModelQuery query) {
    TrainRequest request = args.request;
    request.model = std::move(query);
    return RunTrainRequest(request);
  });
  if (!answer) return ctx.Fail(answer.error());
  ctx.out << RenderTrainAnswer(*answer, *format, TerminalLayout(args.wide));
}

// The command and its flags, bound to a TrainArgs; the caller sets the callback.
std::shared_ptr<TrainArgs> AddTrainFlags(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<TrainArgs>();
  TrainRequest& r = a->request;
  auto* cmd = app.add_subcommand(
      "train", "memory to fine-tune or train the model, per GPU (and CPU RAM when offloading), "
               "with the peak and the stage where it occurs");
  AddModelArgs(*cmd, a->model);
  cmd->add_option("--method", r.method, "full, freeze, lora or qlora")->capture_default_str();
  cmd->add_option("--optimizer", r.optimizer, "adamw, adam, adamw-8bit, paged-adamw, "
                  "paged-adamw-8bit, adafactor, sgd, sgd-momentum, lion")->capture_default_str();
  cmd->add_option("--precision", r.precision, "fp32, fp16-mixed, bf16-mixed, bf16")->capture_default_str();
  AddBatchOption(*cmd, r.batch, "sequences per GPU per step (the micro-batch)")
      ->capture_default_str();
  cmd->add_option("--micro-batch", r.batch, "the same as --batch");
  AddContextOption(*cmd, r.context,
                   "tokens per sequence (default: the model's maximum capped at 2048)");
  AddDeprecatedOption(*cmd, ctx, "--seq", "--context", r.context);
  cmd->add_option("--decoder-tokens", r.decoder_tokens,
                  "encoder-decoder models (T5, BART): target tokens per sequence, the decoder's "
                  "input and labels; --context is the encoder's (default: --context)");
  cmd->add_option("--grad-accum", r.grad_accum, "gradient accumulation steps")->capture_default_str();
  cmd->add_option("--checkpointing", r.checkpointing, "none, full or selective")->capture_default_str();
  cmd->add_option("--attn", r.attn, "eager, sdpa or flash")->capture_default_str();
  cmd->add_option("--gpus", r.gpus, "GPUs in total")->capture_default_str();
  cmd->add_option("--gpu", r.gpu, "a catalog GPU (h100, rtx4090) or a size (24GiB): the "
                  "verdict (first line), and when it does not fit, the GPUs and settings that do");
  cmd->add_option("--strategy", r.strategy, "ddp, zero1, zero2, zero3 or fsdp")->capture_default_str();
  cmd->add_option("--offload", r.offload, "none, optimizer or params (to CPU RAM)")->capture_default_str();
  cmd->add_option("--tp", r.tp, "tensor-parallel size")->capture_default_str();
  cmd->add_option("--pp", r.pp, "pipeline stages (1F1B: min(pp, grad-accum) micro-batches in "
                  "flight on the first stage)")->capture_default_str();
  cmd->add_option("--lora-rank", r.lora_rank, "LoRA rank r")->capture_default_str();
  cmd->add_option("--lora-alpha", r.lora_alpha, "LoRA alpha (no memory effect)")->capture_default_str();
  cmd->add_option("--lora-dropout", r.lora_dropout, "LoRA dropout")->capture_default_str();
  cmd->add_option("--lora-targets", r.lora_targets,
                  "comma-separated module names or all-linear (default: PEFT's per model type)");
  cmd->add_option("--qlora-quant", r.qlora_quant, "QLoRA base quantization")->capture_default_str();
  cmd->add_option("--freeze-layers", r.freeze_layers, "freeze: trainable last layers")->capture_default_str();
  cmd->add_option("--head", r.head, "auto, causal-lm, sequence-classification, none")->capture_default_str();
  cmd->add_option("--cuda-context", r.cuda_context, "CUDA context per GPU (default 1343MiB)");
  cmd->add_option("--allocator-reserve", r.allocator_reserve,
                  "allocator cache as a fraction of the allocated peak (default 0)");
  cmd->add_flag("--no-foreach", r.no_foreach, "per-tensor optimizer step (no fp32 temp of all "
                "states; torch < 2.0's default)");
  cmd->add_flag("--keep-grads", r.keep_grads,
                "gradients stay allocated between steps (zero_grad(set_to_none=False); torch < "
                "2.0's default)");
  AddVersionOptions(*cmd, a->versions);
  AddMambaScanOption(*cmd, r.mamba_scan);
  cmd->add_option("--loss", r.loss, "hf (fp32 logits + log_softmax), fused (Liger/CCE), "
                  "low-precision (TRL selective_log_softmax)")->capture_default_str();
  cmd->add_option("--format", a->format, "table, json, csv or markdown")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
  AddWideFlag(*cmd, a->wide);
  return a;
}

}  // namespace

void AddTrainCommand(CLI::App& app, Context& ctx) {
  auto a = AddTrainFlags(app, ctx);
  app.get_subcommand("train")->callback([a, &ctx] { RunTrain(*a, ctx); });
}

Result<TrainRequest> TrainRequestFromFlags(const std::vector<std::string>& args) {
  CLI::App app;
  std::ostringstream out, err;
  Context ctx{out, err};
  auto a = AddTrainFlags(app, ctx);
  MEMFIT_RETURN_IF_ERROR(ParseFlags(app, "train", args));
  a->request.model = QueryFor(a->model, std::make_shared<bool>(false));
  a->request.torch_version = a->versions.torch;
  a->request.transformers_version = a->versions.transformers;
  return a->request;
}

}  // namespace memfit::cli
