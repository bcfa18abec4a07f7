// `memfit estimate-memory MODEL`: load memory per dtype, largest block, training with AdamW;
// `--accelerate` reproduces `accelerate estimate-memory` exactly.

#include "cli/command.h"
#include "cli/model_loader.h"
#include "memfit/estimate_load.h"
#include "memfit/render.h"

namespace memfit::cli {
namespace {

struct EstimateArgs {
  ModelArgs model;
  std::vector<std::string> dtypes;
  bool accelerate = false;
  std::string library_name;
  bool trust_remote_code = false;
  std::string format = "table";
};

// The library accelerate would build the model with: --library_name, else the config's kind
// (timm's config.json names an "architecture" and no "model_type"), as the Hub's library_name.
Result<std::string> AccelerateLibrary(const EstimateArgs& args, const ModelInputs& inputs) {
  const bool timm_config = inputs.config && inputs.config->model_type().empty() &&
                           inputs.config->Has("architecture");
  const std::string detected = timm_config ? "timm" : "transformers";
  if (args.library_name.empty() || !inputs.config) return detected;
  if (args.library_name != detected) {
    return MakeError("{}: --library_name {}: the config is a {} config (accelerate would fail to "
                     "build it with {})",
                     args.model.spec, args.library_name, detected, args.library_name);
  }
  return args.library_name;
}

void RunAccelerate(const EstimateArgs& args, OutputFormat format, Context& ctx) {
  auto inputs = LoadModelInputs(args.model);
  if (!inputs) return ctx.Fail(inputs.error());
  auto library = AccelerateLibrary(args, *inputs);
  if (!library) return ctx.Fail(library.error());
  DescribeOptions options{.build = {.buffers = BufferConvention::kTransformers442},
                          .prefer_config = true};
  options.build.ignore_quantization = true;  // accelerate builds the unquantized model
  if (inputs->config) {
    for (const auto& key : inputs->config->auto_map_keys()) {
      if (key.starts_with("AutoModelFor")) {
        options.build.head_class = key;
        break;
      }
    }
  }
  auto model = DescribeModel(*inputs, options);
  if (!model) return ctx.Fail(model.error());
  AccelerateOptions acc;
  if (!args.dtypes.empty()) acc.dtypes = args.dtypes;
  auto estimate = EstimateAccelerate(*model, acc);
  if (!estimate) return ctx.Fail(estimate.error());
  if (format == OutputFormat::kTable) {
    ctx.out << "Loading pretrained config for `" << args.model.spec << "` from `" << *library
            << "`...\n";
  }
  ctx.out << RenderAccelerate(args.model.spec, *estimate, format);
  if (!inputs->config) {
    ctx.Note("no config.json: the accelerate view was computed from the safetensors headers");
  }
}

void RunEstimate(const EstimateArgs& args, Context& ctx) {
  auto format = ParseOutputFormat(args.format);
  if (!format) return ctx.Fail(format.error());
  if (args.trust_remote_code) {
    ctx.Note("--trust_remote_code accepted for compatibility: memfit never runs remote code");
  }
  if (!args.library_name.empty() && args.library_name != "transformers" &&
      args.library_name != "timm") {
    return ctx.Fail(MakeError("--library_name {}: expected transformers or timm", args.library_name));
  }
  if (args.accelerate) return RunAccelerate(args, *format, ctx);
  LoadOptions options;
  if (!args.dtypes.empty()) {
    options.dtypes.clear();
    for (const auto& d : args.dtypes) {
      auto dtype = ParseLoadDtype(d);
      if (!dtype) return ctx.Fail(dtype.error());
      options.dtypes.push_back(*dtype);
    }
  }
  auto model = LoadSharedModel(args.model, {});
  if (!model) return ctx.Fail(model.error());
  const Model& described = (*model)->model();
  auto estimate = EstimateLoad(described, options, (*model)->ResidentBlocks());
  ctx.out << RenderLoadEstimate(described, estimate, *format);
}

}  // namespace

void AddEstimateMemoryCommand(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<EstimateArgs>();
  auto* cmd = app.add_subcommand(
      "estimate-memory",
      "memory to load the model per dtype, its largest indivisible block, and full training with "
      "AdamW (weights, gradients, optimizer states)");
  AddModelArgs(*cmd, args->model);
  cmd->add_option("--dtypes", args->dtypes,
                  "dtypes to report: float32 float16 bfloat16 int8 int4 (default all)");
  cmd->add_flag("--accelerate", args->accelerate,
                "reproduce `accelerate estimate-memory` (its table, rounding and MB/GB labels)");
  cmd->add_option("--library_name,--library-name", args->library_name,
                  "transformers or timm (accepted for accelerate compatibility)");
  cmd->add_flag("--trust_remote_code,--trust-remote-code", args->trust_remote_code,
                "accepted for compatibility; memfit never runs remote code");
  cmd->add_option("--format", args->format, "table, json, csv or markdown")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
  cmd->callback([args, &ctx] { RunEstimate(*args, ctx); });
}

}  // namespace memfit::cli
