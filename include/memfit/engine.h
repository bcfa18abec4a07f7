#pragma once
// The inference engines memfit models: what each loads, shards and preallocates differs.

#include <cstdint>
#include <string_view>

#include "memfit/result.h"

namespace memfit {

enum class Engine : uint8_t { kTransformers, kVllm, kSglang, kLlamaCpp };
std::string_view EngineName(Engine engine);  // "transformers", "vllm", "sglang", "llama.cpp"
Result<Engine> ParseEngine(std::string_view name);

}  // namespace memfit
