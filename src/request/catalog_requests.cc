// The requests that read only what is compiled in: inspect (a model's tensors; it resolves the
// model), gpus (the GPU catalog) and models (the model catalog).

#include "memfit/requests.h"
#include "memfit/units.h"

namespace memfit {

Result<InspectAnswer> RunInspectRequest(const InspectRequest& request) {
  if (request.depth < 1 || request.depth > 16) {
    return MakeError("--depth {}: expected 1 to 16", request.depth);
  }
  InspectAnswer answer;
  answer.depth = static_cast<int>(request.depth);
  MEMFIT_ASSIGN_OR_RETURN(answer.model, ResolveAndDescribeShared(request.model));
  return answer;
}

Result<std::vector<const GpuSpec*>> RunGpusRequest(const GpusRequest& request) {
  uint64_t min_bytes = 0;
  if (!request.min_memory.empty()) {
    auto bytes = ParseByteSize(request.min_memory);
    if (!bytes) return Wrap(bytes.error(), "--min-memory");
    min_bytes = *bytes;
  }
  std::optional<GpuVendor> vendor;
  if (!request.vendor.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(vendor, ParseGpuVendor(request.vendor));
  }
  std::vector<const GpuSpec*> selected;
  for (const auto& g : GpuCatalog()) {
    if (MemoryBytes(g) < min_bytes) continue;
    if (vendor && g.vendor != *vendor) continue;
    selected.push_back(&g);
  }
  return selected;
}

Result<std::vector<const CatalogEntry*>> RunModelsRequest(const ModelsRequest& request) {
  std::vector<const CatalogEntry*> entries;
  for (const auto& e : Catalog()) {
    if (!request.family.empty() && e.family != request.family) continue;
    entries.push_back(&e);
  }
  return entries;
}

}  // namespace memfit
