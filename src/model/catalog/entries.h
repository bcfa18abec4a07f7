#pragma once
// The catalog's data, split by family into entries_<family>.cc files; entries.cc joins them.

#include <span>

#include "memfit/catalog.h"

namespace memfit::catalog {

std::span<const CatalogEntry> Entries();

// One list per entries_<family>.cc file.
std::span<const CatalogEntry> EntriesEncoders();  // BERT, DistilBERT, RoBERTa, T5
std::span<const CatalogEntry> EntriesGpt();       // GPT-2, GPT-J, Pythia, OPT, BLOOM, Falcon, MPT
std::span<const CatalogEntry> EntriesLlama();     // Llama 2, 3, 3.1, 3.2
std::span<const CatalogEntry> EntriesMistral();   // Mistral, Mixtral
std::span<const CatalogEntry> EntriesQwen();      // Qwen2.5, Qwen3, Qwen3-MoE
std::span<const CatalogEntry> EntriesGemmaPhi();  // Gemma, Gemma 2, Phi-3

}  // namespace memfit::catalog
