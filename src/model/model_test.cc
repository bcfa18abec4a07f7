// Block assignment (AssignBlocks / IndivisibleBlocks): the module tree over tensor names.

#include "memfit/model.h"

#include <gtest/gtest.h>

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

Tensor Weight(std::string name, uint64_t bytes) {
  return Tensor{.name = std::move(name), .shape = {bytes}, .dtype = Dtype::kU8,
                .dtype_label = "U8", .numel = bytes, .bytes = bytes};
}

TEST(AssignBlocks, ConsecutiveTensorsOfANoSplitModuleShareItsBlock) {
  // "model.layers.1" is a prefix of "model.layers.10" but not its module: the shortcut for
  // consecutive tensors under one no-split module must compare whole segments.
  Model model;
  model.no_split_patterns = {"model.layers.*"};
  model.tensors = {Weight("model.layers.1.a.weight", 1), Weight("model.layers.1.b.weight", 2),
                   Weight("model.layers.10.a.weight", 4), Weight("model.layers.1.c.weight", 8),
                   Weight("model.layers.1.c.bias", 16), Weight("model.norm.weight", 32)};
  auto assignment = AssignBlocks(model, TensorFilter{});
  ASSERT_EQ(assignment.names,
            (std::vector<std::string>{"model.layers.1", "model.layers.10", "model.norm"}));
  EXPECT_EQ(assignment.tensor_block, (std::vector<int32_t>{0, 0, 1, 0, 0, 2}));
  auto blocks = SumBlocks(model, assignment, TensorFilter{});
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].bytes, 1u + 2 + 8 + 16);
  EXPECT_EQ(blocks[1].bytes, 4u);
  EXPECT_EQ(blocks[2].bytes, 32u);
}

TEST(AssignBlocks, ExcludedTensorsBreakNoRunOfAModule) {
  // A head tensor between two tensors of one layer: excluded from the base view, in no block.
  Model model;
  model.no_split_patterns = {"layers.*"};
  model.tensors = {Weight("layers.0.w1", 1), Weight("lm_head.weight", 2), Weight("layers.0.w2", 4)};
  model.tensors[1].in_head = true;
  auto assignment = AssignBlocks(model, TensorFilter{.include_head = false});
  ASSERT_EQ(assignment.names, (std::vector<std::string>{"layers.0"}));
  EXPECT_EQ(assignment.tensor_block, (std::vector<int32_t>{0, -1, 0}));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
