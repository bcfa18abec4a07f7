#pragma once
// A device map as JSON, the form transformers/accelerate take (memfit/device_map.h's DeviceMap):
// for the renderers and the CLI's --export of the map; kept out of the public header so that no
// public header exposes nlohmann::json.

#include <nlohmann/json.hpp>

#include "memfit/device_map.h"

namespace memfit {

// {"model.embed_tokens": 0, "lm_head": "cpu", ...}.
nlohmann::ordered_json DeviceMapJson(const DeviceMap& map);

}  // namespace memfit
