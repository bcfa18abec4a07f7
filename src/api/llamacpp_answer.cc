// llama.cpp's answers for GGUF models (`memfit inference|fit` on a .gguf file, --engine
// llama.cpp or a Hub repository's GGUF model, and `memfit gguf inference|fit`): the flags as a
// plain struct, and the report for each, shared by the CLI, the API, Python and the browser.

#include "api/llamacpp_answer.h"

#include <algorithm>
#include <sstream>

#include "memfit/checked_math.h"
#include "memfit/context_curve.h"
#include "memfit/estimate_inference.h"
#include "memfit/gguf_model.h"
#include "memfit/gpu.h"
#include "memfit/llamacpp_report.h"
#include "memfit/local_source.h"
#include "memfit/units.h"

namespace memfit::api {
namespace {

Result<std::vector<double>> ParseSplit(const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      double v = std::stod(item, &used);
      if (used != item.size() || v < 0) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      return MakeError("--tensor-split {}: \"{}\" is not a non-negative number", text, item);
    }
  }
  return out;
}

}  // namespace

Result<LlamaCppOptions> ResolveLlamaCppArgs(const LlamaCppArgs& a) {
  LlamaCppOptions o = a.options;
  if (a.flash_attn == "on" || a.flash_attn == "1") o.flash_attn = FlashAttn::kOn;
  else if (a.flash_attn == "off" || a.flash_attn == "0") o.flash_attn = FlashAttn::kOff;
  else if (a.flash_attn == "auto") o.flash_attn = FlashAttn::kAuto;
  else return MakeError("--flash-attn {}: expected on, off or auto", a.flash_attn);
  o.ngl_semantics = a.legacy_ngl ? NglSemantics::kLegacy : NglSemantics::kCurrent;
  o.mmap = !a.no_mmap;
  o.op_offload = !a.no_op_offload;
  for (const char* type : {"k", "v"}) {
    const std::string& t = type[0] == 'k' ? o.cache_type_k : o.cache_type_v;
    if (!FindGgmlTypeByName(t)) return MakeError("--cache-type-{} {}: unknown type (f16, bf16, f32, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1)", type, t);
  }
  MEMFIT_ASSIGN_OR_RETURN(o.cuda_context_bytes, ParseByteSize(a.cuda_context));
  // The same forms as `memfit fit`: a size (24GiB), a catalog GPU (rtx4090: its whole memory) or a
  // count (2xH100).
  for (const auto& g : a.gpus) {
    std::vector<DeviceSpec> devices;
    MEMFIT_RETURN_IF_ERROR(ParseDeviceArg(g, devices));
    for (const auto& d : devices) o.gpu_free_bytes.push_back(d.memory_bytes);
  }
  if (!a.tensor_split.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(o.tensor_split, ParseSplit(a.tensor_split));
  }
  o.num_gpus = static_cast<uint32_t>(std::max({size_t{o.num_gpus}, o.gpu_free_bytes.size(), o.tensor_split.size()}));
  if (a.batch_given) {
    if (a.batch_sequences == 0 || a.batch_sequences > UINT32_MAX) {
      return MakeError("--batch {}: expected 1 or more sequences", a.batch_sequences);
    }
    o.parallel = static_cast<uint32_t>(a.batch_sequences);
  }
  return o;
}

namespace {

struct Loaded {
  Model model;
  std::string model_flags;  // how llama-server is told the model: "-m PATH" or "--hf-repo ..."
  uint64_t projector_bytes = 0;
};

Result<Loaded> Load(const ModelQuery& m, const LlamaCppArgs& a, std::optional<ResolvedModel> given) {
  if (!given) {
    MEMFIT_ASSIGN_OR_RETURN(given, ResolveModel(m));
  }
  const ModelInputs& inputs = given->inputs;
  if (inputs.gguf.empty()) {
    return MakeError("{}: not a GGUF model (give a .gguf file, or a Hub repository with --gguf-file)",
                     m.spec);
  }
  Loaded out;
  MEMFIT_ASSIGN_OR_RETURN(out.model, DescribeModel(inputs));
  if (GgufFacts(inputs.gguf).is_projector) {
    return MakeError("{}: this is a multimodal projector (mmproj); give the language model and --mmproj {}", m.spec, m.spec);
  }
  // llama.cpp downloads a Hub file itself (common/arg.cpp: -hf/--hf-repo, -hff/--hf-file).
  out.model_flags = given->hub_repo_id.empty()
                        ? "-m " + m.spec
                        : fmt::format("--hf-repo {} --hf-file {}", given->hub_repo_id,
                                      given->hub_gguf_file);
  if (!a.mmproj.empty()) {
    auto source = OpenFileByteSource(a.mmproj);
    MEMFIT_ASSIGN_OR_RETURN(GgufFile proj, ReadGgufHeader(*source));
    out.projector_bytes = proj.tensor_bytes;
  }
  return out;
}

}  // namespace

Result<std::string> LlamaCppInferenceText(const ModelQuery& m, const LlamaCppArgs& a,
                                          const LlamaCppOptions& options, OutputFormat format,
                                          std::optional<ResolvedModel> given) {
  MEMFIT_ASSIGN_OR_RETURN(Loaded loaded, Load(m, a, std::move(given)));
  auto est = EstimateLlamaCpp(loaded.model, options);
  if (!est) return Wrap(est.error(), m.spec);
  if (!a.curve && !a.curve_gpus.empty()) return MakeError("--curve-gpu needs --curve");
  std::optional<ContextCurve> curve;
  if (a.curve) {
    MEMFIT_ASSIGN_OR_RETURN(std::vector<CurveGpu> gpus,
                            ParseCurveGpus(a.curve_gpus.empty() ? a.gpus : a.curve_gpus));
    auto c = EstimateLlamaCppContextCurve(loaded.model, options, gpus);
    if (!c) return Wrap(c.error(), m.spec);
    curve = std::move(*c);
  }
  std::string text = RenderLlamaCppEstimate(loaded.model, *est, format, curve ? &*curve : nullptr);
  if (loaded.projector_bytes && format == OutputFormat::kTable) {
    text += "projector (mmproj): " + FormatBytes(loaded.projector_bytes) +
            " of weights, loaded by llama-mtmd on the first GPU; not included above\n";
  }
  return text;
}

LlamaCppArgs LlamaCppArgsFor(const InferenceRequest& r) {
  LlamaCppArgs llama;
  // --kv-dtype as llama.cpp's --cache-type-k/-v (FP8 is refused before: llama.cpp has none).
  if (auto kv = ParseKvDtype(r.kv_dtype)) {
    const char* type = *kv == KvDtype::kF32    ? "f32"
                       : *kv == KvDtype::kF16  ? "f16"
                       : *kv == KvDtype::kBF16 ? "bf16"
                       : *kv == KvDtype::kInt8 ? "q8_0"
                       : *kv == KvDtype::kInt4 ? "q4_0"
                                               : nullptr;
    if (type) llama.options.cache_type_k = llama.options.cache_type_v = type;
  }
  llama.options.context_tokens = r.context;
  llama.ctx_given = r.context > 0;
  llama.options.parallel = static_cast<uint32_t>(std::clamp<uint64_t>(r.batch, 1, UINT32_MAX));
  if (!r.gpu.empty()) llama.gpus.push_back(r.gpu);
  if (r.gpus > 0) llama.options.num_gpus = static_cast<uint32_t>(std::min<uint64_t>(r.gpus, UINT32_MAX));
  llama.curve = r.curve;
  llama.curve_gpus = r.curve_gpus;
  return llama;
}

LlamaCppArgs LlamaCppFitArgsFor(const FitCommandRequest& r, const std::vector<std::string>& gpus) {
  LlamaCppArgs llama;
  llama.gpus = gpus;
  llama.ram = r.ram;
  if (r.context) {
    llama.options.context_tokens = r.context;
    llama.ctx_given = true;
  }
  return llama;
}

Result<LlamaCppFitText> LlamaCppFitReport(const ModelQuery& m, const LlamaCppArgs& a,
                                          OutputFormat format, std::optional<ResolvedModel> given) {
  if (a.gpus.empty()) {
    return MakeError("fit: give each GPU with --gpu (a size such as 24GiB, or a catalog name)");
  }
  MEMFIT_ASSIGN_OR_RETURN(LlamaCppOptions options, ResolveLlamaCppArgs(a));
  MEMFIT_ASSIGN_OR_RETURN(Loaded loaded, Load(m, a, std::move(given)));
  LlamaCppFitOptions fit;
  fit.base = options;
  fit.gpu_bytes = options.gpu_free_bytes;
  fit.base.gpu_free_bytes.clear();
  fit.base.num_gpus = 0;
  fit.context_fixed = a.ctx_given;
  fit.gpu_layers_fixed = a.ngl_given;
  fit.min_context_tokens = a.fit_ctx;
  if (!a.fit_target_mib.empty()) {
    fit.margin_bytes.clear();
    // Saturating: a margin beyond 2^64 bytes simply leaves no room.
    for (uint64_t mib : a.fit_target_mib) fit.margin_bytes.push_back(CheckedMul(mib, kMiB).value_or(UINT64_MAX));
  }
  if (!a.ram.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(fit.host_bytes, ParseByteSize(a.ram));
  }
  if (loaded.projector_bytes) {
    // Like Ollama: pad the first GPU's target by the projector (llama.cpp's fit ignores it).
    if (fit.margin_bytes.size() == 1) fit.margin_bytes.resize(fit.gpu_bytes.size(), fit.margin_bytes[0]);
    if (!fit.margin_bytes.empty()) {
      fit.margin_bytes[0] = CheckedAdd(fit.margin_bytes[0], loaded.projector_bytes).value_or(UINT64_MAX);
    }
  }
  auto plan = FitLlamaCpp(loaded.model, fit);
  if (!plan) return Wrap(plan.error(), m.spec);
  return LlamaCppFitText{RenderLlamaCppFit(loaded.model, *plan, loaded.model_flags, format), plan->fits};
}

}  // namespace memfit::api
