// `--task` -> RuntimeModel. "load" is weights only. "inference" and "train" take their bytes from
// the inference/training estimators (KV cache, activations, optimizer states); this is the one
// place that connects them, so until they are merged those tasks say so instead of guessing.

#include "memfit/fit.h"

namespace memfit {

Result<RuntimeModel> RuntimeForTask(const Model& model, const TaskSettings& settings) {
  RuntimeModel runtime;
  runtime.task = settings.task;
  runtime.batch = settings.batch == 0 ? 1 : settings.batch;
  runtime.max_context_tokens = model.hp.max_position_embeddings;
  runtime.context_tokens =
      settings.context_tokens ? settings.context_tokens : model.hp.max_position_embeddings;
  if (settings.task == "load") return runtime;
  if (settings.task == "inference" || settings.task == "train") {
    // ConnectRuntimeEstimators: fill runtime.bytes_for (and alternatives) from the inference /
    // training estimators here; training also sets offload_allowed = false.
    return MakeError("fit --task {}: the {} memory estimator is not connected to the planner in "
                     "this build; use --task load (weights only) for now",
                     settings.task, settings.task == "train" ? "training" : "inference");
  }
  return MakeError("--task {}: expected load, inference or train", settings.task);
}

}  // namespace memfit
