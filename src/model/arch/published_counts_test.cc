// Published parameter counts of real models (the safetensors parameter total shown on each
// Hugging Face model page, which equals transformers' num_parameters() for these untied-or-tied
// checkpoints), from their config.json hyperparameters (only the fields the builders read).

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(PublishedCounts, RealConfigsMatchPublishedParameterCounts) {
  const testing::Published kModels[] = {
      {"allenai/OLMo-2-1124-7B",
       R"({"model_type":"olmo2","architectures":["Olmo2ForCausalLM"],"hidden_size":4096,
         "intermediate_size":11008,"num_hidden_layers":32,"num_attention_heads":32,
         "num_key_value_heads":32,"vocab_size":100352,"tie_word_embeddings":false,
         "torch_dtype":"float32"})",
       7298617344u},
      {"google/gemma-2-2b",
       R"({"model_type":"gemma2","architectures":["Gemma2ForCausalLM"],"hidden_size":2304,
         "intermediate_size":9216,"num_hidden_layers":26,"num_attention_heads":8,
         "num_key_value_heads":4,"head_dim":256,"vocab_size":256000,"torch_dtype":"float32",
         "sliding_window":4096})",
       2614341888u},
      {"microsoft/phi-2",
       R"({"model_type":"phi","architectures":["PhiForCausalLM"],"hidden_size":2560,
         "intermediate_size":10240,"num_hidden_layers":32,"num_attention_heads":32,
         "vocab_size":51200,"partial_rotary_factor":0.4,"tie_word_embeddings":false,
         "torch_dtype":"float16"})",
       2779683840u},
      {"bigcode/starcoder2-3b",
       R"({"model_type":"starcoder2","architectures":["Starcoder2ForCausalLM"],"hidden_size":3072,
         "intermediate_size":12288,"num_hidden_layers":30,"num_attention_heads":24,
         "num_key_value_heads":2,"vocab_size":49152,"use_bias":true,"sliding_window":4096,
         "torch_dtype":"bfloat16"})",
       3030371328u},
      {"Qwen/Qwen1.5-MoE-A2.7B",
       R"({"model_type":"qwen2_moe","architectures":["Qwen2MoeForCausalLM"],"hidden_size":2048,
         "intermediate_size":5632,"moe_intermediate_size":1408,
         "shared_expert_intermediate_size":5632,"num_experts":60,"num_experts_per_tok":4,
         "num_hidden_layers":24,"num_attention_heads":16,"num_key_value_heads":16,
         "vocab_size":151936,"tie_word_embeddings":false,"decoder_sparse_step":1,
         "torch_dtype":"bfloat16"})",
       14315784192u},
      {"deepseek-ai/DeepSeek-V2-Lite",
       R"({"model_type":"deepseek_v2","architectures":["DeepseekV2ForCausalLM"],
         "hidden_size":2048,"intermediate_size":10944,"moe_intermediate_size":1408,
         "n_routed_experts":64,"n_shared_experts":2,"num_experts_per_tok":6,
         "first_k_dense_replace":1,"moe_layer_freq":1,"num_hidden_layers":27,
         "num_attention_heads":16,"num_key_value_heads":16,"q_lora_rank":null,"kv_lora_rank":512,
         "qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"vocab_size":102400,
         "tie_word_embeddings":false,"topk_method":"greedy","torch_dtype":"bfloat16"})",
       15706484224u},
      {"stabilityai/stablelm-2-1_6b",
       R"({"model_type":"stablelm","architectures":["StableLmForCausalLM"],"hidden_size":2048,
         "intermediate_size":5632,"num_hidden_layers":24,"num_attention_heads":32,
         "num_key_value_heads":32,"vocab_size":100352,"use_qkv_bias":true,
         "partial_rotary_factor":0.25,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})",
       1644515328u},
      {"CohereForAI/c4ai-command-r-v01",
       R"({"model_type":"cohere","architectures":["CohereForCausalLM"],"hidden_size":8192,
         "intermediate_size":22528,"num_hidden_layers":40,"num_attention_heads":64,
         "num_key_value_heads":64,"vocab_size":256000,"use_qk_norm":false,
         "torch_dtype":"float16"})",
       34980831232u},
      {"ibm-granite/granite-3.0-8b-base",
       R"({"model_type":"granite","architectures":["GraniteForCausalLM"],"hidden_size":4096,
         "intermediate_size":12800,"num_hidden_layers":40,"num_attention_heads":32,
         "num_key_value_heads":8,"vocab_size":49155,"tie_word_embeddings":true,
         "torch_dtype":"bfloat16"})",
       8170848256u},
      {"internlm/internlm2-7b",
       R"({"model_type":"internlm2","architectures":["InternLM2ForCausalLM"],"hidden_size":4096,
         "intermediate_size":14336,"num_hidden_layers":32,"num_attention_heads":32,
         "num_key_value_heads":8,"vocab_size":92544,"bias":false,"tie_word_embeddings":false,
         "torch_dtype":"bfloat16"})",
       7737708544u},
  };
  testing::ExpectPublishedCounts(kModels);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
