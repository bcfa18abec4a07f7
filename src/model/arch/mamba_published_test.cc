// The totals of published Mamba, Mamba-2 and Jamba checkpoints, from their config.json values
// (written here in code, the keys that matter) against each release's published count.

#include <gtest/gtest.h>

#include "memfit/estimate_inference.h"
#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;

// state-spaces/mamba-130m-hf config.json. Published: 129,135,360 parameters in 242 float32
// tensors, 516,541,440 bytes (the pinned Hub snapshot's model.safetensors, as recorded in public
// experiment logs; the same total is asserted against sum(p.numel()) in public test code).
// By hand: layer = norm 768 + conv1d 1,536 x 4 + 1,536 + in_proj 3,072 x 768 + x_proj
// (48 + 32) x 1,536 + dt_proj 48 x 1,536 + 1,536 + A_log 1,536 x 16 + D 1,536 + out_proj
// 768 x 1,536 = 3,771,648; x 24 = 90,519,552 + embeddings 50,280 x 768 = 38,615,040 + norm_f 768.
TEST(MambaPublished, Mamba130mHf) {
  nlohmann::json j = {{"model_type", "mamba"}, {"architectures", {"MambaForCausalLM"}},
                      {"vocab_size", 50280}, {"hidden_size", 768}, {"num_hidden_layers", 24},
                      {"intermediate_size", 1536}, {"state_size", 16}, {"expand", 2},
                      {"conv_kernel", 4}, {"time_step_rank", 48}, {"use_bias", false},
                      {"use_conv_bias", true}, {"torch_dtype", "float32"}};
  auto m = testing::BuildCounted(j, 129135360u, 516541440u);
  ASSERT_TRUE(m);
  size_t stored = 0;
  for (const auto& x : m->tensors) stored += x.tied_to.empty() ? 1 : 0;
  EXPECT_EQ(stored, 242u);
  // transformers' MambaCache in bf16, one sequence: 24 x (1,536 x 4 + 1,536 x 16) x 2 B.
  auto kv = EstimateKvCache(*m, {.context_tokens = 8192, .batch = 1, .model_dtype = Dtype::kBF16});
  ASSERT_TRUE(kv) << kv.error().message;
  EXPECT_EQ(kv->bytes, 24u * (1536 * 4 + 1536 * 16) * 2);  // 1,474,560
}

// state-spaces/mamba-2.8b-hf: 2,768,345,600 parameters (published per-checkpoint counts of the
// mamba-*-hf series). By hand: layer 41,244,160 (in_proj 26,214,400, out_proj 13,107,200, x_proj
// 192 x 5,120, dt_proj 160 x 5,120 + 5,120, A_log 81,920, conv 25,600, D 5,120, norm 2,560);
// x 64 + embeddings 50,280 x 2,560 + norm_f 2,560.
TEST(MambaPublished, Mamba2p8bHf) {
  nlohmann::json j = {{"model_type", "mamba"}, {"vocab_size", 50280}, {"hidden_size", 2560},
                      {"num_hidden_layers", 64}, {"intermediate_size", 5120},
                      {"state_size", 16}, {"conv_kernel", 4}, {"time_step_rank", 160},
                      {"use_bias", false}, {"use_conv_bias", true}, {"torch_dtype", "float32"}};
  auto m = testing::BuildCounted(j, 2768345600u);
  ASSERT_TRUE(m);
}

// tiiuae/falcon-mamba-7b config.json ("expand": 16 but "intermediate_size": 8192, which wins).
// No published exact total was found (the model card says 7.27B); by hand: layer = norm 4,096 +
// in_proj 16,384 x 4,096 + conv 8,192 x 4 + 8,192 + x_proj 288 x 8,192 + dt_proj 256 x 8,192 +
// 8,192 + A_log 131,072 + D 8,192 + out_proj 4,096 x 8,192 = 105,312,256; x 64 + embeddings and
// untied head 2 x 65,024 x 4,096 + norm_f 4,096 = 7,272,665,088.
TEST(MambaPublished, FalconMamba7b) {
  nlohmann::json j = {{"model_type", "falcon_mamba"}, {"vocab_size", 65024},
                      {"hidden_size", 4096}, {"num_hidden_layers", 64}, {"expand", 16},
                      {"intermediate_size", 8192}, {"state_size", 16}, {"conv_kernel", 4},
                      {"time_step_rank", 256}, {"use_bias", false}, {"use_conv_bias", true},
                      {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"}};
  auto m = testing::BuildCounted(j, 7272665088u);
  ASSERT_TRUE(m);
}

// mistralai/Mamba-Codestral-7B-v0.1 config.json: 7,285,403,648 parameters (14,570,807,296 bytes
// in bf16, a parameter count, not bytes). By hand: d_inner 8,192, conv_dim 8,192 + 2 x 8 x 128 =
// 10,240; layer = norm 4,096 + in_proj (8,192 + 10,240 + 128) x 4,096 + conv 10,240 x 4 + 10,240
// + 3 x 128 + gated norm 8,192 + out_proj 4,096 x 8,192 = 109,640,064; x 64 + 2 x 32,768 x 4,096
// + 4,096.
TEST(MambaPublished, MambaCodestral7b) {
  const char* json = R"({"architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2",
      "chunk_size": 256, "conv_kernel": 4, "expand": 2, "head_dim": 64, "hidden_act": "silu",
      "hidden_size": 4096, "intermediate_size": 8192, "n_groups": 8, "num_heads": 128,
      "num_hidden_layers": 64, "state_size": 128, "tie_word_embeddings": false,
      "time_step_limit": [0.0, Infinity], "time_step_rank": 256, "torch_dtype": "bfloat16",
      "use_bias": false, "use_conv_bias": true, "vocab_size": 32768})";
  auto m = arch_test::Build(json);
  ASSERT_TRUE(m) << m.error().message;
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 7285403648u);
  EXPECT_EQ(t.stored_bytes, 14570807296u);
  // Mamba2Cache (bf16), one sequence: 64 x (10,240 x 4 + 128 x 64 x 128) x 2 B = 139,460,608.
  auto kv = EstimateKvCache(*m, {.context_tokens = 8192, .batch = 1, .model_dtype = Dtype::kBF16});
  ASSERT_TRUE(kv) << kv.error().message;
  EXPECT_EQ(kv->bytes, 139460608u);
}

// ai21labs/AI21-Jamba-Mini-1.5 (and Jamba-v0.1, the same shape) config.json: its
// model.safetensors.index.json total_size is 103,140,646,656 bytes in bf16 = 51,570,323,328
// parameters. By hand: 4 attention layers (4, 12, 20, 28) of q/o 4,096 x 4,096 and k/v 1,024 x
// 4,096 = 41,943,040; 28 Mamba layers of 105,308,448 (conv 8,192 x 4 + 8,192, in_proj 16,384 x
// 4,096, x_proj 288 x 8,192, dt_proj 256 x 8,192 + 8,192, A_log 8,192 x 16, D 8,192, out_proj
// 4,096 x 8,192, dt/b/c norms 256 + 16 + 16); 16 MoE layers (odd) of router
// 16 x 4,096 + 16 x 3 x 4,096 x 14,336 = 2,818,637,824 and 16 dense of 176,160,768; 2 x 4,096
// norms per layer; embeddings and untied head 2 x 65,536 x 4,096; final norm 4,096.
TEST(MambaPublished, JambaMini15) {
  nlohmann::json j = {{"model_type", "jamba"}, {"architectures", {"JambaForCausalLM"}},
                      {"vocab_size", 65536}, {"hidden_size", 4096},
                      {"intermediate_size", 14336}, {"num_hidden_layers", 32},
                      {"num_attention_heads", 32}, {"num_key_value_heads", 8},
                      {"attn_layer_period", 8}, {"attn_layer_offset", 4},
                      {"expert_layer_period", 2}, {"expert_layer_offset", 1},
                      {"num_experts", 16}, {"num_experts_per_tok", 2}, {"mamba_d_state", 16},
                      {"mamba_d_conv", 4}, {"mamba_expand", 2}, {"mamba_dt_rank", 256},
                      {"mamba_conv_bias", true}, {"mamba_proj_bias", false},
                      {"tie_word_embeddings", false}, {"use_mamba_kernels", true},
                      {"max_position_embeddings", 262144}, {"torch_dtype", "bfloat16"}};
  auto m = testing::BuildCounted(j, 51570323328u, 103140646656u);
  ASSERT_TRUE(m);
  size_t attention = 0, moe = 0;
  for (const auto& L : m->hp.layers) {
    attention += L.attention != AttentionKind::kNone ? 1 : 0;
    moe += L.moe ? 1 : 0;
  }
  EXPECT_EQ(attention, 4u);
  EXPECT_EQ(moe, 16u);
  // 2 sequences x 32,768 tokens, bf16, transformers (HybridMambaAttentionDynamicCache):
  // KV 4 layers x 8 heads x 128 x 2 x 2 B = 16,384 B per token -> 1,073,741,824; Mamba 28 x
  // (8,192 x 4 + 8,192 x 16) x 2 B x 2 sequences = 18,350,080.
  auto kv = EstimateKvCache(*m, {.context_tokens = 32768, .batch = 2,
                                 .model_dtype = Dtype::kBF16});
  ASSERT_TRUE(kv) << kv.error().message;
  EXPECT_EQ(kv->bytes_per_token, 16384u);
  EXPECT_EQ(kv->state_bytes, 18350080u);
  EXPECT_EQ(kv->bytes, 1073741824u + 18350080u);
}

// ai21labs/AI21-Jamba-Reasoning-3B (config.json as public ports pin it: hidden 2,560, 28 layers,
// attention at 7 and 21 (period 14, offset 7), 20 heads over 1 KV head, MLP 8,192, num_experts 1
// (dense everywhere), mamba d_state 16, d_conv 4, expand 2, dt_rank 160, vocab 65,536, tied).
// By hand from transformers' modeling_jamba.py: attention layer q/o 2 x 2,560^2 + k/v 2 x 128 x
// 2,560 + 2 norms x 2,560 + MLP 3 x 2,560 x 8,192 = 76,682,240; Mamba layer in_proj 10,240 x
// 2,560, conv 5,120 x 4 + 5,120, x_proj 192 x 5,120, dt_proj 160 x 5,120 + 5,120, A_log 5,120 x
// 16, D 5,120, out_proj 2,560 x 5,120, dt/b/c norms 160 + 16 + 16, 2 norms, MLP =
// 104,161,472. 2 x 76,682,240 + 26 x 104,161,472 + embeddings 167,772,160 + 2,560 =
// 3,029,337,472 (the card: "3B").
TEST(MambaPublished, JambaReasoning3b) {
  nlohmann::json j = {{"model_type", "jamba"},
                      {"architectures", {"JambaForCausalLM"}},
                      {"vocab_size", 65536},
                      {"hidden_size", 2560},
                      {"intermediate_size", 8192},
                      {"num_hidden_layers", 28},
                      {"num_attention_heads", 20},
                      {"num_key_value_heads", 1},
                      {"attn_layer_period", 14},
                      {"attn_layer_offset", 7},
                      {"num_experts", 1},
                      {"num_experts_per_tok", 1},
                      {"mamba_d_state", 16},
                      {"mamba_d_conv", 4},
                      {"mamba_expand", 2},
                      {"mamba_dt_rank", 160},
                      {"mamba_conv_bias", true},
                      {"mamba_proj_bias", false},
                      {"tie_word_embeddings", true},
                      {"torch_dtype", "bfloat16"}};
  auto m = testing::BuildCounted(j, 3029337472u, 6058674944u);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hp.layers[7].attention, AttentionKind::kFull);
  EXPECT_EQ(m->hp.layers[21].attention, AttentionKind::kFull);
  EXPECT_EQ(m->hp.layers[14].attention, AttentionKind::kNone);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
