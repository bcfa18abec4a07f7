#pragma once
// The context a request means when it names none (--context absent or 0): decided here, once,
// for every command and the API (docs/cli.md, "Shared vocabulary").

#include <cstdint>
#include <string>

namespace memfit {

enum class ContextUse : uint8_t {
  kServe,     // inference and fit with transformers, vLLM, SGLang
  kTrain,     // train, fit --task train: tokens per sequence
  kLlamaCpp,  // GGUF models: llama.cpp's -c 0, the model's training context
};

struct ContextChoice {
  uint64_t tokens = 0;
  std::string assumption{};  // "" when the request named a context within the model's maximum
};

// `requested` > 0 is kept (past the model's maximum, with an assumption line that says so).
// Otherwise: serving min(the model's max_position_embeddings, 8192),
// training min(max_position_embeddings, 2048), llama.cpp the training context (GGUF
// context_length); 4096 (serving, llama.cpp) or 2048 (training) when the model names none.
ContextChoice ChooseContext(uint64_t requested, uint64_t model_max, ContextUse use);

}  // namespace memfit
