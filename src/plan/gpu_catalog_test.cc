#include "memfit/gpu.h"

#include <gtest/gtest.h>

#include <set>

#include "base/error_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(GpuCatalogTest, SizeAndCoverage) {
  std::set<GpuVendor> vendors;
  for (const auto& g : GpuCatalog()) {
    vendors.insert(g.vendor);
    EXPECT_GT(g.memory_gb, 0u) << g.name;
    EXPECT_GT(g.bandwidth_gb_s, 0) << g.name;
    EXPECT_GT(g.tensor_tflops, 0) << g.name;
    EXPECT_FALSE(g.source.empty()) << g.name;
  }
  EXPECT_GE(GpuCatalog().size(), 60u);
  EXPECT_EQ(vendors.size(), 4u);
}

TEST(GpuCatalogTest, EveryNameFindsItself) {
  for (const auto& g : GpuCatalog()) {
    auto found = FindGpu(g.name);
    ASSERT_TRUE(found) << g.name << ": " << found.error().message;
    EXPECT_EQ(*found, &g) << g.name;
  }
}

TEST(GpuCatalogTest, TolerantLookup) {
  EXPECT_EQ((*FindGpu("rtx4090"))->name, "RTX 4090");
  EXPECT_EQ((*FindGpu("NVIDIA GeForce RTX 4090"))->name, "RTX 4090");
  EXPECT_EQ((*FindGpu("H100 SXM"))->name, "H100 SXM");
  EXPECT_EQ((*FindGpu("h100"))->name, "H100 SXM");
  EXPECT_EQ((*FindGpu("a100-80gb"))->name, "A100 SXM 80GB");
  EXPECT_EQ((*FindGpu("A100_PCIe_40GB"))->name, "A100 PCIe 40GB");
  EXPECT_EQ((*FindGpu("m2 ultra"))->name, "M2 Ultra");
  EXPECT_EQ((*FindGpu("Radeon RX 7900 XTX"))->name, "RX 7900 XTX");
  auto ambiguous = FindGpu("mi300");
  testing::ExpectErrorContains(ambiguous, "MI300X");
  EXPECT_FALSE(FindGpu("voodoo5"));
}

TEST(GpuCatalogTest, DeviceArguments) {
  std::vector<DeviceSpec> devices;
  ASSERT_TRUE(ParseDeviceArg("24GiB", devices));
  ASSERT_TRUE(ParseDeviceArg("2xH100", devices));
  ASSERT_TRUE(ParseDeviceArg("rtx4090", devices));
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_EQ(devices[0].memory_bytes, 24ull << 30);
  EXPECT_EQ(devices[0].gpu, nullptr);
  EXPECT_EQ(devices[1].memory_bytes, 80ull << 30);  // H100's 80 GB of HBM = 80 GiB
  EXPECT_EQ(devices[2].label, "H100 SXM");
  EXPECT_EQ(devices[3].memory_bytes, 24ull << 30);
  EXPECT_FALSE(ParseDeviceArg("0GiB", devices));
  EXPECT_FALSE(ParseDeviceArg("0xH100", devices));
  EXPECT_FALSE(ParseDeviceArg("", devices));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
