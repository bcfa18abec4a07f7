// `memfit fit MODEL --gpu ...`: will it run here, with which device map, how fast at most, and
// what to change so it does. The flags are a FitCommandRequest's fields (memfit/requests.h states
// the defaults); RunFitCommandRequest answers it, as it does for POST /api/v1/fit.

#include "cli/command.h"
#include "cli/llamacpp_cli.h"
#include "cli/model_loader.h"
#include "cli/terminal.h"
#include "cli/vocabulary.h"
#include "memfit/requests.h"

namespace memfit::cli {
namespace {

struct FitArgs {
  ModelArgs model;
  FitCommandRequest request;
  std::string format = "table";
  bool wide = false;
};

void RunFit(const FitArgs& args, Context& ctx) {
  auto format = ParseOutputFormat(args.format);
  if (!format) return ctx.Fail(format.error());
  auto answer = WithQuery(args.model, [&](ModelQuery query) {
    FitCommandRequest request = args.request;
    request.model = std::move(query);
    return RunFitCommandRequest(request);
  });
  if (!answer) return ctx.Fail(answer.error());
  if (answer->kind == FitAnswer::Kind::kLlamaCpp) {
    // GGUF models are planned the way llama.cpp --fit does (layers, context, n-cpu-moe).
    LlamaCppCliArgs llama = LlamaCppFitArgsFor(args.request, answer->gpus);
    llama.format = args.format;
    return RunLlamaCppFit(args.model, llama, ctx, std::move(answer->resolved));
  }
  ctx.out << RenderFitAnswer(*answer, *format, TerminalLayout(args.wide));
  if (answer->kind == FitAnswer::Kind::kDeviceMap &&
      answer->plan_request.reserve_bytes_per_gpu == 0 && answer->runtime.task == "load") {
    ctx.Note("no memory kept for the CUDA context (about 0.3-1.3 GiB measured); add --reserve 1GiB");
  }
}

}  // namespace

void AddFitCommand(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<FitArgs>();
  FitCommandRequest& r = args->request;
  auto* cmd = app.add_subcommand(
      "fit", "will the model run on these devices: verdict, device map, speed bounds, advice");
  AddModelArgs(*cmd, args->model);
  cmd->add_option("--gpu", r.gpus,
                  "a catalog GPU (rtx4090, \"H100 SXM\", a100-80gb; `memfit gpus`), a size "
                  "(24GiB), or a count (2xH100); repeat for several devices");
  cmd->add_option("--ram", r.ram, "CPU RAM for offloaded blocks (accelerate max_memory cpu)");
  cmd->add_option("--disk", r.disk, "disk for offloaded blocks, or \"unlimited\"");
  cmd->add_option("--reserve", r.reserve, "memory kept free on every GPU (CUDA context)");
  cmd->add_option("--dtype", r.dtype,
                  "weights as loaded: stored, float32, float16, bfloat16, int8, int4");
  cmd->add_option("--task", r.task, "load, inference or train")
      ->check(CLI::IsMember({"load", "inference", "train"}));
  AddContextOption(*cmd, r.context,
                   "tokens per sequence (default: the model's maximum capped at 8192 for "
                   "inference, 2048 for training; GGUF: its training context)");
  AddBatchOption(*cmd, r.batch, "sequences at once (training: per GPU per step)");
  cmd->add_option("--gpus", r.gpu_count,
                  "how many GPUs of the --gpu kind (the same as --gpu NxKIND)");
  cmd->add_option("--strategy", r.strategy,
                  "balanced (transformers device_map=\"auto\") or sequential")
      ->check(CLI::IsMember({"balanced", "sequential"}));
  cmd->add_option("--pcie-gbps", r.pcie_gb_s, "host-to-GPU GB/s for offloaded weights (32)");
  cmd->add_option("--disk-gbps", r.disk_gb_s, "disk read GB/s for disk-offloaded weights (3)");
  cmd->add_flag("--no-advice", r.no_advice, "skip the advice");
  cmd->add_flag("--device-map", r.device_map_only,
                "print only the device_map JSON for from_pretrained(device_map=...)");
  cmd->add_option("--format", args->format, "table, json, csv or markdown")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
  AddWideFlag(*cmd, args->wide);
  cmd->add_option("--method", r.method, "--task train: full, lora or qlora (the advice searches "
                  "from it)");
  // Serving deployments.
  cmd->add_option("--engine", r.engine,
                  "plan a serving deployment: vllm, sglang, transformers (tp_plan) or llama.cpp");
  cmd->add_flag("--search", r.search,
                "find the smallest deployment of --gpu's kind that fits (TP/EP/DP/PP layouts)");
  cmd->add_flag("--all-gpus", r.all_gpus,
                "every catalog GPU at 1, 2, 4 and 8: verdict, max context, max sequences, tok/s");
  cmd->add_option("--max-gpus", r.max_gpus, "--search: most GPUs to try (64)");
  cmd->add_option("--top", r.top, "--search: deployments to print (5)");
  cmd->add_option("--quant", r.quant, "stored (default), none (dequantize), or a scheme to "
                  "re-quantize (fp8, nf4, awq, ...): --engine only");
  cmd->add_option("--kv-dtype", r.kv_dtype, "model, float16, bfloat16, fp8, int8, int4");
  cmd->add_option("--gpu-memory-utilization,--mem-fraction-static", r.gpu_memory_utilization,
                  "vLLM gpu_memory_utilization (0.9) / SGLang mem_fraction_static (0.88)");
  cmd->add_option("--block-size", r.block_size, "vLLM tokens per KV block (16)");
  cmd->add_option("--max-num-seqs", r.max_num_seqs, "vLLM max sequences (256)");
  cmd->add_option("--max-batched-tokens", r.max_batched_tokens,
                  "vLLM max_num_batched_tokens (profile run, 8192)");
  cmd->add_option("--tp", r.tp, "tensor-parallel GPUs (default: all --gpu)");
  cmd->add_option("--dp", r.dp, "data-parallel ranks");
  cmd->add_option("--ep", r.ep, "expert-parallel GPUs (vLLM: tp x dp; SGLang --ep-size)");
  cmd->add_option("--pp", r.pp, "pipeline stages");
  cmd->add_flag("--enable-dp-attention", r.dp_attention, "SGLang DP attention over --dp");
  cmd->callback([args, &ctx] { RunFit(*args, ctx); });
}

}  // namespace memfit::cli
