#include "cli/model_loader.h"

#include <filesystem>

#include "memfit/catalog.h"
#include "memfit/hub.h"
#include "memfit/local_source.h"

namespace memfit::cli {

void AddModelArgs(CLI::App& command, ModelArgs& args) {
  command.add_option("MODEL", args.spec,
                     "a model directory, a .safetensors or config.json file, a Hub id (local HF "
                     "cache, then the Hub), or a catalog name (see `memfit models`)")
      ->required();
  command.add_option("--revision", args.revision, "branch, tag or commit (default main)");
  command.add_flag("--offline", args.offline, "use only local files and the cache (HF_HUB_OFFLINE=1)");
  command.add_option("--token", args.token, "Hugging Face token for gated or private repos");
  command.add_option("--gguf-file", args.gguf_file,
                     "the GGUF model to read from a Hub repository: a file (any file of a split), "
                     "or a part of one name such as Q4_K_M (see docs/hub.md)");
}

Result<ModelInputs> LoadModelInputs(const ModelArgs& args) {
  MEMFIT_ASSIGN_OR_RETURN(LoadedInputs loaded, LoadModelInputsWithOrigin(args));
  return std::move(loaded.inputs);
}

Result<LoadedInputs> LoadModelInputsWithOrigin(const ModelArgs& args) {
  LocalResolveOptions options{.revision = args.revision, .hf_hub_cache = DefaultHfHubCache()};
  // Hub ids and URLs that are not local paths go to the Hub client (short names without a slash
  // try the catalog first); see docs/hub.md "Resolution order".
  std::error_code ec;
  if (!std::filesystem::exists(args.spec, ec) &&
      (LooksLikeHubUrl(args.spec) ||
       (LooksLikeHubId(args.spec) &&
        (args.spec.find('/') != std::string::npos || !FindCatalogEntry(args.spec))))) {
    return LoadHubModelInputs(args, options.hf_hub_cache);
  }
  MEMFIT_ASSIGN_OR_RETURN(LocalResolution local, ResolveLocalModel(args.spec, options));
  if (local.kind != InputKind::kNotFound) return LoadedInputs{.inputs = std::move(local.inputs)};
  return MakeError(
      "{}: model not found. memfit looked for (1) a local directory with config.json or "
      "safetensors files, (2) a .safetensors or config.json file, (3) a Hub id in the local "
      "Hugging Face cache ({}), (4) a name in the built-in catalog (`memfit models`)",
      args.spec, options.hf_hub_cache);
}

Result<Model> LoadModel(const ModelArgs& args, const DescribeOptions& options) {
  MEMFIT_ASSIGN_OR_RETURN(ModelInputs inputs, LoadModelInputs(args));
  return DescribeModel(inputs, options);
}

}  // namespace memfit::cli
