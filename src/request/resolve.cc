// MODEL -> inputs: a local path, the HF cache, the Hub (with memfit's cache), the catalog.
// docs/hub.md, "Resolution order".

#include "memfit/resolve.h"

#include <filesystem>

#include "memfit/catalog.h"
#include "memfit/hub.h"
#include "memfit/local_source.h"

namespace memfit {

Result<ResolvedModel> ResolveModel(const ModelQuery& query) {
  LocalResolveOptions options{.revision = query.revision, .hf_hub_cache = DefaultHfHubCache()};
  // Hub ids and URLs that are not local paths go to the Hub client (short names without a slash
  // try the catalog first).
  std::error_code ec;
  if (!std::filesystem::exists(query.spec, ec) &&
      (LooksLikeHubUrl(query.spec) ||
       (LooksLikeHubId(query.spec) &&
        (query.spec.find('/') != std::string::npos || !FindCatalogEntry(query.spec))))) {
    return ResolveHubQuery(query, options.hf_hub_cache);
  }
  MEMFIT_ASSIGN_OR_RETURN(LocalResolution local, ResolveLocalModel(query.spec, options));
  if (local.kind != InputKind::kNotFound) return ResolvedModel{.inputs = std::move(local.inputs)};
  return WithKind(
      MakeError("{}: model not found. memfit looked for (1) a local directory with config.json or "
                "safetensors files, (2) a .safetensors or config.json file, (3) a Hub id in the "
                "local Hugging Face cache ({}), (4) a name in the built-in catalog (`memfit models`)",
                query.spec, options.hf_hub_cache),
      ErrorKind::kNotFound);
}

Result<Model> ResolveAndDescribe(const ModelQuery& query, const DescribeOptions& options) {
  MEMFIT_ASSIGN_OR_RETURN(ResolvedModel resolved, ResolveModel(query));
  return DescribeModel(resolved.inputs, options);
}

}  // namespace memfit
