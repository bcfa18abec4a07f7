// An InferenceRequest (memfit/requests.h) -> the model, the options and the estimate: the stage
// after the CLI's flags and the API's JSON fields. The checks run in the order `memfit inference`
// always ran them, so that every caller reports the same first error.

#include <algorithm>
#include <optional>

#include "memfit/context_default.h"
#include "memfit/engine_release.h"
#include "memfit/gpu.h"
#include "memfit/requests.h"
#include "memfit/units.h"
#include "memfit/render_memory.h"
#include "plan/parallel_layout_fields.h"
#include "request/request_options.h"
#include "request/verdicts.h"

namespace memfit {
namespace {

// The words -> estimator options (everything that does not need the model).
Result<InferenceOptions> ToOptions(const InferenceRequest& r, Engine engine) {
  InferenceOptions o;
  o.batch = r.batch;
  // --gpu NxKIND: N GPUs of that kind, the same as --gpus N (the two must agree when both given).
  std::optional<GpuChoice> gpu;
  if (!r.gpu.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(gpu, ParseGpuChoice(r.gpu));
  }
  uint64_t gpus = r.gpus;
  if (gpu && gpu->count > 1) {
    if (gpus > 0 && gpus != gpu->count) {
      return MakeError("--gpu {} and --gpus {} disagree: give the count once", r.gpu, r.gpus);
    }
    if (r.tp == 0) gpus = gpu->count;
  }
  plan::CopyParallelLayout(r, o);  // tp: set below, from --tp, --gpus or 1
  const uint64_t replicas = std::max<uint64_t>(1, r.dp) * std::max<uint64_t>(1, r.pp);
  if (gpus > 0 && r.tp == 0) {
    if (gpus % replicas != 0) {
      return MakeError("--gpus {}: not a multiple of --dp x --pp ({})", gpus, replicas);
    }
    o.tp = gpus / replicas;
  } else {
    o.tp = r.tp ? r.tp : 1;
  }
  MEMFIT_ASSIGN_OR_RETURN(o.speculative_algorithm, SpeculativeAlgorithmFor(r.speculative_algorithm, engine));
  o.engine = engine;
  o.block_size = r.block_size;
  o.max_num_seqs = r.max_num_seqs;
  o.max_batched_tokens = r.max_batched_tokens;
  o.encoder_tokens = r.encoder_tokens;
  o.decoder_tokens = r.decoder_tokens;
  o.last_token_logits = !r.all_logits;
  MEMFIT_ASSIGN_OR_RETURN(o.versions, ParseRuntimeVersions(r.torch_version, r.transformers_version));
  if (!r.mamba_scan.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(o.mamba2_scan, ParseMamba2Scan(r.mamba_scan, "--mamba-scan"));
  }
  o.overhead.allocator_reserve_fraction = r.allocator_reserve;
  auto dtype = ParseDtypeName(r.dtype);
  if (!dtype) return Wrap(dtype.error(), "--dtype");
  o.dtype = *dtype;
  MEMFIT_ASSIGN_OR_RETURN(o.quant, ParseQuant(r.quant));
  MEMFIT_ASSIGN_OR_RETURN(o.kv_dtype, ParseKvDtype(r.kv_dtype));
  MEMFIT_ASSIGN_OR_RETURN(o.attn, ParseAttnImpl(r.attn));
  // The engine's release: its defaults below (resolved per GPU by the estimator) and the KV
  // dtypes it accepts.
  MEMFIT_ASSIGN_OR_RETURN(o.release, FindEngineRelease(engine, r.engine_version));
  if (o.release) MEMFIT_RETURN_IF_ERROR(CheckKvDtype(*o.release, o.kv_dtype));
  if (r.gpu_memory_utilization >= 0) {
    if (r.gpu_memory_utilization > 1) {
      return MakeError("--gpu-memory-utilization {}: expected a fraction in (0, 1]",
                       r.gpu_memory_utilization);
    }
    o.gpu_memory_utilization = r.gpu_memory_utilization;
  } else {
    o.gpu_memory_utilization = -1;  // the release's (SGLang: from the GPU's memory)
  }
  if (gpu) {
    o.gpu_memory_bytes = gpu->device.memory_bytes;
    o.compute_capability = gpu->device.gpu ? ComputeCapability(*gpu->device.gpu) : 0;
    o.gpu_name = gpu->device.gpu ? std::string(gpu->device.gpu->name) : gpu->device.label;
  }
  if (!r.gpu_memory.empty()) {
    auto bytes = ParseByteSize(r.gpu_memory);
    if (!bytes) return Wrap(bytes.error(), "--gpu-memory");
    o.gpu_memory_bytes = *bytes;
  }
  if (!r.cuda_context.empty()) {
    auto bytes = ParseByteSize(r.cuda_context);
    if (!bytes) return Wrap(bytes.error(), "--cuda-context");
    o.overhead.cuda_context_bytes = *bytes;
  }
  return o;
}

// A request llama.cpp answers: --engine-version names a llama.cpp build, and --kv-dtype is one
// of its cache types (no FP8).
Status CheckLlamaCppRequest(const InferenceRequest& r, Engine engine) {
  const bool named = engine == Engine::kLlamaCpp;
  MEMFIT_ASSIGN_OR_RETURN(const EngineRelease* release,
                          FindEngineRelease(Engine::kLlamaCpp, named ? r.engine_version : ""));
  MEMFIT_ASSIGN_OR_RETURN(KvDtype kv, ParseKvDtype(r.kv_dtype));
  return CheckKvDtype(*release, kv);
}

}  // namespace

Result<std::string> SpeculativeAlgorithmFor(const std::string& word, Engine engine) {
  if (word.empty()) return std::string();
  if (engine != Engine::kSglang) {
    return MakeError("--speculative-algorithm {}: modelled for SGLang's memory rule only "
                     "(--engine sglang)", word);
  }
  return ParseSpeculativeAlgorithm(word);
}

bool SglangMla(const Model& model) {
  return std::any_of(model.hp.layers.begin(), model.hp.layers.end(),
                     [](const LayerInfo& l) { return l.attention == AttentionKind::kMla; });
}

Result<std::optional<SglangVisionConfig>> SglangVisionFor(const ModelInputs& inputs) {
  if (!inputs.config) return std::optional<SglangVisionConfig>();
  const std::optional<HfConfig> vision = inputs.config->OptionalSub("vision_config");
  if (!vision) return std::optional<SglangVisionConfig>();
  // getattr(vision_config, "num_hidden_layers", 24), getattr(vision_config, "hidden_size", 1024)
  SglangVisionConfig v;
  MEMFIT_ASSIGN_OR_RETURN(v.num_hidden_layers, vision->UintOr("num_hidden_layers", 24));
  MEMFIT_ASSIGN_OR_RETURN(v.hidden_size, vision->UintOr("hidden_size", 1024));
  const bool no_layers = !vision->Has("num_hidden_layers"), no_width = !vision->Has("hidden_size");
  v.defaulted = no_layers && no_width ? "num_hidden_layers and hidden_size"
                : no_layers           ? "num_hidden_layers"
                : no_width            ? "hidden_size"
                                      : "";
  return std::optional<SglangVisionConfig>(v);
}

Result<InferenceOptions> InferenceOptionsFor(const InferenceRequest& request) {
  MEMFIT_ASSIGN_OR_RETURN(Engine engine, ParseEngine(request.engine));
  return ToOptions(request, engine);
}

Result<InferenceAnswer> RunInferenceRequest(const InferenceRequest& r) {
  MEMFIT_ASSIGN_OR_RETURN(Engine engine, ParseEngine(r.engine));
  // GGUF models go to llama.cpp: named as such here, or found when MODEL is resolved below.
  if (engine == Engine::kLlamaCpp || r.model.spec.ends_with(".gguf") || !r.model.gguf_file.empty()) {
    MEMFIT_RETURN_IF_ERROR(CheckLlamaCppRequest(r, engine));
    InferenceAnswer answer;
    answer.llamacpp = true;
    return answer;
  }
  InferenceAnswer answer;
  MEMFIT_ASSIGN_OR_RETURN(answer.options, ToOptions(r, engine));
  MEMFIT_ASSIGN_OR_RETURN(std::shared_ptr<const ResolvedModel> resolved, ResolveModelShared(r.model));
  if (!resolved->inputs.gguf.empty()) {
    MEMFIT_RETURN_IF_ERROR(CheckLlamaCppRequest(r, engine));
    answer.llamacpp = true;
    answer.resolved = *resolved;
    return answer;
  }
  MEMFIT_ASSIGN_OR_RETURN(
      answer.model,
      DescribeResolvedShared(r.model, *resolved,
                             {.build = {.transformers = answer.options.versions.transformers}}));
  const Model& model = answer.model->model();
  InferenceOptions& o = answer.options;
  MEMFIT_ASSIGN_OR_RETURN(o.sglang_vision, SglangVisionFor(resolved->inputs));
  o.sglang_mla = SglangMla(model);
  const ContextChoice context =
      ChooseContext(r.context, model.hp.max_position_embeddings, ContextUse::kServe);
  o.context_tokens = context.tokens;
  if (r.new_tokens > 0) {
    if (engine != Engine::kTransformers) {
      return MakeError("--new-tokens {}: the prompt / generated split is generate()'s "
                       "(--engine transformers); vLLM and SGLang size their pool for --context",
                       r.new_tokens);
    }
    if (model.hp.is_encoder_decoder) {
      return MakeError("--new-tokens {}: {} is an encoder-decoder model, whose prompt is the "
                       "encoder's (--context) and whose generated tokens are --decoder-tokens",
                       r.new_tokens, model.name);
    }
    if (r.new_tokens >= o.context_tokens) {
      return MakeError("--new-tokens {}: must be less than --context {} (prompt + generated "
                       "tokens)",
                       r.new_tokens, o.context_tokens);
    }
    o.new_tokens = r.new_tokens;
  }
  MEMFIT_ASSIGN_OR_RETURN(answer.estimate, EstimateInference(model, o));
  if (!context.assumption.empty()) answer.estimate.assumptions.push_back(context.assumption);
  if (std::string warning = AbsurdTotalWarning(answer.estimate.total_bytes); !warning.empty()) {
    answer.estimate.notes.push_back(std::move(warning));
  }
  if (r.gpus > 0 && answer.estimate.gpus != r.gpus) {
    return MakeError("--gpus {}: the layout uses {} GPUs (--tp {} --dp {} --pp {})", r.gpus,
                     answer.estimate.gpus, o.tp, o.dp, o.pp);
  }
  if (auto choice = r.gpu.empty() ? std::optional<GpuChoice>() : std::optional(*ParseGpuChoice(r.gpu));
      choice && choice->count > 1 && answer.estimate.gpus != choice->count) {
    return MakeError("--gpu {}: the layout uses {} GPUs (--tp {} --dp {} --pp {})", r.gpu,
                     answer.estimate.gpus, o.tp, o.dp, o.pp);
  }
  answer.verdict = InferenceVerdict(model, r, o, answer.estimate);
  if (!r.curve) {
    if (!r.curve_gpus.empty()) return MakeError("--curve-gpu needs --curve");
    return answer;
  }
  // The curve's GPUs: --curve-gpu, else the deployment's --gpu.
  MEMFIT_ASSIGN_OR_RETURN(std::vector<CurveGpu> gpus,
                          ParseCurveGpus(!r.curve_gpus.empty() ? r.curve_gpus
                                         : r.gpu.empty()       ? std::vector<std::string>{}
                                                               : std::vector{r.gpu}));
  MEMFIT_ASSIGN_OR_RETURN(answer.curve, EstimateContextCurve(model, o, gpus));
  return answer;
}

std::string RenderInferenceAnswer(const InferenceAnswer& a, OutputFormat format,
                                  const TextLayout& layout) {
  if (!a.model) return "";
  return RenderInference(a.model->model(), a.options, a.estimate, format,
                         a.curve ? &*a.curve : nullptr, a.verdict ? &*a.verdict : nullptr, layout);
}

Result<RuntimeVersions> ParseRuntimeVersions(const std::string& torch,
                                             const std::string& transformers) {
  RuntimeVersions v;
  if (!torch.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(v.torch, ParseLibraryVersion(torch, "--torch-version"));
  }
  if (!transformers.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(v.transformers, ParseLibraryVersion(transformers, "--transformers-version"));
  }
  return v;
}

Result<std::vector<CurveGpu>> ParseCurveGpus(const std::vector<std::string>& words) {
  std::vector<CurveGpu> gpus;
  for (const auto& word : words) {
    // A catalog name, NxNAME (one curve per kind: the count does not change a GPU's memory) or a
    // size with a unit.
    auto choice = ParseGpuChoice(word);
    if (!choice) {
      // ParseGpuChoice names --gpu; the word came from --curve-gpu.
      std::string why = choice.error().message;
      const std::string gpu_prefix = fmt::format("--gpu \"{}\": ", word);
      if (why.starts_with(gpu_prefix)) why.erase(0, gpu_prefix.size());
      return MakeError("--curve-gpu \"{}\": {}", word, why);
    }
    const DeviceSpec& d = choice->device;
    gpus.push_back({d.gpu ? std::string(d.gpu->name) : word, d.memory_bytes,
                    d.gpu ? ComputeCapability(*d.gpu) : 0});
  }
  return gpus;
}

}  // namespace memfit
