// Planning rows of measured-memory CSVs (validation.h).

#include "memfit/validation.h"

#include <gtest/gtest.h>

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// Rows in the format validation/measure.py writes are understood: transformers inference with
// context/batch/attn, the memory after load, LoRA rank as its own key; stage peaks are reference.
TEST(ValidationHarnessRows, PlansRowsOfTheGpuHarness) {
  MeasuredRow inference{.id = "inf", .model = "meta-llama/Llama-3.2-1B", .task = "inference",
                        .measure = "max_memory_allocated", .value = "3000", .unit = "MiB"};
  inference.settings = {{"dtype", "bfloat16"}, {"batch", "1"}, {"context", "4096"},
                        {"decode", "8"}, {"attn", "sdpa"}, {"gpu", "NVIDIA-H200"}};
  RowPlan p = PlanRow(inference);
  EXPECT_TRUE(p.unsupported.empty()) << p.unsupported;
  EXPECT_EQ(p.kind, "inference");
  EXPECT_EQ(p.inference.context_tokens, 4096u);
  EXPECT_FALSE(p.include_context);
  MeasuredRow load = inference;
  load.measure = "memory_after_load";
  RowPlan l = PlanRow(load);
  EXPECT_EQ(l.kind, "load");
  EXPECT_EQ(l.dtype, Dtype::kBF16);
  EXPECT_FALSE(l.include_context);
  MeasuredRow stage = inference;
  stage.measure = "peak_forward";
  EXPECT_FALSE(PlanRow(stage).unsupported.empty());
  MeasuredRow lora{.id = "tr", .model = "meta-llama/Llama-3.2-1B", .task = "train",
                   .measure = "max_memory_allocated", .value = "5000", .unit = "MiB"};
  lora.settings = {{"method", "lora"}, {"rank", "64"}, {"precision", "bf16"}, {"batch", "2"},
                   {"seq", "1024"}};
  RowPlan t = PlanRow(lora);
  EXPECT_TRUE(t.unsupported.empty()) << t.unsupported;
  EXPECT_EQ(t.train.lora.rank, 64u);
}

// A CPU harness row is estimated with the versions its source names (torch 1.13,
// transformers 4.48), with the harness's zero_grad(set_to_none=True) and CPU dropout masks;
// a row that names no versions keeps the current releases.
TEST(ValidationHarnessRows, RowsCarryTheirLibraryVersions) {
  MeasuredRow row{.id = "c-tr", .model = "Qwen/Qwen2.5-0.5B-L2", .task = "train",
                  .measure = "max_memory_allocated", .value = "3000", .unit = "MiB",
                  .source = "validation/measure.py (torch 1.13.0a0, transformers 4.48.3, peft "
                            "0.14.0)"};
  row.settings = {{"method", "full"}, {"precision", "fp32"}, {"foreach", "false"},
                  {"batch", "2"}, {"seq", "256"}, {"device", "cpu"}};
  RowPlan p = PlanRow(row);
  ASSERT_TRUE(p.unsupported.empty()) << p.unsupported;
  EXPECT_EQ(p.train.versions.torch, (LibraryVersion{1, 13}));
  EXPECT_EQ(p.train.versions.transformers, (LibraryVersion{4, 48}));
  EXPECT_EQ(p.inference.versions.transformers, (LibraryVersion{4, 48}));
  EXPECT_EQ(p.train.zero_grad_set_to_none, std::optional<bool>(true));
  EXPECT_EQ(p.train.foreach_optimizer, std::optional<bool>(false));
  EXPECT_EQ(p.train.device, ComputeDevice::kCpu);
  // The same run's memory after load: its model is built with the same release's buffers.
  row.measure = "memory_after_load";
  RowPlan load = PlanRow(row);
  ASSERT_TRUE(load.unsupported.empty()) << load.unsupported;
  EXPECT_EQ(load.kind, "load");
  EXPECT_EQ(load.inference.versions.transformers, (LibraryVersion{4, 48}));
  row.measure = "max_memory_allocated";
  row.source = "transformers docs perf_train_gpu_one.md";
  RowPlan docs = PlanRow(row);
  EXPECT_EQ(docs.train.versions.torch, RuntimeVersions{}.torch);
  EXPECT_EQ(docs.train.versions.transformers, RuntimeVersions{}.transformers);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
