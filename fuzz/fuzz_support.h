#pragma once
// The contract of a memfit fuzz target. A target is one file, fuzz/<name>_fuzz.cc, that defines
// the two functions below; fuzz_main.cc supplies libFuzzer's entry points around them:
//   - every input runs under ASan + UBSan (a crash, leak or undefined behaviour is a finding);
//   - the heap growth while Run() handles an input is measured with the sanitizer's malloc hooks
//     and must stay under kAllocRatio x input bytes + kAllocSlack (docs/security.md, "Limits");
//   - MEMFIT_FUZZ_WRITE_SEEDS=<dir> writes Seeds() there and exits (scripts/fuzz.sh builds the seed
//     corpus this way, from the tests' fixture builders).
// An optional dictionary sits beside the target as fuzz/<name>.dict.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/describe.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit::fuzz {

// Heap growth allowed per input: a fixed multiple of the bytes read plus a constant (which covers
// the model a config may describe, bounded by the builders' tensor cap, and the reports on it).
inline constexpr uint64_t kAllocRatio = 64;
inline constexpr uint64_t kAllocSlack = uint64_t{256} << 20;

// Defined by each target.
std::vector<std::string> Seeds();
void Run(std::string_view input);

// Aborts (a finding) when an error message breaks memfit's rules: non-empty, one line.
void CheckError(const Error& error);
template <typename T>
void CheckResult(const Result<T>& result) {
  if (!result.has_value()) CheckError(result.error());
}
// Runs a described model through every estimator and renderer (all formats; inspect at depth
// 1 + choice % 3); the model's name is replaced by `label` (arbitrary bytes: renderers must cope
// with invalid UTF-8).
void Exercise(Model model, std::string_view label, uint32_t choice);
// DescribeModel as memfit does by default (choice even) or as --accelerate does (odd: transformers
// 4.42 buffers, config preferred), then Exercise() on the model it returns. Targets derive
// `choice` from the input (Choice()), so the fuzzer explores every option without paying for all
// of them on each input.
void DescribeAndExercise(const ModelInputs& inputs, std::string_view label, uint32_t choice);
// A small number derived from the input's bytes, to pick options.
uint32_t Choice(std::string_view input);
// The builders' tensor cap used while fuzzing (smaller than the default, to keep runs fast).
inline constexpr uint64_t kFuzzMaxBuiltTensors = 5'000;

// Aborts with `what` when `condition` is false: an invariant of a successful parse.
void Require(bool condition, std::string_view what);

}  // namespace memfit::fuzz
