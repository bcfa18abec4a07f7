// The built-in catalog: the per-family lists of entries_<family>.cc, in one list. Each entry's
// config is memfit's own data, written from the hyperparameters the model's authors published
// (model cards, papers, config.json on the Hub); see docs/catalog.md.

#include "model/catalog/entries.h"

#include <vector>

namespace memfit::catalog {

std::span<const CatalogEntry> Entries() {
  static const std::vector<CatalogEntry> kEntries = [] {
    std::vector<CatalogEntry> all;
    for (auto list : {EntriesEncoders(), EntriesGpt(), EntriesLlama(), EntriesMistral(),
                      EntriesQwen(), EntriesGemmaPhi()}) {
      all.insert(all.end(), list.begin(), list.end());
    }
    return all;
  }();
  return kEntries;
}

}  // namespace memfit::catalog
