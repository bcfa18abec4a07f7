// An InferenceRequest (memfit/requests.h) -> the model, the options and the estimate: the stage
// after the CLI's flags and the API's JSON fields. The checks run in the order `memfit inference`
// always ran them, so that every caller reports the same first error.

#include <algorithm>

#include "memfit/context_default.h"
#include "memfit/gpu.h"
#include "memfit/requests.h"
#include "memfit/units.h"
#include "memfit/render_memory.h"
#include "request/request_options.h"
#include "request/verdicts.h"

namespace memfit {
namespace {

// The words -> estimator options (everything that does not need the model).
Result<InferenceOptions> ToOptions(const InferenceRequest& r, Engine engine) {
  InferenceOptions o;
  o.batch = r.batch;
  const uint64_t replicas = std::max<uint64_t>(1, r.dp) * std::max<uint64_t>(1, r.pp);
  if (r.gpus > 0 && r.tp == 0) {
    if (r.gpus % replicas != 0) {
      return MakeError("--gpus {}: not a multiple of --dp x --pp ({})", r.gpus, replicas);
    }
    o.tp = r.gpus / replicas;
  } else {
    o.tp = r.tp ? r.tp : 1;
  }
  o.dp = r.dp;
  o.ep = r.ep;
  o.pp = r.pp;
  o.dp_attention = r.dp_attention;
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
  if (r.gpu_memory_utilization >= 0) {
    if (r.gpu_memory_utilization > 1) {
      return MakeError("--gpu-memory-utilization {}: expected a fraction in (0, 1]",
                       r.gpu_memory_utilization);
    }
    o.gpu_memory_utilization = r.gpu_memory_utilization;
  } else if (o.engine == Engine::kSglang) {
    o.gpu_memory_utilization = 0.88;  // SGLang mem_fraction_static on large GPUs
  }
  if (!r.gpu.empty()) {
    auto gpu = FindGpu(r.gpu);
    if (!gpu) return Wrap(gpu.error(), "--gpu");
    o.gpu_memory_bytes = MemoryBytes(**gpu);
    o.compute_capability = ComputeCapability(**gpu);
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

}  // namespace

Result<InferenceOptions> InferenceOptionsFor(const InferenceRequest& request) {
  MEMFIT_ASSIGN_OR_RETURN(Engine engine, ParseEngine(request.engine));
  return ToOptions(request, engine);
}

Result<InferenceAnswer> RunInferenceRequest(const InferenceRequest& r) {
  MEMFIT_ASSIGN_OR_RETURN(Engine engine, ParseEngine(r.engine));
  // GGUF models go to llama.cpp: named as such here, or found when MODEL is resolved below.
  if (engine == Engine::kLlamaCpp || r.model.spec.ends_with(".gguf") || !r.model.gguf_file.empty()) {
    InferenceAnswer answer;
    answer.llamacpp = true;
    return answer;
  }
  InferenceAnswer answer;
  MEMFIT_ASSIGN_OR_RETURN(answer.options, ToOptions(r, engine));
  MEMFIT_ASSIGN_OR_RETURN(std::shared_ptr<const ResolvedModel> resolved, ResolveModelShared(r.model));
  if (!resolved->inputs.gguf.empty()) {
    answer.llamacpp = true;
    answer.resolved = *resolved;
    return answer;
  }
  MEMFIT_ASSIGN_OR_RETURN(answer.model, DescribeResolvedShared(r.model, *resolved));
  const Model& model = answer.model->model();
  InferenceOptions& o = answer.options;
  const ContextChoice context =
      ChooseContext(r.context, model.hp.max_position_embeddings, ContextUse::kServe);
  o.context_tokens = context.tokens;
  MEMFIT_ASSIGN_OR_RETURN(answer.estimate, EstimateInference(model, o));
  if (!context.assumption.empty()) answer.estimate.assumptions.push_back(context.assumption);
  if (r.gpus > 0 && answer.estimate.gpus != r.gpus) {
    return MakeError("--gpus {}: the layout uses {} GPUs (--tp {} --dp {} --pp {})", r.gpus,
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
    if (auto gpu = FindGpu(word)) {
      gpus.push_back({std::string((*gpu)->name), MemoryBytes(**gpu), ComputeCapability(**gpu)});
      continue;
    }
    auto bytes = ParseByteSize(word);
    if (!bytes) return MakeError("--curve-gpu \"{}\": neither a catalog GPU nor a size (24GiB)", word);
    gpus.push_back({word, *bytes, 0});
  }
  return gpus;
}

}  // namespace memfit
