// `memfit inference MODEL`: weights, KV cache, prefill activations, CUDA context and the total
// per GPU, for transformers and serving engines (vLLM, SGLang).

#include <algorithm>
#include <sstream>

#include "cli/command.h"
#include "cli/llamacpp_cli.h"
#include "cli/model_loader.h"
#include "cli/request_flags.h"
#include "cli/terminal.h"
#include "cli/vocabulary.h"
#include "memfit/context_curve.h"
#include "memfit/context_default.h"
#include "memfit/estimate_inference.h"
#include "memfit/gpu.h"
#include "memfit/render_memory.h"
#include "memfit/requests.h"
#include "memfit/units.h"

namespace memfit::cli {
namespace {

// The request's fields are the flags' variables (memfit/requests.h states the defaults);
// MODEL's flags and the library versions are copied into it when the command runs.
struct InferenceArgs {
  ModelArgs model;
  InferenceRequest request;
  VersionArgs versions;
  std::string format = "table";
  bool wide = false;
};

// The single dispatch point for llama.cpp / GGUF inference: the llama.cpp estimator with this
// command's --context (absent: the same default as `memfit gguf inference`), --batch (parallel
// sequences), --gpu, --gpus and --format; every llama.cpp flag (-ngl, -ctk, -fa, ...) is available
// through `memfit gguf inference`, which gives the same answer for the same flags.
void RunLlamaCpp(const InferenceArgs& args, Context& ctx,
                 std::optional<LoadedInputs> loaded = std::nullopt) {
  LlamaCppCliArgs llama = LlamaCppArgsFor(args.request);
  llama.format = args.format;
  RunLlamaCppInference(args.model, llama, ctx, std::move(loaded));
}

void RunInference(InferenceArgs& args, Context& ctx) {
  auto format = ParseOutputFormat(args.format);
  if (!format) return ctx.Fail(format.error());
  args.request.torch_version = args.versions.torch;
  args.request.transformers_version = args.versions.transformers;
  auto answer = WithQuery(args.model, [&](ModelQuery query) {
    InferenceRequest request = args.request;
    request.model = std::move(query);
    return RunInferenceRequest(request);
  });
  if (!answer) return ctx.Fail(answer.error());
  if (answer->llamacpp) return RunLlamaCpp(args, ctx, std::move(answer->resolved));
  ctx.out << RenderInferenceAnswer(*answer, *format, TerminalLayout(args.wide));
}

// The command and its flags, bound to an InferenceArgs; the caller sets the callback.
std::shared_ptr<InferenceArgs> AddInferenceFlags(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<InferenceArgs>();
  InferenceRequest& r = a->request;
  auto* cmd = app.add_subcommand(
      "inference", "memory to serve the model: weights, KV cache, prefill activations, CUDA "
                   "context, per GPU (transformers, vLLM, SGLang)");
  AddModelArgs(*cmd, a->model);
  AddContextOption(*cmd, r.context,
                   "tokens per sequence, prompt + generated (default: the model's maximum capped "
                   "at 8192; GGUF: its training context, as llama.cpp)");
  AddBatchOption(*cmd, r.batch, "sequences at once")->capture_default_str();
  cmd->add_option("--gpus", r.gpus, "GPUs of the deployment: --tp is --gpus / (--dp x --pp)");
  cmd->add_option("--dtype", r.dtype, "weights/activations dtype (float16, bfloat16, float32)")->capture_default_str();
  cmd->add_option("--quant", r.quant, "stored (the checkpoint's own quantization), none "
                  "(dequantized to --dtype), or re-quantize: bnb-int8, nf4, nf4-dq, fp4, fp4-dq, gptq, gptq-8bit, "
                  "awq, fp8, fp8-block, mxfp4, hqq, int8, int4 (plain)")->capture_default_str();
  cmd->add_option("--kv-dtype", r.kv_dtype, "model, float16, bfloat16, fp8, int8, int4")->capture_default_str();
  cmd->add_option("--attn", r.attn, "eager, sdpa or flash")->capture_default_str();
  cmd->add_option("--engine", r.engine, "transformers, vllm, sglang or llama.cpp")->capture_default_str();
  cmd->add_option("--gpu-memory", r.gpu_memory, "memory of one GPU (e.g. 80GiB): vLLM/SGLang KV blocks");
  cmd->add_option("--gpu-memory-utilization,--mem-fraction-static", r.gpu_memory_utilization,
                  "vLLM gpu_memory_utilization (0.9) / SGLang mem_fraction_static (0.88)");
  cmd->add_option("--block-size", r.block_size, "vLLM tokens per KV block")->capture_default_str();
  cmd->add_option("--max-num-seqs", r.max_num_seqs, "vLLM max sequences")->capture_default_str();
  cmd->add_option("--max-batched-tokens", r.max_batched_tokens,
                  "vLLM max_num_batched_tokens (profile run)")->capture_default_str();
  cmd->add_option("--tp", r.tp, "tensor-parallel GPUs (default 1, or from --gpus)");
  cmd->add_option("--dp", r.dp, "data-parallel ranks (vLLM --data-parallel-size; SGLang --dp)")
      ->capture_default_str();
  cmd->add_option("--ep", r.ep, "expert-parallel GPUs: vLLM tp x dp (--enable-expert-parallel), "
                  "SGLang --ep-size")->capture_default_str();
  cmd->add_option("--pp", r.pp, "pipeline stages (--pipeline-parallel-size)")->capture_default_str();
  cmd->add_flag("--enable-dp-attention", r.dp_attention,
                "SGLang: attention data parallel over --dp inside --tp");
  cmd->add_option("--gpu", r.gpu, "a catalog GPU (h200, a100, rtx4090): its memory and compute "
                  "capability (whether FP8/MXFP4/NVFP4 run as stored)");
  cmd->add_option("--encoder-tokens", r.encoder_tokens, "encoder length for cross-attention caches");
  cmd->add_option("--decoder-tokens", r.decoder_tokens,
                  "encoder-decoder models whose prompt is the encoder's (T5): tokens in the "
                  "decoder's self-attention cache, the start token and those generated "
                  "(default: --context)");
  cmd->add_option("--cuda-context", r.cuda_context, "CUDA context per GPU (default 1343MiB)");
  cmd->add_option("--allocator-reserve", r.allocator_reserve,
                  "allocator cache as a fraction of the allocated peak (default 0)");
  cmd->add_flag("--all-logits", r.all_logits,
                "logits for every prompt token (transformers < 4.45) instead of the last");
  AddVersionOptions(*cmd, a->versions);
  AddMambaScanOption(*cmd, r.mamba_scan);
  AddCurveOptions(*cmd, r.curve, r.curve_gpus);
  cmd->add_option("--format", a->format, "table, json, csv or markdown")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
  AddWideFlag(*cmd, a->wide);
  (void)ctx;
  return a;
}

}  // namespace

void AddInferenceCommand(CLI::App& app, Context& ctx) {
  auto a = AddInferenceFlags(app, ctx);
  app.get_subcommand("inference")->callback([a, &ctx] { RunInference(*a, ctx); });
}

Result<InferenceRequest> InferenceRequestFromFlags(const std::vector<std::string>& args) {
  CLI::App app;
  std::ostringstream out, err;
  Context ctx{out, err};
  auto a = AddInferenceFlags(app, ctx);
  MEMFIT_RETURN_IF_ERROR(ParseFlags(app, "inference", args));
  a->request.model = QueryFor(a->model, std::make_shared<bool>(false));
  a->request.torch_version = a->versions.torch;
  a->request.transformers_version = a->versions.transformers;
  return a->request;
}

}  // namespace memfit::cli
