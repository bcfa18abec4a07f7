// The "accuracy" object of every estimate's JSON and its one line in tables (memfit/accuracy.h,
// docs/json.md "accuracy").

#include "memfit/accuracy.h"
#include "render/report_json.h"

namespace memfit {

nlohmann::json AccuracyJson(const AccuracyBand& band) {
  const bool measured = band.rows > 0;
  return {{"class", std::string(AccuracyClassName(band.accuracy_class))},
          {"min_error", measured ? nlohmann::json(band.min_error) : nlohmann::json(nullptr)},
          {"max_error", measured ? nlohmann::json(band.max_error) : nlohmann::json(nullptr)},
          {"rows", band.rows},
          {"source", measured ? std::string(band.source) : std::string("not measured")}};
}

}  // namespace memfit
