// `memfit fit MODEL --gpu ...`: will it run here, with which device map, how fast at most, and
// what to change so it does.

#include <limits>

#include "cli/command.h"
#include "cli/llamacpp_cli.h"
#include "cli/model_loader.h"
#include "memfit/architecture.h"
#include "memfit/catalog.h"
#include "memfit/fit.h"
#include "memfit/hf_config.h"
#include "memfit/json.h"
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
  double pcie_gb_s = 32;
  double disk_gb_s = 3;
  bool no_advice = false;
  bool device_map_only = false;
  std::string format = "table";
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

void RunFit(const FitArgs& args, Context& ctx) {
  auto format = ParseOutputFormat(args.format);
  if (!format) return ctx.Fail(format.error());
  // A GGUF model named as such; one found when MODEL is resolved is routed below.
  if (args.model.spec.ends_with(".gguf") || !args.model.gguf_file.empty()) return RunGgufFit(args, ctx);
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
  auto runtime = RuntimeForTask(
      *model, TaskSettings{.task = args.task, .context_tokens = args.context_tokens,
                           .batch = args.batch});
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
                  "(24GiB), or a count (2xH100); repeat for several devices")
      ->required();
  cmd->add_option("--ram", args->ram, "CPU RAM for offloaded blocks (accelerate max_memory cpu)");
  cmd->add_option("--disk", args->disk, "disk for offloaded blocks, or \"unlimited\"");
  cmd->add_option("--reserve", args->reserve, "memory kept free on every GPU (CUDA context)");
  cmd->add_option("--dtype", args->dtype,
                  "weights as loaded: stored, float32, float16, bfloat16, int8, int4");
  cmd->add_option("--task", args->task, "load, inference or train")
      ->check(CLI::IsMember({"load", "inference", "train"}));
  cmd->add_option("--context", args->context_tokens, "context tokens (default: the model's)");
  cmd->add_option("--batch", args->batch, "sequences per batch");
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
  cmd->callback([args, &ctx] { RunFit(*args, ctx); });
}

}  // namespace memfit::cli
