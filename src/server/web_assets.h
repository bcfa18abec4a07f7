#pragma once
// The web page's files, embedded into the binary at build time (cmake/embed_assets.cmake).

#include <span>

#include "memfit/embedded_file.h"

namespace memfit::server {

std::span<const EmbeddedFile> WebAssets();

}  // namespace memfit::server
