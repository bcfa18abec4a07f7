#pragma once
// memfit's built-in catalog of widely used models: memfit's own data, written from the published
// hyperparameters, compiled into the binary so the main job runs offline.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace memfit {

struct CatalogEntry {
  std::string_view id;           // Hub id, e.g. "google-bert/bert-base-cased"
  std::string_view family;       // "bert", "llama", ...
  std::string_view description;  // one line
  std::string_view config_json{};      // a config.json with the fields the builder needs
  std::string_view smaller_sibling{};  // a smaller model of the same family in the catalog, or ""
  // What the config builds (parameters, tied once; stored bytes), written in the entry's file so
  // that listing the catalog builds nothing; catalog_test.cc checks both against the build.
  uint64_t parameters = 0;
  uint64_t stored_bytes = 0;
};

std::span<const CatalogEntry> Catalog();
// By Hub id or by the part after the slash ("bert-base-cased"), case-insensitive.
const CatalogEntry* FindCatalogEntry(std::string_view id);

}  // namespace memfit
