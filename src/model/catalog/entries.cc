// The built-in catalog: one JSON file per model under src/model/catalog/models/, embedded at build
// time (catalog_files.h). Each file is {id, family, description, smaller_sibling, parameters,
// stored_bytes, config}; the
// config is memfit's own data, written from the hyperparameters the model's authors published
// (model cards, papers, config.json on the Hub); see docs/catalog.md.

#include "model/catalog/entries.h"

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/catalog/catalog_files.h"

namespace memfit::catalog {
namespace {

struct Loaded {
  std::deque<std::string> text;  // the strings the entries' views point into
  std::vector<CatalogEntry> entries;
  std::vector<std::string> errors;
};

std::string_view Keep(Loaded& l, std::string s) { return l.text.emplace_back(std::move(s)); }

Loaded Load() {
  Loaded l;
  for (const EmbeddedFile& file : CatalogFiles()) {
    const std::string where(file.path);
    auto j = nlohmann::json::parse(file.body, nullptr, /*allow_exceptions=*/false);
    auto text = [&](const char* key) -> std::optional<std::string> {
      if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return std::nullopt;
      return j[key].get<std::string>();
    };
    const auto id = text("id"), family = text("family"), description = text("description"),
               sibling = text("smaller_sibling");
    auto count = [&](const char* key) -> std::optional<uint64_t> {
      if (!j.is_object() || !j.contains(key) || !j[key].is_number_unsigned()) return std::nullopt;
      return j[key].get<uint64_t>();
    };
    const auto parameters = count("parameters"), stored_bytes = count("stored_bytes");
    if (!id || !family || !description || !sibling || !parameters || !stored_bytes ||
        !j.contains("config") || !j["config"].is_object()) {
      l.errors.push_back(where + ": expected {id, family, description, smaller_sibling, "
                                 "parameters, stored_bytes, config}");
      continue;
    }
    l.entries.push_back({Keep(l, *id), Keep(l, *family), Keep(l, *description),
                         Keep(l, j["config"].dump()), Keep(l, *sibling), *parameters, *stored_bytes});
  }
  return l;
}

const Loaded& Catalog() {
  static const Loaded kLoaded = Load();
  return kLoaded;
}

}  // namespace

std::span<const CatalogEntry> Entries() { return Catalog().entries; }

std::span<const std::string> LoadErrors() { return Catalog().errors; }

}  // namespace memfit::catalog
