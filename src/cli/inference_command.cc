// `memfit inference MODEL`: weights, KV cache, prefill activations, CUDA context and the total
// per GPU, for transformers and serving engines (vLLM, SGLang).

#include <algorithm>

#include "cli/command.h"
#include "cli/llamacpp_cli.h"
#include "cli/model_loader.h"
#include "cli/vocabulary.h"
#include "memfit/context_curve.h"
#include "memfit/context_default.h"
#include "memfit/estimate_inference.h"
#include "memfit/gpu.h"
#include "memfit/render_memory.h"
#include "memfit/units.h"

namespace memfit::cli {
namespace {

struct InferenceArgs {
  ModelArgs model;
  uint64_t context = 0;  // 0: memfit/context_default.h
  uint64_t batch = 1;
  uint64_t gpus = 0;     // --gpus: all GPUs of the deployment (tp = gpus / (dp x pp))
  std::string dtype = "bfloat16";
  std::string quant = "stored";
  std::string kv_dtype = "model";
  std::string attn = "sdpa";
  std::string engine = "transformers";
  double gpu_memory_utilization = -1;
  std::string gpu_memory;
  uint64_t block_size = 16;
  uint64_t max_num_seqs = 256;
  uint64_t max_batched_tokens = 8192;
  uint64_t tp = 0;  // 0: from --gpus, else 1
  uint64_t dp = 1;
  uint64_t ep = 1;
  uint64_t pp = 1;
  bool dp_attention = false;
  std::string gpu;
  uint64_t encoder_tokens = 0;
  std::string cuda_context;
  double allocator_reserve = 0.0;
  bool all_logits = false;
  VersionArgs versions;
  bool curve = false;
  std::vector<std::string> curve_gpus;
  std::string format = "table";
};

// The single dispatch point for llama.cpp / GGUF inference: the llama.cpp estimator with this
// command's --context (absent: the same default as `memfit gguf inference`), --batch (parallel
// sequences), --gpu, --gpus and --format; every llama.cpp flag (-ngl, -ctk, -fa, ...) is available
// through `memfit gguf inference`, which gives the same answer for the same flags.
void RunLlamaCpp(const InferenceArgs& args, Context& ctx,
                 std::optional<LoadedInputs> loaded = std::nullopt) {
  LlamaCppCliArgs llama;
  llama.options.context_tokens = args.context;
  llama.ctx_given = args.context > 0;
  llama.options.parallel = static_cast<uint32_t>(std::clamp<uint64_t>(args.batch, 1, UINT32_MAX));
  if (!args.gpu.empty()) llama.gpus.push_back(args.gpu);
  if (args.gpus > 0) llama.options.num_gpus = static_cast<uint32_t>(std::min<uint64_t>(args.gpus, UINT32_MAX));
  llama.format = args.format;
  llama.curve = args.curve;
  llama.curve_gpus = args.curve_gpus;
  RunLlamaCppInference(args.model, llama, ctx, std::move(loaded));
}

void RunInference(const InferenceArgs& args, Context& ctx) {
  auto format = ParseOutputFormat(args.format);
  if (!format) return ctx.Fail(format.error());
  auto engine = ParseEngine(args.engine);
  if (!engine) return ctx.Fail(engine.error());
  // GGUF models go to llama.cpp: named as such here, or found when MODEL is resolved below.
  if (*engine == Engine::kLlamaCpp || args.model.spec.ends_with(".gguf") ||
      !args.model.gguf_file.empty()) {
    return RunLlamaCpp(args, ctx);
  }
  InferenceOptions o;
  o.batch = args.batch;
  const uint64_t replicas = std::max<uint64_t>(1, args.dp) * std::max<uint64_t>(1, args.pp);
  if (args.gpus > 0 && args.tp == 0) {
    if (args.gpus % replicas != 0) {
      return ctx.Fail(MakeError("--gpus {}: not a multiple of --dp x --pp ({})", args.gpus, replicas));
    }
    o.tp = args.gpus / replicas;
  } else {
    o.tp = args.tp ? args.tp : 1;
  }
  o.dp = args.dp;
  o.ep = args.ep;
  o.pp = args.pp;
  o.dp_attention = args.dp_attention;
  o.engine = *engine;
  o.block_size = args.block_size;
  o.max_num_seqs = args.max_num_seqs;
  o.max_batched_tokens = args.max_batched_tokens;
  o.encoder_tokens = args.encoder_tokens;
  o.last_token_logits = !args.all_logits;
  auto versions = ToRuntimeVersions(args.versions);
  if (!versions) return ctx.Fail(versions.error());
  o.versions = *versions;
  o.overhead.allocator_reserve_fraction = args.allocator_reserve;
  auto dtype = ParseDtypeName(args.dtype);
  if (!dtype) return ctx.Fail(Wrap(dtype.error(), "--dtype"));
  o.dtype = *dtype;
  auto quant = ParseQuant(args.quant);
  if (!quant) return ctx.Fail(quant.error());
  o.quant = *quant;
  auto kv = ParseKvDtype(args.kv_dtype);
  if (!kv) return ctx.Fail(kv.error());
  o.kv_dtype = *kv;
  auto attn = ParseAttnImpl(args.attn);
  if (!attn) return ctx.Fail(attn.error());
  o.attn = *attn;
  if (args.gpu_memory_utilization >= 0) {
    if (args.gpu_memory_utilization > 1) {
      return ctx.Fail(MakeError("--gpu-memory-utilization {}: expected a fraction in (0, 1]",
                                args.gpu_memory_utilization));
    }
    o.gpu_memory_utilization = args.gpu_memory_utilization;
  } else if (o.engine == Engine::kSglang) {
    o.gpu_memory_utilization = 0.88;  // SGLang mem_fraction_static on large GPUs
  }
  if (!args.gpu.empty()) {
    auto gpu = FindGpu(args.gpu);
    if (!gpu) return ctx.Fail(Wrap(gpu.error(), "--gpu"));
    o.gpu_memory_bytes = MemoryBytes(**gpu);
    o.compute_capability = ComputeCapability(**gpu);
  }
  if (!args.gpu_memory.empty()) {
    auto bytes = ParseByteSize(args.gpu_memory);
    if (!bytes) return ctx.Fail(Wrap(bytes.error(), "--gpu-memory"));
    o.gpu_memory_bytes = *bytes;
  }
  if (!args.cuda_context.empty()) {
    auto bytes = ParseByteSize(args.cuda_context);
    if (!bytes) return ctx.Fail(Wrap(bytes.error(), "--cuda-context"));
    o.overhead.cuda_context_bytes = *bytes;
  }
  auto loaded = LoadModelInputsWithOrigin(args.model);
  if (!loaded) return ctx.Fail(loaded.error());
  if (!loaded->inputs.gguf.empty()) return RunLlamaCpp(args, ctx, std::move(*loaded));
  auto model = DescribeModel(loaded->inputs);
  if (!model) return ctx.Fail(model.error());
  const ContextChoice context =
      ChooseContext(args.context, model->hp.max_position_embeddings, ContextUse::kServe);
  o.context_tokens = context.tokens;
  auto e = EstimateInference(*model, o);
  if (!e) return ctx.Fail(e.error());
  if (!context.assumption.empty()) e->assumptions.push_back(context.assumption);
  if (args.gpus > 0 && e->gpus != args.gpus) {
    return ctx.Fail(MakeError("--gpus {}: the layout uses {} GPUs (--tp {} --dp {} --pp {})",
                              args.gpus, e->gpus, o.tp, o.dp, o.pp));
  }
  if (!args.curve) {
    if (!args.curve_gpus.empty()) return ctx.Fail(MakeError("--curve-gpu needs --curve"));
    ctx.out << RenderInference(*model, o, *e, *format);
    return;
  }
  // The curve's GPUs: --curve-gpu, else the deployment's --gpu.
  auto gpus = CurveGpus(!args.curve_gpus.empty() ? args.curve_gpus
                        : args.gpu.empty()       ? std::vector<std::string>{}
                                                 : std::vector{args.gpu});
  if (!gpus) return ctx.Fail(gpus.error());
  auto curve = EstimateContextCurve(*model, o, *gpus);
  if (!curve) return ctx.Fail(curve.error());
  ctx.out << RenderInference(*model, o, *e, *format, &*curve);
}

}  // namespace

void AddInferenceCommand(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<InferenceArgs>();
  auto* cmd = app.add_subcommand(
      "inference", "memory to serve the model: weights, KV cache, prefill activations, CUDA "
                   "context, per GPU (transformers, vLLM, SGLang)");
  AddModelArgs(*cmd, a->model);
  AddContextOption(*cmd, a->context,
                   "tokens per sequence, prompt + generated (default: the model's maximum capped "
                   "at 8192; GGUF: its training context, as llama.cpp)");
  AddBatchOption(*cmd, a->batch, "sequences at once")->capture_default_str();
  cmd->add_option("--gpus", a->gpus, "GPUs of the deployment: --tp is --gpus / (--dp x --pp)");
  cmd->add_option("--dtype", a->dtype, "weights/activations dtype (float16, bfloat16, float32)")->capture_default_str();
  cmd->add_option("--quant", a->quant, "stored (the checkpoint's own quantization), none "
                  "(dequantized to --dtype), or re-quantize: bnb-int8, nf4, nf4-dq, fp4, fp4-dq, gptq, gptq-8bit, "
                  "awq, fp8, fp8-block, mxfp4, hqq, int8, int4 (plain)")->capture_default_str();
  cmd->add_option("--kv-dtype", a->kv_dtype, "model, float16, bfloat16, fp8, int8, int4")->capture_default_str();
  cmd->add_option("--attn", a->attn, "eager, sdpa or flash")->capture_default_str();
  cmd->add_option("--engine", a->engine, "transformers, vllm, sglang or llama.cpp")->capture_default_str();
  cmd->add_option("--gpu-memory", a->gpu_memory, "memory of one GPU (e.g. 80GiB): vLLM/SGLang KV blocks");
  cmd->add_option("--gpu-memory-utilization,--mem-fraction-static", a->gpu_memory_utilization,
                  "vLLM gpu_memory_utilization (0.9) / SGLang mem_fraction_static (0.88)");
  cmd->add_option("--block-size", a->block_size, "vLLM tokens per KV block")->capture_default_str();
  cmd->add_option("--max-num-seqs", a->max_num_seqs, "vLLM max sequences")->capture_default_str();
  cmd->add_option("--max-batched-tokens", a->max_batched_tokens,
                  "vLLM max_num_batched_tokens (profile run)")->capture_default_str();
  cmd->add_option("--tp", a->tp, "tensor-parallel GPUs (default 1, or from --gpus)");
  cmd->add_option("--dp", a->dp, "data-parallel ranks (vLLM --data-parallel-size; SGLang --dp)")
      ->capture_default_str();
  cmd->add_option("--ep", a->ep, "expert-parallel GPUs: vLLM tp x dp (--enable-expert-parallel), "
                  "SGLang --ep-size")->capture_default_str();
  cmd->add_option("--pp", a->pp, "pipeline stages (--pipeline-parallel-size)")->capture_default_str();
  cmd->add_flag("--enable-dp-attention", a->dp_attention,
                "SGLang: attention data parallel over --dp inside --tp");
  cmd->add_option("--gpu", a->gpu, "a catalog GPU (h200, a100, rtx4090): its memory and compute "
                  "capability (whether FP8/MXFP4/NVFP4 run as stored)");
  cmd->add_option("--encoder-tokens", a->encoder_tokens, "encoder length for cross-attention caches");
  cmd->add_option("--cuda-context", a->cuda_context, "CUDA context per GPU (default 1343MiB)");
  cmd->add_option("--allocator-reserve", a->allocator_reserve,
                  "allocator cache as a fraction of the allocated peak (default 0)");
  cmd->add_flag("--all-logits", a->all_logits,
                "logits for every prompt token (transformers < 4.45) instead of the last");
  AddVersionOptions(*cmd, a->versions);
  AddCurveOptions(*cmd, a->curve, a->curve_gpus);
  cmd->add_option("--format", a->format, "table, json, csv or markdown")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
  cmd->callback([a, &ctx] { RunInference(*a, ctx); });
}

}  // namespace memfit::cli
