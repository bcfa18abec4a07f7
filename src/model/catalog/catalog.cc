// The built-in catalog. Each entry's config is memfit's own data, written from the hyperparameters
// the model's authors published (model cards, papers, config.json on the Hub); see docs/catalog.md.

#include "memfit/catalog.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "model/catalog/entries.h"

namespace memfit {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::span<const CatalogEntry> Catalog() { return catalog::Entries(); }

const CatalogEntry* FindCatalogEntry(std::string_view id) {
  for (const auto& e : Catalog()) {
    if (EqualsIgnoreCase(e.id, id)) return &e;
  }
  for (const auto& e : Catalog()) {
    auto slash = e.id.find('/');
    if (slash != std::string_view::npos && EqualsIgnoreCase(e.id.substr(slash + 1), id)) return &e;
  }
  return nullptr;
}

}  // namespace memfit
