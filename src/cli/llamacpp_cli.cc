// `memfit gguf inference` / `memfit gguf fit`: llama.cpp memory for GGUF models.

#include "cli/llamacpp_cli.h"
#include "cli/options_binding.h"
#include "cli/vocabulary.h"

namespace memfit::cli {

void AddLlamaCppOptions(CLI::App& cmd, LlamaCppCliArgs& a) {
  LlamaCppOptions& o = a.options;
  AddContextOption(cmd, o.context_tokens, "tokens per sequence (default: the model's training context)")
      ->each([&a](const std::string&) { a.ctx_given = true; });
  // --batch is sequences in every memfit command; llama.cpp's -b is its logical batch in tokens.
  AddBatchOption(cmd, a.batch_sequences, "parallel sequences (the same as --parallel)")
      ->each([&a](const std::string&) { a.batch_given = true; });
  cmd.add_option("-b,--batch-size", o.batch_tokens, "llama.cpp's logical batch in tokens (default 2048)");
  cmd.add_option("--ubatch,--ubatch-size", o.ubatch_tokens, "physical batch (default 512)");
  cmd.add_option("--parallel,--np", o.parallel, "parallel sequences (default 1)");
  cmd.add_flag("--kv-unified", o.kv_unified, "one KV buffer shared by all sequences");
  cmd.add_option("--ngl,--gpu-layers,--n-gpu-layers", o.gpu_layers, "layers to offload (-1 = all, default)")
      ->each([&a](const std::string&) { a.ngl_given = true; });
  cmd.add_flag("--legacy-ngl", a.legacy_ngl, "older llama.cpp -ngl (blocks first; output only when ngl > blocks)");
  cmd.add_option("--n-cpu-moe", o.n_cpu_moe, "keep the experts of the first N layers on the CPU");
  cmd.add_option("--ts,--tensor-split", a.tensor_split, "GPU split, e.g. 3,1 (default: by free memory)");
  cmd.add_option("--gpus", o.num_gpus, "number of GPUs (default: one per --gpu)");
  cmd.add_option("--gpu", a.gpus,
                 "a GPU: its memory (24GiB; free memory for inference), a catalog name (rtx4090: "
                 "its whole memory) or a count (2xH100); once per GPU");
  cmd.add_option("--cache-type-k,--ctk", o.cache_type_k, "K cache type (f16, q8_0, q4_0, ...)");
  cmd.add_option("--cache-type-v,--ctv", o.cache_type_v, "V cache type (quantized needs flash attention)");
  cmd.add_option("--flash-attn,--fa", a.flash_attn, "on, off or auto (default auto)");
  cmd.add_flag("--no-kv-offload,--nkvo", o.no_kv_offload, "keep the KV cache in host memory");
  cmd.add_flag("--no-mmap", a.no_mmap, "read weights into memory instead of mapping the file");
  cmd.add_flag("--mmap", [&a](int64_t) { a.no_mmap = false; }, "map the file (default)");
  cmd.add_flag("--swa-full", o.swa_full, "full-size cache for sliding-window layers");
  cmd.add_flag("--embeddings", o.embeddings, "embedding outputs too (output buffer)");
  cmd.add_flag("--no-op-offload", a.no_op_offload, "do not run host-weight ops on the GPU");
  cmd.add_option("--cuda-context", a.cuda_context, "CUDA context per GPU (default 250MiB)");
  cmd.add_option("--mmproj", a.mmproj, "multimodal projector GGUF, reported separately");
  cmd.add_option("--format", a.format, "table, json, csv or markdown");
}

void RunLlamaCppInference(const ModelArgs& m, const LlamaCppCliArgs& a, Context& ctx,
                          std::optional<LoadedInputs> given) {
  auto format = ParseOutputFormat(a.format);
  if (!format) return ctx.Fail(format.error());
  auto options = api::ResolveLlamaCppArgs(a);
  if (!options) return ctx.Fail(options.error());
  if (a.batch_given) {
    ctx.Note("--batch counts sequences (llama.cpp --parallel); llama.cpp's logical batch in "
             "tokens is -b/--batch-size");
  }
  auto text = WithQuery(m, [&](ModelQuery query) {
    return api::LlamaCppInferenceText(query, a, *options, *format, std::move(given));
  });
  if (!text) return ctx.Fail(text.error());
  ctx.out << *text;
}

void RunLlamaCppFit(const ModelArgs& m, const LlamaCppCliArgs& a, Context& ctx,
                    std::optional<LoadedInputs> given) {
  auto format = ParseOutputFormat(a.format);
  if (!format) return ctx.Fail(format.error());
  auto report = WithQuery(m, [&](ModelQuery query) {
    return api::LlamaCppFitReport(query, a, *format, std::move(given));
  });
  if (!report) return ctx.Fail(report.error());
  ctx.out << report->text;
  if (!report->fits) ctx.exit_code = 1;
}

void AddGgufCommand(CLI::App& app, Context& ctx) {
  auto* gguf = app.add_subcommand("gguf", "llama.cpp memory for GGUF models (per device, partial offload, fit)");
  gguf->require_subcommand(1);
  struct State {
    ModelArgs model;
    ModelQuery query;  // the option table's targets before BindOptions points them at `model`
    LlamaCppCliArgs args;
  };
  auto inference_state = std::make_shared<State>();
  auto* inference = gguf->add_subcommand("inference", "per-device llama.cpp memory for the given flags");
  AddModelArgs(*inference, inference_state->model);
  BindOptions(*inference, api::ModelOptions(inference_state->query), ctx, &inference_state->model);
  AddLlamaCppOptions(*inference, inference_state->args);
  AddCurveOptions(*inference, inference_state->args.curve, inference_state->args.curve_gpus);
  inference->callback([inference_state, &ctx] { RunLlamaCppInference(inference_state->model, inference_state->args, ctx); });

  auto fit_state = std::make_shared<State>();
  auto* fit = gguf->add_subcommand("fit", "largest offload and longest context that fit, like llama.cpp --fit");
  AddModelArgs(*fit, fit_state->model);
  BindOptions(*fit, api::ModelOptions(fit_state->query), ctx, &fit_state->model);
  AddLlamaCppOptions(*fit, fit_state->args);
  fit->add_option("--ram", fit_state->args.ram, "host memory to check against");
  fit->add_option("--fit-target,--fitt", fit_state->args.fit_target_mib, "margin per GPU in MiB (default 1024)")
      ->delimiter(',');
  fit->add_option("--fit-ctx,--fitc", fit_state->args.fit_ctx, "minimum context (default 4096)");
  fit->callback([fit_state, &ctx] { RunLlamaCppFit(fit_state->model, fit_state->args, ctx); });
}

}  // namespace memfit::cli
