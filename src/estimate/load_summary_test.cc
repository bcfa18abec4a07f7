// LoadSummary merges runs of tensors only where no figure changes: checked by hand on tensors
// whose int4 sizes round up, and against a per-tensor computation.

#include "memfit/load_summary.h"

#include <gtest/gtest.h>

#include "memfit/estimate_load.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

Tensor Param(std::string name, uint64_t numel, Dtype dtype) {
  return Tensor{.name = std::move(name), .shape = {numel}, .dtype = dtype,
                .dtype_label = std::string(DtypeName(dtype)), .numel = numel,
                .bytes = (numel * DtypeBits(dtype) + 7) / 8};
}

// layers.0: bf16 tensors of 3, 5 and 4 elements (odd counts: int4 rounds each up) and an int8
// (not castable) one of 6; layers.1: bf16 tensors of 4 and 6 elements.
Model Odd() {
  Model m;
  m.name = "odd";
  m.no_split_patterns = {"layers.*"};
  m.tensors = {Param("layers.0.a", 3, Dtype::kBF16), Param("layers.0.b", 5, Dtype::kBF16),
               Param("layers.0.c", 4, Dtype::kBF16), Param("layers.0.q", 6, Dtype::kI8),
               Param("layers.1.a", 4, Dtype::kBF16), Param("layers.1.b", 6, Dtype::kBF16)};
  return m;
}

TEST(LoadSummaryTest, MergesOnlyWhereTheRoundingAllows) {
  const Model m = Odd();
  const LoadSummary s = SummarizeLoad(m, AssignBlocks(m, TensorFilter{}));
  // layers.0.a (3, odd) ends its run; b (5) starts one that ends at once (odd) ; c (4) starts
  // another; q (int8, not castable) its own; layers.1: a (4, even) takes b in: 5 entries.
  ASSERT_EQ(s.entries.size(), 5u);
  EXPECT_EQ(s.entries[4].numel, 10u);
  EXPECT_EQ(s.tensors, 6u);
  const LoadEstimate e = EstimateLoad(s, {.dtypes = {LoadDtype::kInt4, LoadDtype::kFloat32}});
  ASSERT_EQ(e.rows.size(), 2u);
  // int4: layers.0 = ceil(3/2) + ceil(5/2) + ceil(4/2) + 6 (int8 as stored) = 2 + 3 + 2 + 6 = 13;
  // layers.1 = 2 + 3 = 5; total 18. A naive merge of layers.0's bf16 run would give 6 + 6 = 12.
  EXPECT_EQ(e.rows[0].total_bytes, 18u);
  EXPECT_EQ(e.rows[0].largest_block_bytes, 13u);
  // float32: layers.0 = (3 + 5 + 4) x 4 + 6 = 54; layers.1 = 10 x 4 = 40; total 94.
  EXPECT_EQ(e.rows[1].total_bytes, 94u);
  EXPECT_EQ(e.rows[1].largest_block_bytes, 54u);
  // As stored: layers.0 = (3 + 5 + 4) x 2 + 6 = 30 B, 18 parameters.
  ASSERT_TRUE(e.largest_block);
  EXPECT_EQ(e.largest_block->name, "layers.0");
  EXPECT_EQ(e.largest_block->bytes, 30u);
  EXPECT_EQ(e.largest_block->parameters, 18u);
}

TEST(LoadSummaryTest, TheSummaryGivesTheModelsOwnEstimate) {
  const Model m = Odd();
  const LoadOptions options{.dtypes = {LoadDtype::kAsStored, LoadDtype::kFloat32, LoadDtype::kFloat16,
                                       LoadDtype::kBFloat16, LoadDtype::kInt8, LoadDtype::kInt4}};
  const BlockAssignment blocks = AssignBlocks(m, TensorFilter{});
  const LoadEstimate direct = EstimateLoad(m, options);
  const LoadEstimate summarized = EstimateLoad(SummarizeLoad(m, blocks), options);
  ASSERT_EQ(direct.rows.size(), summarized.rows.size());
  for (size_t i = 0; i < direct.rows.size(); ++i) {
    // Each row against the per-tensor sum of LoadedTensorBytes.
    uint64_t expected = 0;
    for (const Tensor& t : m.tensors) expected += LoadedTensorBytes(t, direct.rows[i].dtype);
    EXPECT_EQ(summarized.rows[i].total_bytes, expected) << LoadDtypeName(direct.rows[i].dtype);
    EXPECT_EQ(summarized.rows[i].largest_block_bytes, direct.rows[i].largest_block_bytes);
    EXPECT_EQ(summarized.rows[i].training_adam_bytes, direct.rows[i].training_adam_bytes);
  }
  EXPECT_EQ(summarized.totals.parameters, 28u);  // 3 + 5 + 4 + 6 + 4 + 6
  EXPECT_EQ(summarized.dtype_bytes, direct.dtype_bytes);
  EXPECT_EQ(summarized.notes, direct.notes);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
