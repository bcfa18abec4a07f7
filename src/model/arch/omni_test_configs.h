#pragma once
// Real configs of the Qwen omni releases for omni_test.cc, trimmed to the keys that shape tensors
// (token ids, generation settings and the serialized PretrainedConfig noise left out).

namespace memfit::arch::testing {

// Qwen/Qwen2.5-Omni-7B config.json ("transformers_version": "4.50.0.dev0"), as mirrored in
// UbiquitousLearning/mllm mllm/models/qwen2_5omni/python_src_code/config.json@47833b1f, beside
// that release's model.safetensors.index.json ("total_size": 22366403936).
inline constexpr const char* kQwen25Omni7BConfig = R"({
  "architectures": ["Qwen2_5OmniModel"], "enable_audio_output": true, "enable_talker": true,
  "model_type": "qwen2_5_omni", "torch_dtype": "bfloat16",
  "talker_config": {
    "embedding_size": 3584, "head_dim": 128, "hidden_act": "silu", "hidden_size": 896,
    "intermediate_size": 18944, "max_position_embeddings": 32768, "max_window_layers": 28,
    "model_type": "qwen2_5_omni_talker", "num_attention_heads": 12, "num_hidden_layers": 24,
    "num_key_value_heads": 4, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
    "sliding_window": 32768, "torch_dtype": "bfloat16", "use_sliding_window": false,
    "vocab_size": 8448},
  "thinker_config": {
    "audio_config": {
      "activation_function": "gelu", "d_model": 1280, "encoder_attention_heads": 20,
      "encoder_ffn_dim": 5120, "encoder_layers": 32, "max_source_positions": 1500,
      "model_type": "qwen2_5_omni_audio_encoder", "n_window": 100, "num_hidden_layers": 32,
      "num_mel_bins": 128, "output_dim": 3584, "scale_embedding": false, "torch_dtype": null},
    "text_config": {
      "model_type": "qwen2_5_omni_text", "hidden_act": "silu", "hidden_size": 3584,
      "intermediate_size": 18944, "vocab_size": 152064, "num_attention_heads": 28,
      "num_hidden_layers": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768,
      "max_window_layers": 28, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
      "use_sliding_window": false, "sliding_window": 32768, "tie_word_embeddings": false},
    "model_type": "qwen2_5_omni_thinker", "torch_dtype": "bfloat16",
    "vision_config": {
      "depth": 32, "embed_dim": 1280, "fullatt_block_indexes": [7, 15, 23, 31],
      "hidden_act": "silu", "hidden_size": 1280, "in_channels": 3, "in_chans": 3,
      "intermediate_size": 3420, "model_type": "qwen2_5_omni_vision_encoder", "num_heads": 16,
      "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
      "spatial_patch_size": 14, "temporal_patch_size": 2, "tokens_per_second": 25,
      "torch_dtype": null, "window_size": 112}},
  "token2wav_config": {
    "bigvgan_config": {
      "mel_dim": 80, "model_type": "qwen2_5_omni_bigvgan",
      "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
      "resblock_kernel_sizes": [3, 7, 11], "torch_dtype": null,
      "upsample_initial_channel": 1536, "upsample_kernel_sizes": [11, 7, 4, 4, 4, 4],
      "upsample_rates": [5, 3, 2, 2, 2, 2], "use_bias_at_final": false},
    "dit_config": {
      "depth": 22, "dim": 1024, "dropout": 0.1, "emb_dim": 512, "enc_attention_channels": 64,
      "enc_channels": [256, 256, 256, 256, 768], "enc_dilations": [1, 2, 3, 4, 1],
      "enc_dim": 128, "enc_emb_dim": 192, "enc_global_context": true,
      "enc_kernel_sizes": [5, 3, 3, 3, 1], "enc_lin_neurons": 192, "enc_res2net_scale": 2,
      "enc_se_channels": 64, "ff_mult": 2, "head_dim": 64, "heads": 16, "mel_dim": 80,
      "model_type": "qwen2_5_omni_dit", "num_embeds": 8193, "repeats": 2,
      "torch_dtype": "float32"},
    "model_type": "qwen2_5_omni_token2wav"},
  "transformers_version": "4.50.0.dev0"
})";

// Qwen/Qwen3-Omni-30B-A3B-Instruct's config as transformers 5.7 serializes it (so
// "num_local_experts" for the talker's experts, "dtype", "rope_parameters"), from the model
// report in a public repository (find_string "qwen3_omni_moe_talker_text"), whose weight
// listing gives 28,010 tensors and 35,259,818,545 parameters, all bfloat16 (65.68 GiB).
inline constexpr const char* kQwen3Omni30BConfig = R"({
  "architectures": ["Qwen3OmniMoeForConditionalGeneration"], "dtype": "bfloat16",
  "enable_audio_output": true, "model_type": "qwen3_omni_moe",
  "code2wav_config": {
    "attention_bias": false, "codebook_dim": 512, "codebook_size": 2048, "decoder_dim": 1536,
    "hidden_act": "silu", "hidden_size": 1024, "intermediate_size": 3072,
    "layer_scale_initial_scale": 0.01, "max_position_embeddings": 8000,
    "num_attention_heads": 16, "num_hidden_layers": 8, "num_key_value_heads": 16,
    "num_quantizers": 16, "num_semantic_quantizers": 1, "rms_norm_eps": 1e-05,
    "semantic_codebook_size": 4096, "sliding_window": 72, "upsample_rates": [8, 5, 4, 3],
    "upsampling_ratios": [2, 2], "vector_quantization_hidden_dimension": 512},
  "talker_config": {
    "accept_hidden_layer": 24,
    "code_predictor_config": {
      "attention_bias": false, "dtype": null, "head_dim": 128, "hidden_act": "silu",
      "hidden_size": 1024, "intermediate_size": 3072, "max_position_embeddings": 32768,
      "model_type": "qwen3_omni_moe_talker_code_predictor", "num_attention_heads": 16,
      "num_code_groups": 16, "num_hidden_layers": 5, "num_key_value_heads": 8,
      "tie_word_embeddings": false, "vocab_size": 2048},
    "num_code_groups": 16,
    "text_config": {
      "attention_bias": false, "decoder_sparse_step": 1, "dtype": null, "head_dim": 128,
      "hidden_act": "silu", "hidden_size": 1024, "intermediate_size": 2048,
      "max_position_embeddings": 65536, "mlp_only_layers": [],
      "model_type": "qwen3_omni_moe_talker_text", "moe_intermediate_size": 384,
      "norm_topk_prob": true, "num_attention_heads": 16, "num_experts_per_tok": 6,
      "num_hidden_layers": 20, "num_key_value_heads": 2, "num_local_experts": 128,
      "shared_expert_intermediate_size": 768, "tie_word_embeddings": false, "vocab_size": 3072},
    "thinker_hidden_size": 2048, "tie_word_embeddings": false},
  "thinker_config": {
    "audio_config": {
      "d_model": 1280, "downsample_hidden_size": 480, "dtype": null,
      "encoder_attention_heads": 20, "encoder_ffn_dim": 5120, "encoder_layers": 32,
      "max_source_positions": 1500, "model_type": "qwen3_omni_moe_audio_encoder",
      "n_window": 50, "n_window_infer": 800, "num_mel_bins": 128, "output_dim": 2048},
    "dtype": "bfloat16", "model_type": "qwen3_omni_moe_thinker",
    "text_config": {
      "attention_bias": false, "decoder_sparse_step": 1, "dtype": null, "head_dim": 128,
      "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 768,
      "max_position_embeddings": 65536, "mlp_only_layers": [], "model_type": "qwen3_omni_moe_text",
      "moe_intermediate_size": 768, "norm_topk_prob": true, "num_attention_heads": 32,
      "num_experts": 128, "num_experts_per_tok": 8, "num_hidden_layers": 48,
      "num_key_value_heads": 4, "shared_expert_intermediate_size": 0,
      "tie_word_embeddings": false, "use_qk_norm": true, "vocab_size": 152064},
    "tie_word_embeddings": false,
    "vision_config": {
      "deepstack_visual_indexes": [8, 16, 24], "depth": 27, "dtype": null,
      "hidden_act": "gelu_pytorch_tanh", "hidden_size": 1152, "in_channels": 3,
      "intermediate_size": 4304, "model_type": "qwen3_omni_moe_vision_encoder", "num_heads": 16,
      "num_position_embeddings": 2304, "out_hidden_size": 2048, "patch_size": 16,
      "spatial_merge_size": 2, "temporal_patch_size": 2}},
  "transformers_version": "5.7.0"
})";

}  // namespace memfit::arch::testing
