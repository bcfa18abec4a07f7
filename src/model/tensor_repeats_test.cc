// The compact form of repeated modules (Tensor::copies), on models written by hand: names of the
// copies, the expansion's order, totals, bounds, blocks and the load summary's per-tensor rounding.

#include <gtest/gtest.h>

#include "memfit/estimate_load.h"
#include "memfit/load_summary.h"
#include "memfit/model.h"
#include "model/tensor_repeats.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

Tensor Param(std::string name, uint64_t numel, Dtype dtype) {
  return Tensor{.name = std::move(name),
                .shape = {numel},
                .dtype = dtype,
                .dtype_label = std::string(DtypeName(dtype)),
                .numel = numel,
                .bytes = (numel * DtypeBits(dtype) + 7) / 8};
}

// layers.0.experts.{0..11}.{w, s}: w 4 bf16 elements, s 1 float32 element (odd: int4 rounds
// each copy up), written compact as copy 0 with copies = 12; then layers.0.norm (3 bf16).
Model Compact() {
  Model m;
  m.name = "compact";
  m.no_split_patterns = {"layers.*"};
  Tensor w = Param("layers.0.experts.0.w", 4, Dtype::kBF16);
  Tensor s = Param("layers.0.experts.0.s", 1, Dtype::kF32);
  for (Tensor* t : {&w, &s}) {
    t->copies = 12;
    t->repeat_index_from_end = 3;  // "0.w": the index is the third character from the end
  }
  w.repeat_span = 2;
  m.tensors = {w, s, Param("layers.0.norm", 3, Dtype::kBF16)};
  return m;
}

TEST(TensorRepeatsTest, NamesCopiesByTheirIndex) {
  const Model m = Compact();
  EXPECT_EQ(RepeatCopyName(m.tensors[0], 0), "layers.0.experts.0.w");
  EXPECT_EQ(RepeatCopyName(m.tensors[1], 11), "layers.0.experts.11.s");
  // A prefix put before the name keeps the index: it is counted from the end.
  Tensor prefixed = m.tensors[0];
  prefixed.name = "language_model." + prefixed.name;
  EXPECT_EQ(RepeatCopyName(prefixed, 7), "language_model.layers.0.experts.7.w");
}

TEST(TensorRepeatsTest, ExpandsInTheBuildersOrder) {
  Model m = Compact();
  EXPECT_TRUE(HasRepeats(m));
  EXPECT_EQ(ExpandedTensorCount(m), 25u);  // 12 x 2 + 1
  ExpandRepeats(m);
  EXPECT_FALSE(HasRepeats(m));
  ASSERT_EQ(m.tensors.size(), 25u);
  EXPECT_EQ(m.tensors[0].name, "layers.0.experts.0.w");
  EXPECT_EQ(m.tensors[1].name, "layers.0.experts.0.s");
  EXPECT_EQ(m.tensors[2].name, "layers.0.experts.1.w");
  EXPECT_EQ(m.tensors[23].name, "layers.0.experts.11.s");
  EXPECT_EQ(m.tensors[24].name, "layers.0.norm");
  for (const auto& t : m.tensors) {
    EXPECT_EQ(t.copies, 1u);
    EXPECT_EQ(t.repeat_span, 0u);
    EXPECT_EQ(t.repeat_index_from_end, 0u);
  }
}

TEST(TensorRepeatsTest, TotalsBlocksAndLoadCountEveryCopy) {
  const Model compact = Compact();
  Model expanded = compact;
  ExpandRepeats(expanded);
  // By hand: 12 x (4 x 2 + 1 x 4) + 3 x 2 = 150 bytes; 12 x 5 + 3 = 63 parameters.
  const ModelTotals t = ComputeTotals(compact);
  EXPECT_EQ(t.stored_bytes, 150u);
  EXPECT_EQ(t.parameters, 63u);
  EXPECT_EQ(ComputeTotals(expanded).stored_bytes, 150u);
  ASSERT_TRUE(RepeatsStayInBlocks(compact));
  const auto blocks = SumBlocks(compact, AssignBlocks(compact, {}), {});
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].name, "layers.0");
  EXPECT_EQ(blocks[0].bytes, 150u);
  EXPECT_EQ(blocks[0].parameters, 63u);
  // int4: w 4 x 4 / 8 = 2 bytes, s ceil(1 x 4 / 8) = 1 byte (per copy), norm ceil(12 / 8) = 2:
  // 12 x 3 + 2 = 38, not the 12 x 2 + 6 + 2 = 32 of one rounding over the whole run.
  const LoadOptions int4{.dtypes = {LoadDtype::kInt4, LoadDtype::kFloat32}};
  const LoadSummary cs = SummarizeLoad(compact, AssignBlocks(compact, {}));
  EXPECT_EQ(cs.tensors, 25u);
  const LoadEstimate c = EstimateLoad(cs, int4);
  const LoadEstimate e = EstimateLoad(expanded, int4);
  EXPECT_EQ(c.rows[0].total_bytes, 38u);
  EXPECT_EQ(e.rows[0].total_bytes, 38u);
  // float32: 63 x 4 = 252.
  EXPECT_EQ(c.rows[1].total_bytes, 252u);
  EXPECT_EQ(e.rows[1].total_bytes, 252u);
  EXPECT_EQ(c.largest_block->bytes, e.largest_block->bytes);
}

TEST(TensorRepeatsTest, CopiesOutsideANoSplitBlockAreNotKeptCompact) {
  Model m = Compact();
  m.no_split_patterns = {};
  EXPECT_FALSE(RepeatsStayInBlocks(m));  // each layers.0.experts.N would be a block of its own
  m.no_split_patterns = {"layers.*.experts"};
  EXPECT_TRUE(RepeatsStayInBlocks(m));  // the copies' parent is one block
}

TEST(TensorRepeatsTest, OnlyTheRunsOutsideABlockAreWrittenOut) {
  Model m = Compact();
  Tensor w = m.tensors[0], s = m.tensors[1];
  w.name = "mtp.0.experts.0.w";
  s.name = "mtp.0.experts.0.s";
  m.tensors.push_back(w);
  m.tensors.push_back(s);
  ASSERT_FALSE(RepeatsStayInBlocks(m));  // layers.* is no-split, mtp.* is not
  ExpandRepeatsOutsideBlocks(m);
  EXPECT_TRUE(RepeatsStayInBlocks(m));
  ASSERT_EQ(m.tensors.size(), 3u + 24u);  // layers.0's run kept, mtp.0's written out
  EXPECT_EQ(m.tensors[0].copies, 12u);
  EXPECT_EQ(m.tensors[3].name, "mtp.0.experts.0.w");
  EXPECT_EQ(m.tensors[26].name, "mtp.0.experts.11.s");
  EXPECT_EQ(m.tensors[26].copies, 1u);
  EXPECT_EQ(ExpandedTensorCount(m), 49u);
}

TEST(TensorRepeatsTest, BoundsCountEveryCopy) {
  Model m = Compact();
  m.tensors[0].copies = uint64_t{1} << 62;  // 2^62 copies of 8 bytes overflow 2^60 bytes
  EXPECT_FALSE(CheckModelBounds(m, "here"));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
