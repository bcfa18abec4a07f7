#pragma once
// Repeated modules (a layer's routed experts) written once with a count under
// BuildOptions::compact_repeats (Tensor::copies, memfit/model.h). A per-expert checkpoint of
// 10^5 tensors then builds in about a thousandth of the time; docs/benchmarks.md, "The compact
// expert form".

#include <cstdint>
#include <functional>
#include <string>

#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

// True when `q` provably decides every module below <path>.<k> as it decides the same module
// below <path>.0: no regex skip pattern, no digit-bearing skip pattern whose digits can stand
// where the index stands, and no per-module method (ModelOpt MIXED_PRECISION) below `path`.
// Conservative: false sends the caller to the expanded form, never to a wrong count.
bool IndexBlind(const Quantization& q, const std::string& path);

// The `count` modules <path>.0 .. <path>.<count-1>, each written by `emit(module)`, in that
// order. Under BuildOptions::compact_repeats, when IndexBlind(q, path) holds and `emit` writes
// the same tensors for every module but their names, only copy 0 is written, marked as standing
// for all `count` (ModelBuilder::MarkRepeat). `emit` must not look at the index.
void RepeatedModules(ModelBuilder& b, const Quantization& q, const std::string& path,
                     uint64_t count, const std::function<void(const std::string& module)>& emit);

}  // namespace memfit::arch
