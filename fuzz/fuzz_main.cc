// libFuzzer entry points shared by every target in fuzz/ (see fuzz_support.h).

#include <sanitizer/allocator_interface.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "fuzz/fuzz_support.h"
#include "memfit/estimate_load.h"
#include "memfit/render.h"

namespace memfit::fuzz {
namespace {

// Net heap growth during one Run(): updated from the sanitizer's malloc/free hooks, which run
// inside the allocator and so must not allocate.
bool g_counting = false;
int64_t g_live = 0;
int64_t g_peak = 0;

void MallocHook(const volatile void*, size_t size) {
  if (!g_counting) return;
  g_live += static_cast<int64_t>(size);
  if (g_live > g_peak) g_peak = g_live;
}

void FreeHook(const volatile void* ptr) {
  if (!g_counting || ptr == nullptr) return;
  g_live -= static_cast<int64_t>(__sanitizer_get_allocated_size(const_cast<const void*>(ptr)));
}

void WriteSeeds(const char* dir) {
  std::filesystem::create_directories(dir);
  auto seeds = Seeds();
  for (size_t i = 0; i < seeds.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "seed-%04zu", i);
    std::ofstream out(std::filesystem::path(dir) / name, std::ios::binary);
    out.write(seeds[i].data(), static_cast<std::streamsize>(seeds[i].size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s/%s\n", dir, name);
      std::exit(1);
    }
  }
  std::fprintf(stderr, "wrote %zu seeds to %s\n", seeds.size(), dir);
}

}  // namespace

void CheckError(const Error& error) {
  Require(!error.message.empty(), "an error with an empty message");
  Require(error.message.find('\n') == std::string::npos, "an error message of several lines");
}

uint32_t Choice(std::string_view input) {
  uint32_t h = 2166136261u;  // FNV-1a over the last 8 bytes: cheap, and mutations flip it
  for (size_t i = input.size() > 8 ? input.size() - 8 : 0; i < input.size(); ++i) {
    h = (h ^ static_cast<unsigned char>(input[i])) * 16777619u;
  }
  return h;
}

void Exercise(Model model, std::string_view label, uint32_t choice) {
  model.name = std::string(label);
  const auto totals = ComputeTotals(model);
  Require(totals.resident_bytes >= totals.buffer_bytes, "resident bytes below buffer bytes");
  LoadOptions load_options;
  load_options.dtypes.push_back(LoadDtype::kAsStored);
  const LoadEstimate load = EstimateLoad(model, load_options);
  Require(load.rows.size() == load_options.dtypes.size(), "one load row per dtype");
  for (const auto& row : load.rows) {
    Require(row.largest_block_bytes <= row.total_bytes, "largest block above the total");
  }
  auto accelerate = EstimateAccelerate(model);
  CheckResult(accelerate);
  Require(accelerate.has_value(), "accelerate estimate failed on its default dtypes");
  for (auto format : {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kCsv,
                      OutputFormat::kMarkdown}) {
    Require(!RenderLoadEstimate(model, load, format).empty(), "empty load report");
    Require(!RenderAccelerate(model.name, *accelerate, format).empty(), "empty accelerate report");
    Require(!RenderInspect(model, format, 1 + static_cast<int>(choice % 3)).empty(),
            "empty inspect report");
  }
}

void DescribeAndExercise(const ModelInputs& inputs, std::string_view label, uint32_t choice) {
  {
    const bool accelerate_mode = choice % 2 == 1;
    DescribeOptions options;
    options.build.buffers =
        accelerate_mode ? BufferConvention::kTransformers442 : BufferConvention::kCurrent;
    options.build.max_tensors = kFuzzMaxBuiltTensors;
    options.prefer_config = accelerate_mode;
    auto model = DescribeModel(inputs, options);
    CheckResult(model);
    if (model) Exercise(std::move(*model), label, choice / 2);
  }
}

void Require(bool condition, std::string_view what) {
  if (condition) return;
  std::fprintf(stderr, "memfit fuzz: invariant violated: %.*s\n", static_cast<int>(what.size()),
               what.data());
  std::abort();
}

}  // namespace memfit::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("MEMFIT_FUZZ_WRITE_SEEDS"); dir && *dir) {
    memfit::fuzz::WriteSeeds(dir);
    std::exit(0);
  }
  __sanitizer_install_malloc_and_free_hooks(memfit::fuzz::MallocHook, memfit::fuzz::FreeHook);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace memfit::fuzz;
  g_live = g_peak = 0;
  g_counting = true;
  Run(std::string_view(reinterpret_cast<const char*>(data), size));
  g_counting = false;
  const uint64_t budget = kAllocRatio * size + kAllocSlack;
  if (static_cast<uint64_t>(g_peak) > budget) {
    std::fprintf(stderr,
                 "memfit fuzz: %zu input bytes grew the heap by %lld bytes, over the budget of "
                 "%llu (%llux input + %llu)\n",
                 size, static_cast<long long>(g_peak), static_cast<unsigned long long>(budget),
                 static_cast<unsigned long long>(kAllocRatio),
                 static_cast<unsigned long long>(kAllocSlack));
    std::abort();
  }
  static const bool report = std::getenv("MEMFIT_FUZZ_ALLOC_REPORT") != nullptr;
  if (report) {
    std::fprintf(stderr, "memfit fuzz: %zu bytes in, peak heap growth %lld bytes\n", size,
                 static_cast<long long>(g_peak));
  }
  return 0;
}
