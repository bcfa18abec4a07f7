#pragma once
// Training advice that searches (docs/estimates.md, "Training advice"): combinations of method
// (full, LoRA, QLoRA) x gradient checkpointing x optimizer (AdamW, 8-bit AdamW) x precision
// (bf16 mixed, pure bf16) x micro-batch (halved, with gradient accumulation doubled so the
// effective batch stays) x optimizer offload, ranked by their cost to quality and speed, tried in
// that order until one fits. Pure: the caller says what "fits" means (one GPU's memory for
// `train --gpu`, the device-map placement for `fit --task train`).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "memfit/estimate_train.h"
#include "memfit/fit.h"
#include "memfit/result.h"

namespace memfit {

// One combination: the options, what changed from the base (in words and as `memfit train`
// flags) and its cost (the sum of its changes' costs; the table is in docs/estimates.md).
struct TrainSetup {
  TrainOptions options;
  int cost = 0;
  int quality_cost = 0;              // the largest of its changes' costs to quality (0 none .. 4)
  std::vector<std::string> changes{};  // "QLoRA (NF4 base)", "gradient checkpointing", ...
  std::string flags{};                 // "--method qlora --checkpointing full"
};

// Every combination that changes something, cheapest first (ties: fewer changes, then the larger
// micro-batch). The base itself is not listed.
std::vector<TrainSetup> TrainSetupCandidates(const TrainOptions& base);

// What a setup needs and whether it fits, as the caller judges it.
struct TrainJudgement {
  Verdict verdict = Verdict::kDoesNotFit;
  uint64_t need_bytes = 0;
};
using TrainJudge = std::function<Result<TrainJudgement>(const TrainSetup&)>;

struct TrainSearchResult {
  std::optional<TrainSetup> setup;  // the cheapest that fits; nullopt: none of them does
  TrainJudgement judgement;         // of `setup`
  size_t tried = 0;                 // setups judged
};
// Judges the candidates in order and stops at the first that fits. A setup the estimator refuses
// (an error) is passed over.
TrainSearchResult SearchTrainSetup(const TrainOptions& base, const TrainJudge& judge);

}  // namespace memfit
