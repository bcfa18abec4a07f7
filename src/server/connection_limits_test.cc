#include "server/connection_limits.h"

#include <gtest/gtest.h>

namespace memfit::server {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(ConnectionLimits, CapsPerAddressAndInTotal) {
  auto limits = std::make_shared<ConnectionLimits>(3, 2);
  auto a1 = limits->Admit("10.0.0.1");
  auto a2 = limits->Admit("10.0.0.1");
  EXPECT_TRUE(a1 && a2);
  EXPECT_FALSE(limits->Admit("10.0.0.1"));  // per address
  auto b1 = limits->Admit("10.0.0.2");
  EXPECT_TRUE(b1);
  EXPECT_FALSE(limits->Admit("10.0.0.3"));  // in total
  a1.reset();
  EXPECT_TRUE(limits->Admit("10.0.0.3"));  // a place came back (and went again)
  const ServerStats stats = limits->Stats();
  EXPECT_EQ(stats.open_connections, 2u);
  EXPECT_EQ(stats.accepted_connections, 4u);
  EXPECT_EQ(stats.refused_connections, 2u);
}

TEST(ConnectionLimits, TheCapLeavesDescriptorsForTheRest) {
  EXPECT_EQ(ConnectionCapForDescriptors(4096, 1024), 1024 - static_cast<int>(kReservedDescriptors));
  EXPECT_EQ(ConnectionCapForDescriptors(4096, 1 << 20), 4096);
  EXPECT_EQ(ConnectionCapForDescriptors(4096, UINT64_MAX), 4096);
  EXPECT_EQ(ConnectionCapForDescriptors(4096, 100), 1);  // fewer descriptors than the reserve
  EXPECT_EQ(ConnectionCapForDescriptors(0, 1 << 20), 1);
  EXPECT_GE(RaiseDescriptorLimit(), 1u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::server
