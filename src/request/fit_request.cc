// A FitCommandRequest (memfit/requests.h) -> the device map, a serving deployment, or the word
// that llama.cpp plans it. The checks run in the order `memfit fit` always ran them.

#include <algorithm>
#include <limits>

#include "memfit/engine_release.h"
#include "memfit/architecture.h"
#include "memfit/context_default.h"
#include "memfit/hf_config.h"
#include "formats/json.h"
#include "memfit/render_deploy.h"
#include "memfit/render_fit.h"
#include "memfit/requests.h"
#include "memfit/units.h"
#include "plan/device_map_json.h"
#include "plan/parallel_layout_fields.h"
#include "request/request_options.h"
#include "request/verdicts.h"

namespace memfit {
namespace {

Result<uint64_t> Size(const std::string& flag, const std::string& text) {
  if (text == "unlimited") return std::numeric_limits<uint64_t>::max();
  auto bytes = ParseByteSize(text);
  if (!bytes) return Wrap(bytes.error(), flag);
  return *bytes;
}

// --gpus N with one --gpu KIND: N of that kind, as --gpu NxKIND says it.
Result<std::vector<std::string>> GpuWords(const FitCommandRequest& r) {
  if (r.gpu_count == 0) return r.gpus;
  if (r.gpus.size() != 1) {
    return MakeError("--gpus {}: give exactly one --gpu kind to count (got {})", r.gpu_count,
                     r.gpus.size());
  }
  return std::vector<std::string>{fmt::format("{}x{}", r.gpu_count, r.gpus.front())};
}

// The catalog's smaller siblings of this model (its sibling, that one's sibling, ...), largest
// first, each built at its config dtype.
std::vector<std::shared_ptr<const Model>> Siblings(const Model& model) {
  std::vector<std::shared_ptr<const Model>> out;
  const CatalogEntry* entry = FindCatalogEntry(model.name);
  for (int depth = 0; entry && !entry->smaller_sibling.empty() && depth < 8; ++depth) {
    const CatalogEntry* sibling = FindCatalogEntry(entry->smaller_sibling);
    if (!sibling || sibling == entry) break;
    entry = sibling;
    auto config = HfConfig::Parse(sibling->config_json, std::string(sibling->id));
    if (!config) break;
    auto built = BuildFromConfig(*config);
    if (!built) break;
    built->name = std::string(sibling->id);
    out.push_back(std::make_shared<const Model>(std::move(*built)));
  }
  return out;
}

Result<FitAnswer> LlamaCpp(FitAnswer answer, std::optional<ResolvedModel> resolved = std::nullopt) {
  answer.kind = FitAnswer::Kind::kLlamaCpp;
  answer.resolved = std::move(resolved);
  return answer;
}

// The model the request names, described (through the process's model cache when it is on) and
// copied, since the fit adds its context assumption; nullopt (with `resolved` set) for a GGUF model.
// `sglang_vision`, when given: what SGLang's memory rule reads from its config.json.
Result<std::optional<Model>> Describe(const FitCommandRequest& r, std::optional<ResolvedModel>& gguf,
                                      std::optional<SglangVisionConfig>* sglang_vision = nullptr) {
  MEMFIT_ASSIGN_OR_RETURN(std::shared_ptr<const ResolvedModel> resolved, ResolveModelShared(r.model));
  if (!resolved->inputs.gguf.empty()) {
    gguf = *resolved;
    return std::optional<Model>();
  }
  if (sglang_vision) {
    MEMFIT_ASSIGN_OR_RETURN(*sglang_vision, SglangVisionFor(resolved->inputs));
  }
  MEMFIT_ASSIGN_OR_RETURN(std::shared_ptr<const DescribedModel> described,
                          DescribeResolvedShared(r.model, *resolved));
  return std::optional<Model>(described->model());
}

// `fit --engine vllm|sglang|transformers` (and --all-gpus): the serving estimators over GPUs and
// parallel layouts instead of accelerate's device map.
Result<FitAnswer> RunDeploy(const FitCommandRequest& r, FitAnswer answer) {
  MEMFIT_ASSIGN_OR_RETURN(Engine engine, ParseEngine(r.engine.empty() ? "vllm" : r.engine));
  if (engine == Engine::kLlamaCpp) {
    return MakeError("fit --engine llama.cpp: give a GGUF model (MODEL.gguf or --gguf-file); "
                     "llama.cpp plans it with its --fit order");
  }
  InferenceOptions& o = answer.deploy_options;
  o.engine = engine;
  o.batch = r.batch == 0 ? 1 : r.batch;
  o.block_size = r.block_size;
  o.max_num_seqs = r.max_num_seqs;
  o.max_batched_tokens = r.max_batched_tokens;
  MEMFIT_ASSIGN_OR_RETURN(o.speculative_algorithm, SpeculativeAlgorithmFor(r.speculative_algorithm, engine));
  MEMFIT_ASSIGN_OR_RETURN(o.quant, ParseQuant(r.quant));
  MEMFIT_ASSIGN_OR_RETURN(o.kv_dtype, ParseKvDtype(r.kv_dtype));
  // The engine's release: its defaults, resolved per GPU by the planner, and its KV dtypes.
  MEMFIT_ASSIGN_OR_RETURN(o.release, FindEngineRelease(engine, r.engine_version));
  if (o.release) MEMFIT_RETURN_IF_ERROR(CheckKvDtype(*o.release, o.kv_dtype));
  if (r.gpu_memory_utilization > 1) {
    return MakeError("--gpu-memory-utilization {}: expected a fraction in (0, 1]",
                     r.gpu_memory_utilization);
  }
  // <= 0: the release's (SGLang's from each GPU's memory).
  o.gpu_memory_utilization = r.gpu_memory_utilization > 0 ? r.gpu_memory_utilization : -1;
  // One GPU kind: --search and a fixed deployment need it; --all-gpus takes the catalog.
  std::vector<DeviceSpec> devices;
  for (const auto& g : answer.gpus) MEMFIT_RETURN_IF_ERROR(ParseDeviceArg(g, devices));
  if (!r.all_gpus) {
    if (devices.empty()) return MakeError("fit --engine: give --gpu (or --all-gpus)");
    for (const auto& d : devices) {
      if (d.memory_bytes != devices.front().memory_bytes || d.gpu != devices.front().gpu) {
        return MakeError("fit --engine: serving engines need one GPU kind; got {} and {}",
                         devices.front().label, d.label);
      }
    }
  }
  std::optional<ResolvedModel> gguf;
  MEMFIT_ASSIGN_OR_RETURN(std::optional<Model> model, Describe(r, gguf, &o.sglang_vision));
  if (!model) {
    return MakeError("fit --engine {}: a GGUF model is planned by llama.cpp's --fit (drop --engine)",
                     EngineName(o.engine));
  }
  o.sglang_mla = SglangMla(*model);
  // --dtype: "stored" keeps the config's 16-bit dtype for what is not quantized.
  o.dtype = model->config_dtype && (*model->config_dtype == Dtype::kF16 ||
                                    *model->config_dtype == Dtype::kBF16)
                ? *model->config_dtype : Dtype::kBF16;
  if (r.dtype != "stored" && r.dtype != "auto") {
    auto d = ParseDtypeName(r.dtype);
    if (!d) return Wrap(d.error(), "--dtype");
    o.dtype = *d;
  }
  const ContextChoice context =
      ChooseContext(r.context, model->hp.max_position_embeddings, ContextUse::kServe);
  o.context_tokens = context.tokens;
  if (!context.assumption.empty()) model->assumptions.push_back(context.assumption);
  DeployPlanner planner(*model, o);
  if (r.all_gpus) {
    const uint64_t counts[] = {1, 2, 4, 8};
    answer.rows = planner.Grid(counts);
    answer.deploy_mode = "grid";
  } else {
    DeployGpu gpu{.name = devices.front().label, .memory_bytes = devices.front().memory_bytes,
                  .spec = devices.front().gpu};
    if (r.search) {
      DeployRequest request{.inference = o, .max_gpus = r.max_gpus,
                            .top = static_cast<size_t>(r.top)};
      answer.rows = planner.Search(gpu, request);
      answer.deploy_mode = "search";
    } else {
      const uint64_t n = devices.size();
      DeployLayout layout;
      plan::CopyParallelLayout(r, layout);
      if (!r.tp) {
        layout.tp = r.dp_attention ? n / std::max<uint64_t>(1, r.pp)
                                   : n / std::max<uint64_t>(1, r.dp * r.pp);
      }
      answer.rows.push_back(planner.Evaluate(gpu, n, layout));
      answer.deploy_mode = "deployment";
    }
  }
  answer.kind = FitAnswer::Kind::kDeploy;
  answer.model = std::make_shared<const Model>(std::move(*model));
  return answer;
}

}  // namespace

Result<FitAnswer> RunFitCommandRequest(const FitCommandRequest& r) {
  // The words CLI11 checks on the command line, checked again for the API's body.
  if (r.task != "load" && r.task != "inference" && r.task != "train") {
    return MakeError("--task {}: expected load, inference or train", r.task);
  }
  if (r.strategy != "balanced" && r.strategy != "sequential") {
    return MakeError("--strategy {}: expected balanced or sequential", r.strategy);
  }
  FitAnswer answer;
  MEMFIT_ASSIGN_OR_RETURN(answer.gpus, GpuWords(r));
  // A GGUF model named as such; one found when MODEL is resolved is routed below.
  if (r.model.spec.ends_with(".gguf") || !r.model.gguf_file.empty()) return LlamaCpp(std::move(answer));
  if (!r.engine.empty() || r.search || r.all_gpus) {
    if (r.engine == "llama.cpp" || r.engine == "llamacpp") return LlamaCpp(std::move(answer));
    if (!r.engine.empty() && r.engine != "transformers" && r.task == "train") {
      return MakeError("fit --engine {}: serving engines plan inference (--task inference), not "
                       "training", r.engine);
    }
    return RunDeploy(r, std::move(answer));
  }
  // The device-map fit (accelerate's placement): the serving engines' own settings would be
  // silently ignored here, so they are refused with the way to use them.
  if (r.quant != "stored") {
    return MakeError("fit --quant {}: re-quantization is planned with --engine; the device-map "
                     "fit loads --dtype int8 or int4 (bitsandbytes)", r.quant);
  }
  if (!r.engine_version.empty()) {
    return MakeError("fit --engine-version {}: a serving engine's release applies with --engine "
                     "vllm or sglang; the device-map fit is accelerate's", r.engine_version);
  }
  MEMFIT_ASSIGN_OR_RETURN(KvDtype kv_dtype, ParseKvDtype(r.kv_dtype));
  if (kv_dtype != KvDtype::kModel && r.task != "inference") {
    return MakeError("fit --kv-dtype {}: a KV cache is part of --task inference only", r.kv_dtype);
  }
  MEMFIT_ASSIGN_OR_RETURN(TrainMethod method, ParseTrainMethod(r.method));
  if (method != TrainMethod::kFull && r.task != "train") {
    return MakeError("fit --method {}: the training method is part of --task train only", r.method);
  }
  FitRequest& request = answer.plan_request;
  for (const auto& g : answer.gpus) MEMFIT_RETURN_IF_ERROR(ParseDeviceArg(g, request.gpus));
  if (request.gpus.empty()) return MakeError("fit: give at least one --gpu");
  if (!r.ram.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(request.ram_bytes, Size("--ram", r.ram));
  }
  if (!r.disk.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(request.disk_bytes, Size("--disk", r.disk));
  }
  if (!r.reserve.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(request.reserve_bytes_per_gpu, Size("--reserve", r.reserve));
  }
  auto dtype = ParseLoadDtype(r.dtype);
  if (!dtype) return Wrap(dtype.error(), "--dtype");
  request.dtype = *dtype;
  request.strategy = r.strategy == "sequential" ? DeviceMapStrategy::kSequential
                                                : DeviceMapStrategy::kBalanced;
  if (!(r.pcie_gb_s > 0) || !(r.disk_gb_s > 0)) {
    return MakeError("--pcie-gbps and --disk-gbps must be positive");
  }
  request.pcie_gb_s = r.pcie_gb_s;
  request.disk_gb_s = r.disk_gb_s;
  request.advise = !r.no_advice;

  std::optional<ResolvedModel> gguf;
  MEMFIT_ASSIGN_OR_RETURN(std::optional<Model> model, Describe(r, gguf));
  if (!model) return LlamaCpp(std::move(answer), std::move(gguf));
  // The context is chosen here, once, with its assumption line; the runtime takes it as given.
  const ContextChoice context =
      ChooseContext(r.context, model->hp.max_position_embeddings,
                    r.task == "train" ? ContextUse::kTrain : ContextUse::kServe);
  if (r.task != "load" && !context.assumption.empty()) model->assumptions.push_back(context.assumption);
  MEMFIT_ASSIGN_OR_RETURN(answer.runtime,
                          RuntimeForTask(*model, TaskSettings{.task = r.task,
                                                              .context_tokens = context.tokens,
                                                              .batch = r.batch,
                                                              .kv_dtype = kv_dtype,
                                                              .train_method = method}));
  answer.siblings = Siblings(*model);
  for (const auto& sibling : answer.siblings) request.smaller_siblings.push_back(sibling.get());
  MEMFIT_ASSIGN_OR_RETURN(answer.plan, PlanFit(*model, request, answer.runtime));
  answer.model = std::make_shared<const Model>(std::move(*model));
  answer.device_map_only = r.device_map_only;
  answer.verdict = FitVerdict(answer);
  // A device map is for from_pretrained: only one that loads is printed.
  if (r.device_map_only && answer.plan.verdict == Verdict::kDoesNotFit) {
    return MakeError("fit --device-map: no map that loads: {} (add --ram SIZE or --disk SIZE to "
                     "offload, or see `memfit fit` without --device-map for advice)",
                     answer.verdict->line);
  }
  return answer;
}

std::string RenderFitAnswer(const FitAnswer& a, OutputFormat format, const TextLayout& layout) {
  if (a.kind == FitAnswer::Kind::kDeploy) {
    return RenderDeploy(DeployReportInput{.model = a.model.get(), .options = &a.deploy_options,
                                          .mode = a.deploy_mode, .rows = &a.rows},
                        format);
  }
  if (a.kind != FitAnswer::Kind::kDeviceMap) return "";
  if (a.device_map_only) return DumpOrderedJson(DeviceMapJson(a.plan.map)) + "\n";
  return RenderFitPlan(FitReportInput{.model = a.model.get(), .request = &a.plan_request,
                                      .runtime = &a.runtime, .plan = &a.plan,
                                      .verdict = a.verdict ? &*a.verdict : nullptr,
                                      .layout = layout},
                       format);
}

}  // namespace memfit
