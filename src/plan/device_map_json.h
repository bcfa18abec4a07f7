#pragma once
// A device map as JSON, the form transformers/accelerate take (memfit/device_map.h's DeviceMap):
// for the renderers and the CLI's --export of the map; kept out of the public header so that no
// public header exposes nlohmann::json.

#include <string>

#include <nlohmann/json.hpp>

#include "memfit/device_map.h"

namespace memfit {

// {"model.embed_tokens": 0, "lm_head": "cpu", ...}.
nlohmann::ordered_json DeviceMapJson(const DeviceMap& map);

// An ordered_json as text with its keys in insertion order (the device map in placement order,
// the fit plan in its documented field order), invalid UTF-8 replaced as formats/json.h's
// DumpJson does. DumpJson takes a json: an ordered_json passed to it converts to one, which sorts
// the keys ("lm_head" before "model.embed", "model.layers.10" before "model.layers.2").
std::string DumpOrderedJson(const nlohmann::ordered_json& value, int indent = 2);

}  // namespace memfit
