#pragma once
// The hardware verdict of `inference --gpu`, `train --gpu` and `fit` (memfit/verdict.h): each
// command's figures -> HardwareFacts -> JudgeHardware, the one function that decides. Here the
// request layer adds what needs another estimate: how many GPUs would hold it (inference: tensor
// parallel; train: ZeRO-3), and for training the cheapest settings that fit (the search).

#include <optional>

#include "memfit/requests.h"
#include "memfit/verdict.h"

namespace memfit {

// nullopt without --gpu or --gpu-memory.
std::optional<HardwareVerdict> InferenceVerdict(const Model& model, const InferenceRequest& request,
                                                const InferenceOptions& options,
                                                const InferenceEstimate& estimate);
HardwareVerdict TrainVerdict(const Model& model, const DeviceSpec& gpu, const TrainOptions& options,
                             const TrainEstimate& estimate);
HardwareVerdict FitVerdict(const FitAnswer& answer);

}  // namespace memfit
