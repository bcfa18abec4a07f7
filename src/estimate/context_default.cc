// The default context, in one place (memfit/context_default.h).

#include "memfit/context_default.h"

#include <algorithm>

#include <fmt/format.h>

namespace memfit {

ContextChoice ChooseContext(uint64_t requested, uint64_t model_max, ContextUse use) {
  if (requested > 0) {
    if (model_max > 0 && requested > model_max) {
      return {requested, fmt::format("context: {} tokens is past the model's maximum of {} "
                                     "(max_position_embeddings): counted as asked, but the model "
                                     "was not trained for it",
                                     requested, model_max)};
    }
    return {.tokens = requested};
  }
  switch (use) {
    case ContextUse::kLlamaCpp:
      if (model_max) {
        return {model_max, fmt::format("context: the model's training context, {} tokens "
                                       "(llama.cpp -c 0; --context N to change)", model_max)};
      }
      return {4096, "context: 4096 tokens (the model names no training context; --context N to "
                    "change)"};
    case ContextUse::kServe:
    case ContextUse::kTrain: {
      const uint64_t cap = use == ContextUse::kServe ? 8192 : 2048;
      const char* what = use == ContextUse::kServe ? "serving" : "training";
      if (!model_max) {
        const uint64_t t = use == ContextUse::kServe ? 4096 : 2048;
        return {t, fmt::format("context: {} tokens (memfit's default for {}; the model names no "
                               "maximum; --context N to change)", t, what)};
      }
      const uint64_t t = std::min(model_max, cap);
      return {t, fmt::format("context: {} tokens (memfit's default for {}: the model's {} capped "
                             "at {}; --context N to change)", t, what, model_max, cap)};
    }
  }
  return {.tokens = 4096};
}

}  // namespace memfit
