// `memfit validate FILE.csv`: estimate vs measurement for every row memfit can express.

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/command.h"
#include "memfit/describe.h"
#include "formats/json.h"
#include "memfit/render_memory.h"
#include "memfit/validation.h"

namespace memfit::cli {
namespace {

struct ValidateArgs {
  std::string file;
  std::string models_dir;
  std::string format = "table";
};

Result<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError("{}: cannot open", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (ss.str().size() > (64u << 20)) return MakeError("{}: larger than 64 MiB", path);
  return ss.str();
}

void RunValidate(const ValidateArgs& args, Context& ctx) {
  namespace fs = std::filesystem;
  auto format = ParseOutputFormat(args.format);
  if (!format) return ctx.Fail(format.error());
  auto text = ReadText(args.file);
  if (!text) return ctx.Fail(text.error());
  auto rows = ParseMeasuredCsv(*text, args.file);
  if (!rows) return ctx.Fail(rows.error());
  fs::path models = args.models_dir.empty() ? fs::path(args.file).parent_path() / "models"
                                            : fs::path(args.models_dir);
  ModelProvider provider = [&](std::string_view requested,
                               const BuildOptions& build) -> Result<Model> {
    std::string id(requested);
    auto derived = DerivedConfigFor(requested);
    if (derived) id = derived->base_id;
    std::string folder(id);
    for (size_t p = folder.find('/'); p != std::string::npos; p = folder.find('/')) {
      folder.replace(p, 1, "__");
    }
    fs::path config = models / folder / "config.json";
    auto json = ReadText(config.string());
    if (!json) return MakeError("no config.json for {} under {}", id, models.string());
    MEMFIT_ASSIGN_OR_RETURN(HfConfig hf, HfConfig::Parse(*json, config.string()));
    if (derived) {
      nlohmann::json j = hf.raw();
      MEMFIT_ASSIGN_OR_RETURN(nlohmann::json overrides,
                              ParseJson(derived->overrides_json, "derived config " + id));
      for (auto& [k, v] : overrides.items()) j[k] = v;
      MEMFIT_ASSIGN_OR_RETURN(hf, HfConfig::FromJson(std::move(j), config.string() + " (derived)"));
    }
    ModelInputs inputs{.name = std::string(requested), .location = config.string(), .config = std::move(hf)};
    return DescribeModel(inputs, {.build = build, .prefer_config = true});
  };
  std::vector<RowResult> results;
  for (const auto& row : *rows) results.push_back(EvaluateRow(row, provider));
  ctx.out << RenderValidation(results, *format);
}

}  // namespace

void AddValidateCommand(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<ValidateArgs>();
  auto* cmd = app.add_subcommand(
      "validate", "compare memfit with published measurements (a measured.csv file): estimate, "
                  "measurement and error per row and per class");
  cmd->add_option("FILE", a->file, "measured.csv")->required();
  cmd->add_option("--models", a->models_dir, "folder of org__name/config.json (default: FILE's "
                  "folder/models)");
  cmd->add_option("--format", a->format, "table, json, csv or markdown")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
  cmd->callback([a, &ctx] { RunValidate(*a, ctx); });
}

}  // namespace memfit::cli
