#pragma once
// The catalog's data, split by family into entries_<family>.cc files.

#include <span>

#include "memfit/catalog.h"

namespace memfit::catalog {

std::span<const CatalogEntry> Entries();

}  // namespace memfit::catalog
