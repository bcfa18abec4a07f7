// `memfit models`: the built-in catalog (a ModelsRequest, memfit/requests.h); `--export-configs DIR` writes each entry's config.json
// (DIR/<org>__<name>/config.json) for the GPU measurement harness in validation/.

#include <filesystem>
#include <fstream>

#include "cli/command.h"
#include "cli/options_binding.h"
#include "memfit/catalog.h"
#include "memfit/render.h"
#include "memfit/requests.h"
#include "formats/json.h"

namespace memfit::cli {
namespace {

Status ExportConfigs(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& e : Catalog()) {
    std::string folder(e.id);
    for (size_t pos; (pos = folder.find('/')) != std::string::npos;) folder.replace(pos, 1, "__");
    fs::create_directories(fs::path(dir) / folder, ec);
    if (ec) return MakeError("{}: cannot create directory: {}", dir, ec.message());
    std::ofstream file(fs::path(dir) / folder / "config.json");
    auto json = nlohmann::json::parse(e.config_json);
    file << DumpJson(json) << "\n";
    if (!file) return MakeError("{}: cannot write config.json", (fs::path(dir) / folder).string());
  }
  return Ok{};
}

}  // namespace

void AddModelsCommand(CLI::App& app, Context& ctx) {
  struct Args {
    ModelsRequest request;
    std::string format = "table";
    std::string export_dir;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("models", "the built-in catalog of models (works offline)");
  BindOptions(*cmd, api::Options(args->request), ctx);
  AddFormatOption(*cmd, args->format);
  cmd->add_option("--export-configs", args->export_dir,
                  "write each entry's config.json under this directory");
  cmd->callback([args, &ctx] {
    if (!args->export_dir.empty()) {
      auto status = ExportConfigs(args->export_dir);
      if (!status) return ctx.Fail(status.error());
      ctx.out << "wrote " << Catalog().size() << " configs under " << args->export_dir << "\n";
      return;
    }
    auto entries = RunModelsRequest(args->request);
    if (!entries) return ctx.Fail(entries.error());
    ctx.out << RenderModelList(*entries, *ParseOutputFormat(args->format));
  });
}

}  // namespace memfit::cli
