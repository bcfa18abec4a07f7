#pragma once
// llama.cpp flags and the runners behind `memfit gguf inference` and `memfit gguf fit`, also used
// by `memfit inference` and `memfit fit` for GGUF models (a .gguf file, --engine llama.cpp, a Hub
// repository's GGUF model).

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "cli/model_loader.h"
#include "memfit/llamacpp.h"
#include "memfit/render.h"
#include "memfit/requests.h"
#include "api/llamacpp_answer.h"

namespace memfit::cli {

// llama.cpp's flags as a plain struct (api/llamacpp_answer.h): the CLI binds them, the API and
// `memfit inference|fit` fill them from their requests.
using LlamaCppCliArgs = api::LlamaCppArgs;

// Adds llama.cpp's flags (llama.cpp spellings where CLI11 allows them) to a subcommand.
void AddLlamaCppOptions(CLI::App& cmd, LlamaCppCliArgs& args);
// Per-device memory for the given flags. `loaded`: the model's inputs when the caller has already
// resolved MODEL (and found a GGUF model); otherwise MODEL is resolved here.
void RunLlamaCppInference(const ModelArgs& model, const LlamaCppCliArgs& args, Context& ctx,
                          std::optional<LoadedInputs> loaded = std::nullopt);
// Like llama.cpp --fit: the largest offload and longest context for --gpu/--ram (exit code 1 when
// it does not fit).
void RunLlamaCppFit(const ModelArgs& model, const LlamaCppCliArgs& args, Context& ctx,
                    std::optional<LoadedInputs> loaded = std::nullopt);

// `memfit gguf inference|fit MODEL.gguf ...`.
void AddGgufCommand(CLI::App& app, Context& ctx);

}  // namespace memfit::cli
