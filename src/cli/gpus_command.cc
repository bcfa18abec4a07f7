// `memfit gpus`: the built-in accelerator catalog, filtered by memory and vendor.

#include "cli/command.h"
#include "memfit/gpu.h"
#include "memfit/render_fit.h"
#include "memfit/units.h"

namespace memfit::cli {

void AddGpusCommand(CLI::App& app, Context& ctx) {
  struct Args {
    std::string min_memory;
    std::string vendor;
    std::string format = "table";
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "gpus", "the built-in GPU catalog: memory, bandwidth, dense bf16 TFLOPS and their source");
  cmd->add_option("--min-memory", args->min_memory, "only GPUs with at least this memory (24GiB)");
  cmd->add_option("--vendor", args->vendor, "nvidia, amd, apple or intel");
  cmd->add_option("--format", args->format, "table, json, csv or markdown")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
  cmd->callback([args, &ctx] {
    uint64_t min_bytes = 0;
    if (!args->min_memory.empty()) {
      auto bytes = ParseByteSize(args->min_memory);
      if (!bytes) return ctx.Fail(Wrap(bytes.error(), "--min-memory"));
      min_bytes = *bytes;
    }
    std::optional<GpuVendor> vendor;
    if (!args->vendor.empty()) {
      auto v = ParseGpuVendor(args->vendor);
      if (!v) return ctx.Fail(v.error());
      vendor = *v;
    }
    std::vector<const GpuSpec*> selected;
    for (const auto& g : GpuCatalog()) {
      if (MemoryBytes(g) < min_bytes) continue;
      if (vendor && g.vendor != *vendor) continue;
      selected.push_back(&g);
    }
    auto format = ParseOutputFormat(args->format);
    if (!format) return ctx.Fail(format.error());
    ctx.out << RenderGpuList(selected, *format);
    if (selected.empty()) ctx.Note("no GPU in the catalog matches these filters");
  });
}

}  // namespace memfit::cli
