#pragma once
// A file embedded into the binary at build time (cmake/embed_assets.cmake): the web page's files
// and the model catalog's config files.

#include <string_view>

namespace memfit {

struct EmbeddedFile {
  std::string_view path;          // "/index.html", "/qwen/Qwen__Qwen3-8B.json"
  std::string_view content_type;  // from the extension
  std::string_view body;
};

}  // namespace memfit
