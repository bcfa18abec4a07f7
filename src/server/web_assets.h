#pragma once
// The web page's files, embedded into the binary at build time (cmake/embed_assets.cmake).

#include <span>
#include <string_view>

namespace memfit::server {

struct WebAsset {
  std::string_view path;          // served path, e.g. "/index.html"
  std::string_view content_type;
  std::string_view body;
};

std::span<const WebAsset> WebAssets();

}  // namespace memfit::server
