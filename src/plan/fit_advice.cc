// Advice: what to change so the model fits, each with its new total from a full re-placement.
// Byte formulas and sources: docs/estimates.md, "Fit advice".

#include <algorithm>
#include <cmath>
#include <memory>

#include "memfit/train_search.h"
#include "memfit/units.h"
#include "plan/fit_internal.h"

namespace memfit::plan {
namespace {

uint64_t Bits(uint64_t numel, double bits_per_element) {
  double bytes = std::ceil(static_cast<double>(numel) * bits_per_element / 8.0);
  return bytes >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(bytes);
}

// Weights as a quantization library leaves them: block linears quantized by `linear`, every
// other floating parameter in 16 bits (torch_dtype), integer tensors and buffers as stored.
// `key` names the rule (SizeRule).
SizeRule Quantized(std::string key, const Model& model,
                   std::shared_ptr<const std::vector<char>> is_linear,
                   std::function<uint64_t(const Tensor&)> linear) {
  const Tensor* base = model.tensors.data();
  return {std::move(key), [base, is_linear, linear](const Tensor& t) {
            size_t i = static_cast<size_t>(&t - base);  // rules only see this model's tensors
            if (i < is_linear->size() && (*is_linear)[i]) return linear(t);
            return LoadedTensorBytes(t, LoadDtype::kBFloat16);
          }};
}

// GGUF files quantize every 2-D weight (embeddings and head included) and keep 1-D in F32.
SizeRule Gguf(std::string_view type, double bits_per_weight) {
  return {fmt::format("gguf:{}", type), [bits_per_weight](const Tensor& t) {
    if (t.kind != TensorKind::kParameter || !IsFloatingPoint(t.dtype) ||
        t.dtype == Dtype::kBlockQuantized) {
      return t.bytes;
    }
    return t.shape.size() >= 2 ? Bits(t.numel, bits_per_weight) : Bits(t.numel, 32);
  }};
}

struct Candidate {
  std::string action;
  int quality_cost;
  std::string quality_note;
  std::string detail;
  std::optional<SizeRule> rule{};  // empty: the plan's dtype
  std::optional<RuntimeBytesFn> runtime{};
  uint64_t context_tokens = 0;
  std::optional<uint64_t> ram_bytes{};  // offload advice
  const Model* model = nullptr;        // smaller sibling
  std::string flags{};
  uint64_t batch = 0;                  // 0: the plan's
};

// Weight-format changes a loaded model can take: another dtype, quantization libraries, GGUF,
// pruning. Not for training (QLoRA is the training search's 4-bit base).
void AddWeightCandidates(const Model& model, const SizeRule& current,
                         std::shared_ptr<const std::vector<char>> linear,
                         std::vector<Candidate>& candidates) {
  bool wide = false;  // floating weights wider than 16 bits at the chosen dtype
  for (const auto& t : model.tensors) {
    if (t.kind == TensorKind::kParameter && IsFloatingPoint(t.dtype) &&
        current.size_of(t) > LoadedTensorBytes(t, LoadDtype::kBFloat16)) {
      wide = true;
      break;
    }
  }
  if (wide) {
    candidates.push_back({"load the weights in bfloat16 (torch_dtype=torch.bfloat16)", 1,
                          "bf16 inference matches fp32 closely", "2 bytes per parameter",
                          DtypeRule(LoadDtype::kBFloat16)});
    candidates.back().flags = "--dtype bfloat16";
  }
  candidates.push_back({"bitsandbytes LLM.int8 (load_in_8bit)", 1, "near-lossless (LLM.int8 paper)",
                        "block linears 1 byte/weight + fp32 scale per row; rest 16-bit",
                        Quantized("bnb-int8", model, linear, [](const Tensor& t) {
                          return t.numel + t.shape[0] * 4;
                        })});
  candidates.back().flags = "--dtype int8";
  candidates.push_back({"bitsandbytes NF4 (load_in_4bit, double quant)", 2,
                        "small loss (QLoRA paper: NF4 matches 16-bit fine-tuning)",
                        "block linears 4 bits + 8-bit absmax per 64 + fp32 per 256 absmax "
                        "= 4.127 bits; rest 16-bit",
                        Quantized("bnb-nf4-dq", model, linear, [](const Tensor& t) {
                          return Bits(t.numel, 4.0 + 8.0 / 64 + 32.0 / (64 * 256));
                        })});
  candidates.back().flags = "--dtype int4";
  candidates.push_back({"GPTQ or AWQ 4-bit, group size 128", 2, "small loss at 4 bits",
                        "block linears 4 bits + fp16 scale and 4-bit zero per 128 = 4.156 bits; "
                        "rest 16-bit",
                        Quantized("gptq-awq-4bit-g128", model, linear, [](const Tensor& t) {
                          return Bits(t.numel, 4.0 + 16.0 / 128 + 4.0 / 128);
                        })});
  // GGUF whole-file effective bits per weight (NyxKrage's table; Q8_0/Q6_K exact block sizes).
  struct GgufType { const char* name; double bpw; int cost; const char* note; };
  for (const GgufType& g : {GgufType{"Q8_0", 8.5, 1, "near-lossless"},
                            GgufType{"Q6_K", 6.5625, 1, "near-lossless"},
                            GgufType{"Q5_K_M", 5.69, 2, "small loss"},
                            GgufType{"Q4_K_M", 4.85, 2, "small loss, the usual default"},
                            GgufType{"Q3_K_M", 3.91, 3, "noticeable loss"},
                            GgufType{"Q2_K", 3.35, 4, "large loss"}}) {
    candidates.push_back({fmt::format("GGUF {} (llama.cpp)", g.name), g.cost, g.note,
                          fmt::format("{} bits per weight over 2-D weights, norms F32", g.bpw),
                          Gguf(g.name, g.bpw)});
  }
  candidates.push_back(
      {"prune block linears to 2:4 semi-structured sparsity", 3,
       "moderate loss unless fine-tuned after pruning (SparseGPT, Wanda)",
       "16-bit: half the values + 2-bit index per kept value = 9/16 of the bytes (PyTorch "
       "to_sparse_semi_structured)",
       Quantized("prune-2:4", model, linear, [](const Tensor& t) {
         return LoadedTensorBytes(t, LoadDtype::kBFloat16) / 16 * 9;
       })});
  candidates.push_back(
      {"prune block linears 50% unstructured, stored as CSR", 3,
       "moderate loss; CSR saves memory only past 80% sparsity with int64 indices",
       "nnz x (2-byte value + 8-byte int64 column index) + (rows + 1) x 8 row pointers",
       Quantized("prune-50-csr", model, linear, [](const Tensor& t) {
         return t.numel / 2 * 10 + (t.shape[0] + 1) * 8;
       })});
}

// Training: the cheapest combination of settings that fits (memfit/train_search.h), placed on
// the request's GPUs like the plan; nullopt when none does.
std::optional<Advice> SearchedTraining(const FitModel& fit_model, const FitRequest& request,
                                       const RuntimeModel& runtime, const FitPlan& plan,
                                       const SizeRule& current) {
  if (!runtime.train_options) return std::nullopt;
  TrainOptions base = *runtime.train_options;
  base.batch = runtime.batch;
  base.seq = runtime.context_tokens;
  auto judge = [&](const TrainSetup& setup) -> Result<TrainJudgement> {
    MEMFIT_ASSIGN_OR_RETURN(RuntimeAlternative alt, TrainRuntime(fit_model.model(), setup.options));
    MEMFIT_ASSIGN_OR_RETURN(RuntimeBytes bytes,
                            alt.bytes_for(runtime.context_tokens, setup.options.batch));
    const SizeRule rule = alt.weight_size_of
                              ? SizeRule{"runtime:" + alt.name, alt.weight_size_of}
                              : current;
    Placement placed = Place(fit_model, request, rule, bytes, false, nullptr, false);
    return TrainJudgement{placed.verdict, placed.total_bytes};
  };
  TrainSearchResult found = SearchTrainSetup(base, judge);
  if (!found.setup) return std::nullopt;
  std::string action;
  for (const auto& c : found.setup->changes) action += (action.empty() ? "" : " + ") + c;
  return Advice{.action = action,
                .quality_cost = found.setup->quality_cost,
                .quality_note = "the cheapest combination that fits (of " +
                                std::to_string(found.tried) + " tried in rank order)",
                .total_bytes = found.judgement.need_bytes,
                .saved_bytes = static_cast<int64_t>(plan.total_bytes) -
                               static_cast<int64_t>(found.judgement.need_bytes),
                .verdict = found.judgement.verdict,
                .detail = "training estimate with these settings, placed on the GPUs",
                .flags = found.setup->flags};
}

}  // namespace

std::vector<Advice> BuildAdvice(const FitModel& fit_model, const FitRequest& request,
                                const RuntimeModel& runtime, const FitPlan& plan) {
  const Model& model = fit_model.model();
  const ModuleTree& tree = fit_model.tree();
  const SizeRule current = WeightRule(runtime, request.dtype);
  const auto linear = fit_model.sizes().LinearWeights(model, tree);
  std::vector<Candidate> candidates;
  const bool training = runtime.task == "train";
  if (!training) AddWeightCandidates(model, current, linear, candidates);
  if (!request.ram_bytes && plan.verdict == Verdict::kDoesNotFit && runtime.offload_allowed) {
    Candidate c{"offload to CPU RAM (device_map=\"auto\" with max_memory[\"cpu\"])", 0,
                "none; decoding slows to PCIe speed for the offloaded part", ""};
    c.ram_bytes = UINT64_MAX;
    c.flags = "--ram unlimited";
    candidates.push_back(std::move(c));
  }
  // Halving the context shrinks a KV cache; a training run's sequences are its data.
  if (runtime.bytes_for && runtime.context_tokens > 1 && !training) {
    Candidate c{fmt::format("halve the context to {} tokens", runtime.context_tokens / 2), 1,
                "longer prompts no longer fit", "KV cache and activations at half the context"};
    c.runtime = runtime.bytes_for;
    c.context_tokens = runtime.context_tokens / 2;
    c.flags = fmt::format("--context {}", runtime.context_tokens / 2);
    candidates.push_back(std::move(c));
  }
  for (const auto& alt : runtime.alternatives) {
    Candidate c{alt.name, alt.quality_cost, alt.quality_note, "runtime estimate with this setting"};
    c.runtime = alt.bytes_for;
    c.context_tokens = runtime.context_tokens;
    c.flags = alt.flags;
    if (alt.weight_size_of) c.rule = SizeRule{"runtime:" + alt.name, alt.weight_size_of};
    candidates.push_back(std::move(c));
  }

  std::vector<Advice> out;
  auto evaluate = [&](const Candidate& c) {
    RuntimeBytes bytes = plan.runtime;
    if (c.runtime) {
      auto b = (*c.runtime)(c.context_tokens, runtime.batch);
      if (!b) return std::optional<Advice>();
      bytes = *b;
    }
    FitRequest req = request;
    if (c.ram_bytes) req.ram_bytes = c.ram_bytes;
    std::optional<FitModel> sibling;
    if (c.model) sibling.emplace(*c.model);
    Placement placed = Place(sibling ? *sibling : fit_model, req, c.rule ? *c.rule : current,
                             bytes, runtime.offload_allowed, nullptr, false);
    Advice a{.action = c.action,
             .quality_cost = c.quality_cost,
             .quality_note = c.quality_note,
             .total_bytes = placed.total_bytes,
             .saved_bytes = static_cast<int64_t>(plan.total_bytes) -
                            static_cast<int64_t>(placed.total_bytes),
             .verdict = placed.verdict,
             .detail = c.detail,
             .flags = c.flags};
    if (c.ram_bytes) {
      a.detail = fmt::format("needs {} of RAM for the offloaded blocks",
                             FormatBytes(placed.map.offloaded_bytes));
      a.saved_bytes = 0;
    }
    return std::optional<Advice>(std::move(a));
  };
  for (const auto& c : candidates) {
    auto a = evaluate(c);
    // Only what changes something: saves memory, or makes it fit.
    if (a && (a->saved_bytes > 0 || c.ram_bytes)) out.push_back(std::move(*a));
  }
  // The smaller siblings, largest first: the first that fits is offered, none when none fits.
  for (const Model* sibling : request.smaller_siblings) {
    if (!sibling) continue;
    Candidate c{fmt::format("use the smaller sibling {}", sibling->name), 3,
                "a smaller model of the same family: lower quality", "its weights at the same dtype"};
    c.model = sibling;
    c.rule = DtypeRule(request.dtype);  // its own tensors, at the request's dtype
    auto a = evaluate(c);
    if (a && a->verdict != Verdict::kDoesNotFit && a->saved_bytes > 0) {
      out.push_back(std::move(*a));
      break;
    }
  }
  if (training && plan.verdict != Verdict::kFits) {
    if (auto searched = SearchedTraining(fit_model, request, runtime, plan, current)) {
      out.push_back(std::move(*searched));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Advice& x, const Advice& y) {
    if (x.verdict != y.verdict) return x.verdict < y.verdict;
    if (x.quality_cost != y.quality_cost) return x.quality_cost < y.quality_cost;
    return x.saved_bytes > y.saved_bytes;
  });
  return out;
}

}  // namespace memfit::plan
