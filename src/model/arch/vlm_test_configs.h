#pragma once
// Real vision-language config.json files written in code (the fields of the public files that the
// builders read), shared by the builder tests and the hyperparameter tests.

#include <nlohmann/json.hpp>

namespace memfit::arch::vlm_configs {

// SigLIP so400m at 896 px, as in google/gemma-3-{4b,12b,27b}-it's vision_config.
inline nlohmann::json Gemma3Vision() {
  return {{"hidden_size", 1152},    {"image_size", 896},
          {"intermediate_size", 4304}, {"model_type", "siglip_vision_model"},
          {"num_attention_heads", 16}, {"num_hidden_layers", 27},
          {"patch_size", 14},        {"vision_use_head", false}};
}

inline nlohmann::json Gemma3(const nlohmann::json& text_config) {
  return {{"architectures", {"Gemma3ForConditionalGeneration"}},
          {"boi_token_index", 255999},
          {"eoi_token_index", 256000},
          {"image_token_index", 262144},
          {"mm_tokens_per_image", 256},
          {"model_type", "gemma3"},
          {"text_config", text_config},
          {"torch_dtype", "bfloat16"},
          {"vision_config", Gemma3Vision()}};
}

// google/gemma-3-4b-it: the text_config gives no vocab_size, heads, KV heads or head_dim.
inline nlohmann::json Gemma3_4b() {
  return Gemma3({{"hidden_size", 2560},
                 {"intermediate_size", 10240},
                 {"model_type", "gemma3_text"},
                 {"num_hidden_layers", 34},
                 {"rope_scaling", {{"factor", 8.0}, {"rope_type", "linear"}}},
                 {"sliding_window", 1024}});
}

inline nlohmann::json Gemma3_12b() {
  return Gemma3({{"hidden_size", 3840},
                 {"intermediate_size", 15360},
                 {"model_type", "gemma3_text"},
                 {"num_attention_heads", 16},
                 {"num_hidden_layers", 48},
                 {"num_key_value_heads", 8},
                 {"rope_scaling", {{"factor", 8.0}, {"rope_type", "linear"}}},
                 {"sliding_window", 1024}});
}

inline nlohmann::json Gemma3_27b() {
  return Gemma3({{"head_dim", 128},
                 {"hidden_size", 5376},
                 {"intermediate_size", 21504},
                 {"model_type", "gemma3_text"},
                 {"num_attention_heads", 32},
                 {"num_hidden_layers", 62},
                 {"num_key_value_heads", 16},
                 {"query_pre_attn_scalar", 168},
                 {"rope_scaling", {{"factor", 8.0}, {"rope_type", "linear"}}},
                 {"sliding_window", 1024}});
}

// google/paligemma-3b-pt-224 (transformers 4.41).
inline nlohmann::json PaliGemma3bPt224() {
  return {{"architectures", {"PaliGemmaForConditionalGeneration"}},
          {"hidden_size", 2048},
          {"image_token_index", 257152},
          {"model_type", "paligemma"},
          {"projection_dim", 2048},
          {"text_config",
           {{"hidden_size", 2048}, {"intermediate_size", 16384}, {"model_type", "gemma"},
            {"num_attention_heads", 8}, {"num_hidden_layers", 18}, {"num_image_tokens", 256},
            {"num_key_value_heads", 1}, {"torch_dtype", "float32"}, {"vocab_size", 257216}}},
          {"torch_dtype", "float32"},
          {"vision_config",
           {{"hidden_size", 1152}, {"intermediate_size", 4304},
            {"model_type", "siglip_vision_model"}, {"num_attention_heads", 16},
            {"num_hidden_layers", 27}, {"num_image_tokens", 256}, {"patch_size", 14},
            {"projection_dim", 2048}, {"projector_hidden_act", "gelu_fast"},
            {"vision_use_head", false}}},
          {"vocab_size", 257216}};
}

// mistralai/Mistral-Small-3.1-24B-Instruct-2503.
inline nlohmann::json MistralSmall31() {
  return {{"architectures", {"Mistral3ForConditionalGeneration"}},
          {"image_token_index", 10},
          {"model_type", "mistral3"},
          {"multimodal_projector_bias", false},
          {"projector_hidden_act", "gelu"},
          {"spatial_merge_size", 2},
          {"text_config",
           {{"head_dim", 128}, {"hidden_act", "silu"}, {"hidden_size", 5120},
            {"intermediate_size", 32768}, {"max_position_embeddings", 131072},
            {"model_type", "mistral"}, {"num_attention_heads", 32}, {"num_hidden_layers", 40},
            {"num_key_value_heads", 8}, {"rms_norm_eps", 1e-05}, {"rope_theta", 1000000000.0},
            {"sliding_window", nullptr}, {"vocab_size", 131072}}},
          {"torch_dtype", "bfloat16"},
          {"vision_config",
           {{"head_dim", 64}, {"hidden_act", "silu"}, {"hidden_size", 1024},
            {"image_size", 1540}, {"intermediate_size", 4096}, {"model_type", "pixtral"},
            {"num_attention_heads", 16}, {"num_channels", 3}, {"num_hidden_layers", 24},
            {"patch_size", 14}, {"rope_theta", 10000.0}}},
          {"vision_feature_layer", -1}};
}

// llava-hf/llava-v1.6-mistral-7b-hf: the text_config leaves hidden size, layers and heads to
// MistralConfig.
inline nlohmann::json LlavaV16Mistral7b() {
  return {{"architectures", {"LlavaNextForConditionalGeneration"}},
          {"ignore_index", -100},
          {"image_token_index", 32000},
          {"model_type", "llava_next"},
          {"projector_hidden_act", "gelu"},
          {"text_config",
           {{"architectures", {"MistralForCausalLM"}}, {"intermediate_size", 14336},
            {"max_position_embeddings", 32768}, {"model_type", "mistral"},
            {"num_key_value_heads", 8}, {"rms_norm_eps", 1e-05}, {"rope_theta", 1000000.0},
            {"sliding_window", nullptr}, {"torch_dtype", "bfloat16"}, {"vocab_size", 32064}}},
          {"torch_dtype", "float16"},
          {"use_image_newline_parameter", true},
          {"vision_config",
           {{"hidden_size", 1024}, {"image_size", 336}, {"intermediate_size", 4096},
            {"model_type", "clip_vision_model"}, {"num_attention_heads", 16},
            {"num_hidden_layers", 24}, {"patch_size", 14}, {"projection_dim", 768},
            {"vocab_size", 32000}}},
          {"vision_feature_layer", -2},
          {"vision_feature_select_strategy", "default"},
          {"vocab_size", 32064}};
}

}  // namespace memfit::arch::vlm_configs
