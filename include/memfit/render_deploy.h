#pragma once
// `memfit fit --engine ...`: deployments (one, --search's best few, or the --all-gpus grid) as a
// table, JSON (schema memfit.deploy/1, docs/json.md), CSV or Markdown. Returns strings.

#include <string>
#include <vector>

#include "memfit/deploy.h"
#include "memfit/render.h"

namespace memfit {

struct DeployReportInput {
  const Model* model = nullptr;
  const InferenceOptions* options = nullptr;  // engine, context, sequences wanted
  std::string mode;                           // "deployment", "search" or "grid"
  const std::vector<DeploymentRow>* rows = nullptr;
};
std::string RenderDeploy(const DeployReportInput& input, OutputFormat format);

}  // namespace memfit
