#pragma once
// Rendering a context curve (memfit/context_curve.h), private to render/ for `inference --curve` and
// `gguf inference --curve`: its JSON object and its table rows and lines (strings only).

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "memfit/context_curve.h"

namespace memfit {

// {metric, max_context, points: [{context, bytes}], limits: [{gpu, budget_bytes,
// longest_context (null: all fit), note}]} (docs/json.md).
nlohmann::json ContextCurveJson(const ContextCurve& curve);
// One (label, bytes) row per point: "total per GPU at 4,096 tokens".
std::vector<std::pair<std::string, uint64_t>> ContextCurveRows(const ContextCurve& curve);
// One line per GPU: "longest context on RTX 4090 (memory 24.00 GiB): 34,941 tokens".
std::vector<std::string> ContextCurveLines(const ContextCurve& curve);

}  // namespace memfit
