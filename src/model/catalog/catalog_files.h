#pragma once
// The catalog's config files (src/model/catalog/models/<group>/<org>__<name>.json), embedded into
// the binary at build time by cmake/embed_assets.cmake, in path order.

#include <span>

#include "memfit/embedded_file.h"

namespace memfit::catalog {

std::span<const EmbeddedFile> CatalogFiles();

}  // namespace memfit::catalog
