// `memfit fit MODEL --gpu ...`: will it run here, with which device map, how fast at most, and
// what to change so it does.

#include <limits>

#include "cli/command.h"
#include "cli/llamacpp_cli.h"
#include "cli/model_loader.h"
#include "plan/device_map_json.h"
#include "cli/vocabulary.h"
#include "memfit/context_default.h"
#include "memfit/architecture.h"
#include "memfit/catalog.h"
#include "memfit/deploy.h"
#include "memfit/fit.h"
#include "memfit/hf_config.h"
#include "memfit/json.h"
#include "memfit/render_deploy.h"
#include "memfit/render_fit.h"
#include "memfit/units.h"

namespace memfit::cli {
namespace {

struct FitArgs {
  ModelArgs model;
  std::vector<std::string> gpus;
  std::string ram;
  std::string disk;
  std::string reserve;
  std::string dtype = "stored";
  std::string task = "load";
  std::string strategy = "balanced";
  uint64_t context_tokens = 0;
  uint64_t batch = 1;
  uint64_t gpu_count = 0;  // --gpus N: N of the one --gpu kind
  double pcie_gb_s = 32;
  double disk_gb_s = 3;
  bool no_advice = false;
  bool device_map_only = false;
  std::string format = "table";
  // Serving deployments (--engine, --search, --all-gpus): docs/estimates.md, "Deployment planning".
  std::string engine;
  bool search = false;
  bool all_gpus = false;
  uint64_t max_gpus = 64;
  uint64_t top = 5;
  std::string quant = "stored";
  std::string kv_dtype = "model";
  double gpu_memory_utilization = -1;
  uint64_t block_size = 16;
  uint64_t max_num_seqs = 256;
  uint64_t max_batched_tokens = 8192;
  uint64_t tp = 0;
  uint64_t dp = 1;
  uint64_t ep = 1;
  uint64_t pp = 1;
  bool dp_attention = false;
};

Result<uint64_t> Size(const std::string& flag, const std::string& text) {
  if (text == "unlimited") return std::numeric_limits<uint64_t>::max();
  auto bytes = ParseByteSize(text);
  if (!bytes) return Wrap(bytes.error(), flag);
  return *bytes;
}

// The catalog's smaller sibling of this model, built at its config dtype.
std::optional<Model> Sibling(const Model& model) {
  const CatalogEntry* entry = FindCatalogEntry(model.name);
  if (!entry || entry->smaller_sibling.empty()) return std::nullopt;
  const CatalogEntry* sibling = FindCatalogEntry(entry->smaller_sibling);
  if (!sibling) return std::nullopt;
  auto config = HfConfig::Parse(sibling->config_json, std::string(sibling->id));
  if (!config) return std::nullopt;
  auto built = BuildFromConfig(*config);
  if (!built) return std::nullopt;
  built->name = std::string(sibling->id);
  return std::move(*built);
}

// GGUF models are planned the way llama.cpp --fit does (layers, context, n-cpu-moe).
void RunGgufFit(const FitArgs& args, Context& ctx, std::optional<LoadedInputs> loaded = std::nullopt) {
  LlamaCppCliArgs llama;
  llama.gpus = args.gpus;
  llama.ram = args.ram;
  llama.format = args.format;
  if (args.context_tokens) {
    llama.options.context_tokens = args.context_tokens;
    llama.ctx_given = true;
  }
  RunLlamaCppFit(args.model, llama, ctx, std::move(loaded));
}

// `fit --engine vllm|sglang|transformers` (and --all-gpus): the serving estimators over GPUs and
// parallel layouts instead of accelerate's device map.
void RunDeploy(const FitArgs& args, Context& ctx, OutputFormat format) {
  auto engine = ParseEngine(args.engine.empty() ? "vllm" : args.engine);
  if (!engine) return ctx.Fail(engine.error());
  if (*engine == Engine::kLlamaCpp) {
    return ctx.Fail(MakeError("fit --engine llama.cpp: give a GGUF model (MODEL.gguf or "
                              "--gguf-file); llama.cpp plans it with its --fit order"));
  }
  InferenceOptions o;
  o.engine = *engine;
  o.batch = args.batch == 0 ? 1 : args.batch;
  o.block_size = args.block_size;
  o.max_num_seqs = args.max_num_seqs;
  o.max_batched_tokens = args.max_batched_tokens;
  auto quant = ParseQuant(args.quant);
  if (!quant) return ctx.Fail(quant.error());
  o.quant = *quant;
  auto kv = ParseKvDtype(args.kv_dtype);
  if (!kv) return ctx.Fail(kv.error());
  o.kv_dtype = *kv;
  if (args.gpu_memory_utilization > 1) {
    return ctx.Fail(MakeError("--gpu-memory-utilization {}: expected a fraction in (0, 1]",
                              args.gpu_memory_utilization));
  }
  o.gpu_memory_utilization = args.gpu_memory_utilization > 0 ? args.gpu_memory_utilization
                             : o.engine == Engine::kSglang ? 0.88 : 0.9;
  // One GPU kind: --search and a fixed deployment need it; --all-gpus takes the catalog.
  std::vector<DeviceSpec> devices;
  for (const auto& g : args.gpus) {
    auto status = ParseDeviceArg(g, devices);
    if (!status) return ctx.Fail(status.error());
  }
  if (!args.all_gpus) {
    if (devices.empty()) return ctx.Fail(MakeError("fit --engine: give --gpu (or --all-gpus)"));
    for (const auto& d : devices) {
      if (d.memory_bytes != devices.front().memory_bytes || d.gpu != devices.front().gpu) {
        return ctx.Fail(MakeError("fit --engine: serving engines need one GPU kind; got {} and {}",
                                  devices.front().label, d.label));
      }
    }
  }
  auto loaded = LoadModelInputsWithOrigin(args.model);
  if (!loaded) return ctx.Fail(loaded.error());
  if (!loaded->inputs.gguf.empty()) {
    return ctx.Fail(MakeError("fit --engine {}: a GGUF model is planned by llama.cpp's --fit "
                              "(drop --engine)", EngineName(o.engine)));
  }
  auto model = DescribeModel(loaded->inputs);
  if (!model) return ctx.Fail(model.error());
  // --dtype: "stored" keeps the config's 16-bit dtype for what is not quantized.
  o.dtype = model->config_dtype && (*model->config_dtype == Dtype::kF16 ||
                                    *model->config_dtype == Dtype::kBF16)
                ? *model->config_dtype : Dtype::kBF16;
  if (args.dtype != "stored" && args.dtype != "auto") {
    auto d = ParseDtypeName(args.dtype);
    if (!d) return ctx.Fail(Wrap(d.error(), "--dtype"));
    o.dtype = *d;
  }
  const ContextChoice context =
      ChooseContext(args.context_tokens, model->hp.max_position_embeddings, ContextUse::kServe);
  o.context_tokens = context.tokens;
  if (!context.assumption.empty()) model->assumptions.push_back(context.assumption);
  DeployPlanner planner(*model, o);
  std::vector<DeploymentRow> rows;
  std::string mode;
  if (args.all_gpus) {
    const uint64_t counts[] = {1, 2, 4, 8};
    rows = planner.Grid(counts);
    mode = "grid";
  } else {
    DeployGpu gpu{.name = devices.front().label, .memory_bytes = devices.front().memory_bytes,
                  .spec = devices.front().gpu};
    if (args.search) {
      DeployRequest request{.inference = o, .max_gpus = args.max_gpus,
                            .top = static_cast<size_t>(args.top)};
      rows = planner.Search(gpu, request);
      mode = "search";
    } else {
      const uint64_t n = devices.size();
      DeployLayout layout{.tp = args.tp ? args.tp : n / std::max<uint64_t>(1, args.dp * args.pp),
                          .dp = args.dp, .ep = args.ep, .pp = args.pp,
                          .dp_attention = args.dp_attention};
      if (args.dp_attention && !args.tp) layout.tp = n / std::max<uint64_t>(1, args.pp);
      rows.push_back(planner.Evaluate(gpu, n, layout));
      mode = "deployment";
    }
  }
  ctx.out << RenderDeploy(DeployReportInput{.model = &*model, .options = &o, .mode = mode,
                                            .rows = &rows},
                          format);
}

// --gpus N with one --gpu KIND: N of that kind, as --gpu NxKIND says it.
Status ApplyGpuCount(FitArgs& a) {
  if (a.gpu_count == 0) return Ok{};
  if (a.gpus.size() != 1) {
    return MakeError("--gpus {}: give exactly one --gpu kind to count (got {})", a.gpu_count,
                     a.gpus.size());
  }
  a.gpus = {fmt::format("{}x{}", a.gpu_count, a.gpus.front())};
  return Ok{};
}

void RunFit(const FitArgs& args, Context& ctx) {
  auto format = ParseOutputFormat(args.format);
  if (!format) return ctx.Fail(format.error());
  // A GGUF model named as such; one found when MODEL is resolved is routed below.
  if (args.model.spec.ends_with(".gguf") || !args.model.gguf_file.empty()) return RunGgufFit(args, ctx);
  if (!args.engine.empty() || args.search || args.all_gpus) {
    if (args.engine == "llama.cpp" || args.engine == "llamacpp") return RunGgufFit(args, ctx);
    if (!args.engine.empty() && args.engine != "transformers" && args.task == "train") {
      return ctx.Fail(MakeError("fit --engine {}: serving engines plan inference (--task "
                                "inference), not training", args.engine));
    }
    return RunDeploy(args, ctx, *format);
  }
  // The device-map fit (accelerate's placement): the serving engines' own settings would be
  // silently ignored here, so they are refused with the way to use them.
  if (args.quant != "stored") {
    return ctx.Fail(MakeError("fit --quant {}: re-quantization is planned with --engine; the "
                              "device-map fit loads --dtype int8 or int4 (bitsandbytes)",
                              args.quant));
  }
  auto kv_dtype = ParseKvDtype(args.kv_dtype);
  if (!kv_dtype) return ctx.Fail(kv_dtype.error());
  if (*kv_dtype != KvDtype::kModel && args.task != "inference") {
    return ctx.Fail(MakeError("fit --kv-dtype {}: a KV cache is part of --task inference only",
                              args.kv_dtype));
  }
  FitRequest request;
  for (const auto& g : args.gpus) {
    auto status = ParseDeviceArg(g, request.gpus);
    if (!status) return ctx.Fail(status.error());
  }
  if (request.gpus.empty()) return ctx.Fail(MakeError("fit: give at least one --gpu"));
  if (!args.ram.empty()) {
    auto bytes = Size("--ram", args.ram);
    if (!bytes) return ctx.Fail(bytes.error());
    request.ram_bytes = *bytes;
  }
  if (!args.disk.empty()) {
    auto bytes = Size("--disk", args.disk);
    if (!bytes) return ctx.Fail(bytes.error());
    request.disk_bytes = *bytes;
  }
  if (!args.reserve.empty()) {
    auto bytes = Size("--reserve", args.reserve);
    if (!bytes) return ctx.Fail(bytes.error());
    request.reserve_bytes_per_gpu = *bytes;
  }
  auto dtype = ParseLoadDtype(args.dtype);
  if (!dtype) return ctx.Fail(Wrap(dtype.error(), "--dtype"));
  request.dtype = *dtype;
  request.strategy = args.strategy == "sequential" ? DeviceMapStrategy::kSequential
                                                   : DeviceMapStrategy::kBalanced;
  if (!(args.pcie_gb_s > 0) || !(args.disk_gb_s > 0)) {
    return ctx.Fail(MakeError("--pcie-gbps and --disk-gbps must be positive"));
  }
  request.pcie_gb_s = args.pcie_gb_s;
  request.disk_gb_s = args.disk_gb_s;
  request.advise = !args.no_advice;

  auto loaded = LoadModelInputsWithOrigin(args.model);
  if (!loaded) return ctx.Fail(loaded.error());
  if (!loaded->inputs.gguf.empty()) return RunGgufFit(args, ctx, std::move(*loaded));
  auto model = DescribeModel(loaded->inputs);
  if (!model) return ctx.Fail(model.error());
  // The context is chosen here, once, with its assumption line; the runtime takes it as given.
  const ContextChoice context =
      ChooseContext(args.context_tokens, model->hp.max_position_embeddings,
                    args.task == "train" ? ContextUse::kTrain : ContextUse::kServe);
  if (args.task != "load" && !context.assumption.empty()) {
    model->assumptions.push_back(context.assumption);
  }
  auto runtime = RuntimeForTask(
      *model, TaskSettings{.task = args.task, .context_tokens = context.tokens,
                           .batch = args.batch, .kv_dtype = *kv_dtype});
  if (!runtime) return ctx.Fail(runtime.error());
  std::optional<Model> sibling = Sibling(*model);
  if (sibling) request.smaller_sibling = &*sibling;
  auto plan = PlanFit(*model, request, *runtime);
  if (!plan) return ctx.Fail(plan.error());
  if (args.device_map_only) {
    ctx.out << DumpJson(DeviceMapJson(plan->map)) << "\n";
  } else {
    ctx.out << RenderFitPlan(
        FitReportInput{.model = &*model, .request = &request, .runtime = &*runtime,
                       .plan = &*plan},
        *format);
  }
  if (request.reserve_bytes_per_gpu == 0 && runtime->task == "load") {
    ctx.Note("no memory kept for the CUDA context (about 0.3-1.3 GiB measured); add --reserve 1GiB");
  }
}

}  // namespace

void AddFitCommand(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<FitArgs>();
  auto* cmd = app.add_subcommand(
      "fit", "will the model run on these devices: verdict, device map, speed bounds, advice");
  AddModelArgs(*cmd, args->model);
  cmd->add_option("--gpu", args->gpus,
                  "a catalog GPU (rtx4090, \"H100 SXM\", a100-80gb; `memfit gpus`), a size "
                  "(24GiB), or a count (2xH100); repeat for several devices");
  cmd->add_option("--ram", args->ram, "CPU RAM for offloaded blocks (accelerate max_memory cpu)");
  cmd->add_option("--disk", args->disk, "disk for offloaded blocks, or \"unlimited\"");
  cmd->add_option("--reserve", args->reserve, "memory kept free on every GPU (CUDA context)");
  cmd->add_option("--dtype", args->dtype,
                  "weights as loaded: stored, float32, float16, bfloat16, int8, int4");
  cmd->add_option("--task", args->task, "load, inference or train")
      ->check(CLI::IsMember({"load", "inference", "train"}));
  AddContextOption(*cmd, args->context_tokens,
                   "tokens per sequence (default: the model's maximum capped at 8192 for "
                   "inference, 2048 for training; GGUF: its training context)");
  AddBatchOption(*cmd, args->batch, "sequences at once (training: per GPU per step)");
  cmd->add_option("--gpus", args->gpu_count,
                  "how many GPUs of the --gpu kind (the same as --gpu NxKIND)");
  cmd->add_option("--strategy", args->strategy,
                  "balanced (transformers device_map=\"auto\") or sequential")
      ->check(CLI::IsMember({"balanced", "sequential"}));
  cmd->add_option("--pcie-gbps", args->pcie_gb_s, "host-to-GPU GB/s for offloaded weights (32)");
  cmd->add_option("--disk-gbps", args->disk_gb_s, "disk read GB/s for disk-offloaded weights (3)");
  cmd->add_flag("--no-advice", args->no_advice, "skip the advice");
  cmd->add_flag("--device-map", args->device_map_only,
                "print only the device_map JSON for from_pretrained(device_map=...)");
  cmd->add_option("--format", args->format, "table, json, csv or markdown")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
  // Serving deployments.
  cmd->add_option("--engine", args->engine,
                  "plan a serving deployment: vllm, sglang, transformers (tp_plan) or llama.cpp");
  cmd->add_flag("--search", args->search,
                "find the smallest deployment of --gpu's kind that fits (TP/EP/DP/PP layouts)");
  cmd->add_flag("--all-gpus", args->all_gpus,
                "every catalog GPU at 1, 2, 4 and 8: verdict, max context, max sequences, tok/s");
  cmd->add_option("--max-gpus", args->max_gpus, "--search: most GPUs to try (64)");
  cmd->add_option("--top", args->top, "--search: deployments to print (5)");
  cmd->add_option("--quant", args->quant, "stored (default), none (dequantize), or a scheme to "
                  "re-quantize (fp8, nf4, awq, ...): --engine only");
  cmd->add_option("--kv-dtype", args->kv_dtype, "model, float16, bfloat16, fp8, int8, int4");
  cmd->add_option("--gpu-memory-utilization,--mem-fraction-static", args->gpu_memory_utilization,
                  "vLLM gpu_memory_utilization (0.9) / SGLang mem_fraction_static (0.88)");
  cmd->add_option("--block-size", args->block_size, "vLLM tokens per KV block (16)");
  cmd->add_option("--max-num-seqs", args->max_num_seqs, "vLLM max sequences (256)");
  cmd->add_option("--max-batched-tokens", args->max_batched_tokens,
                  "vLLM max_num_batched_tokens (profile run, 8192)");
  cmd->add_option("--tp", args->tp, "tensor-parallel GPUs (default: all --gpu)");
  cmd->add_option("--dp", args->dp, "data-parallel ranks");
  cmd->add_option("--ep", args->ep, "expert-parallel GPUs (vLLM: tp x dp; SGLang --ep-size)");
  cmd->add_option("--pp", args->pp, "pipeline stages");
  cmd->add_flag("--enable-dp-attention", args->dp_attention, "SGLang DP attention over --dp");
  cmd->callback([args, &ctx] {
    FitArgs a = *args;
    if (auto counted = ApplyGpuCount(a); !counted) return ctx.Fail(counted.error());
    RunFit(a, ctx);
  });
}

}  // namespace memfit::cli
