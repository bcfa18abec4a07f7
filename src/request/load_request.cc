// A LoadRequest (memfit/requests.h) -> the model and its load estimate, or accelerate's view of
// it. The checks run in the order `memfit estimate-memory` always ran them.

#include "memfit/requests.h"

namespace memfit {
namespace {

// The library accelerate would build the model with: --library_name, else the config's kind
// (timm's config.json names an "architecture" and no "model_type"), as the Hub's library_name.
Result<std::string> AccelerateLibrary(const LoadRequest& r, const ModelInputs& inputs) {
  const bool timm_config = inputs.config && inputs.config->model_type().empty() &&
                           inputs.config->Has("architecture");
  const std::string detected = timm_config ? "timm" : "transformers";
  if (r.library_name.empty() || !inputs.config) return detected;
  if (r.library_name != detected) {
    return MakeError("{}: --library_name {}: the config is a {} config (accelerate would fail to "
                     "build it with {})",
                     r.model.spec, r.library_name, detected, r.library_name);
  }
  return r.library_name;
}

Result<LoadAnswer> RunAccelerate(const LoadRequest& r) {
  LoadAnswer answer;
  MEMFIT_ASSIGN_OR_RETURN(std::shared_ptr<const ResolvedModel> resolved, ResolveModelShared(r.model));
  const ModelInputs& inputs = resolved->inputs;
  MEMFIT_ASSIGN_OR_RETURN(answer.library, AccelerateLibrary(r, inputs));
  DescribeOptions options{.build = {.buffers = BufferConvention::kTransformers442},
                          .prefer_config = true};
  options.build.ignore_quantization = true;  // accelerate builds the unquantized model
  if (inputs.config) {
    for (const auto& key : inputs.config->auto_map_keys()) {
      if (key.starts_with("AutoModelFor")) {
        options.build.head_class = key;
        break;
      }
    }
  }
  MEMFIT_ASSIGN_OR_RETURN(answer.model, DescribeResolvedShared(r.model, *resolved, options));
  AccelerateOptions acc;
  if (!r.dtypes.empty()) acc.dtypes = r.dtypes;
  MEMFIT_ASSIGN_OR_RETURN(answer.accelerate, EstimateAccelerate(answer.model->model(), acc));
  answer.without_config = !inputs.config;
  return answer;
}

}  // namespace

Result<LoadAnswer> RunLoadRequest(const LoadRequest& r) {
  if (!r.library_name.empty() && r.library_name != "transformers" && r.library_name != "timm") {
    return MakeError("--library_name {}: expected transformers or timm", r.library_name);
  }
  if (r.accelerate) return RunAccelerate(r);
  LoadOptions options;
  if (!r.dtypes.empty()) {
    options.dtypes.clear();
    for (const auto& d : r.dtypes) {
      MEMFIT_ASSIGN_OR_RETURN(LoadDtype dtype, ParseLoadDtype(d));
      options.dtypes.push_back(dtype);
    }
  }
  LoadAnswer answer;
  // The load table takes compact models (a layer's experts once, with a count): a per-expert
  // checkpoint of 10^5 tensors is described in milliseconds. Its renderers read the model's
  // fields, never its tensors.
  DescribeOptions compact;
  compact.build.compact_repeats = true;
  MEMFIT_ASSIGN_OR_RETURN(answer.model, ResolveAndDescribeShared(r.model, compact));
  answer.estimate = EstimateLoad(answer.model->ResidentLoadSummary(), options);
  return answer;
}

}  // namespace memfit
