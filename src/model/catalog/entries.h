#pragma once
// The catalog's data: one config file per model under src/model/catalog/models/ (docs/catalog.md),
// read from the binary on first use.

#include <span>
#include <string>

#include "memfit/catalog.h"

namespace memfit::catalog {

std::span<const CatalogEntry> Entries();
// Files that are not a catalog entry (a build defect; catalog_test.cc checks there are none).
std::span<const std::string> LoadErrors();

}  // namespace memfit::catalog
