// The accelerator table. Each row: name, vendor, aliases, memory (vendor GB = GiB of chips),
// bandwidth (GB/s), dense BF16 tensor TFLOPS with FP32 accumulate (FP16 where there is no BF16),
// unified memory, memory type, source. "Derived" in a source says how a figure not printed in the
// document was obtained from one that is (e.g. a sparse figure halved).

#include "plan/gpu_catalog_data.h"

namespace memfit::plan {
namespace {

constexpr auto N = GpuVendor::kNvidia;
constexpr auto A = GpuVendor::kAmd;
constexpr auto M = GpuVendor::kApple;
constexpr auto I = GpuVendor::kIntel;

// Apple publishes no FLOPS: the estimate is GPU cores x 128 FP32 lanes x 2 (FMA) x GPU clock, and
// Apple GPUs run FP16 at the FP32 rate.

const GpuSpec kGpus[] = {
    // NVIDIA data centre. Datasheets print sparse figures with "*"; dense = sparse / 2.
    {"B300", N, "b300 sxm|hgx b300|blackwell ultra", 288, 8000, 2250, false, "HBM3E",
     "NVIDIA HGX B300 datasheet (per GPU = 8-GPU platform / 8; 36 PFLOPS FP16 sparse / 8 / 2)"},
    {"B200", N, "b200 sxm|hgx b200", 180, 8000, 2250, false, "HBM3E",
     "NVIDIA HGX B200 datasheet (1.44 TB, 64 TB/s, 36 PFLOPS FP16/BF16 sparse per 8 GPUs)"},
    {"H200 SXM", N, "h200|h200 141gb", 141, 4800, 989.5, false, "HBM3E",
     "NVIDIA H200 Tensor Core GPU datasheet (BF16 1,979 TFLOPS sparse)"},
    {"H200 NVL", N, "", 141, 4800, 835.5, false, "HBM3E",
     "NVIDIA H200 Tensor Core GPU datasheet (BF16 1,671 TFLOPS sparse)"},
    {"GH200", N, "gh200 96gb|grace hopper", 96, 4000, 989.5, false, "HBM3",
     "NVIDIA GH200 Grace Hopper Superchip datasheet (GPU memory; BF16 1,979 TFLOPS sparse)"},
    {"H100 SXM", N, "h100|h100 80gb|h100 sxm5|h100 sxm 80gb", 80, 3350, 989.5, false, "HBM3",
     "NVIDIA H100 Tensor Core GPU datasheet (BF16 1,979 TFLOPS sparse)"},
    {"H100 PCIe", N, "h100 pcie 80gb", 80, 2000, 756.5, false, "HBM2e",
     "NVIDIA H100 Tensor Core GPU datasheet (BF16 1,513 TFLOPS sparse)"},
    {"H100 NVL", N, "h100 94gb", 94, 3900, 835.5, false, "HBM3",
     "NVIDIA H100 Tensor Core GPU datasheet (BF16 1,671 TFLOPS sparse)"},
    {"A100 SXM 80GB", N, "a100|a100 80gb|a100 sxm4 80gb", 80, 2039, 312, false, "HBM2e",
     "NVIDIA A100 Tensor Core GPU datasheet"},
    {"A100 SXM 40GB", N, "a100 40gb|a100 sxm4 40gb", 40, 1555, 312, false, "HBM2",
     "NVIDIA A100 Tensor Core GPU datasheet"},
    {"A100 PCIe 80GB", N, "", 80, 1935, 312, false, "HBM2e", "NVIDIA A100 Tensor Core GPU datasheet"},
    {"A100 PCIe 40GB", N, "", 40, 1555, 312, false, "HBM2", "NVIDIA A100 Tensor Core GPU datasheet"},
    {"A40", N, "", 48, 696, 149.7, false, "GDDR6", "NVIDIA A40 datasheet (BF16 299.4 sparse)"},
    {"A30", N, "", 24, 933, 165, false, "HBM2", "NVIDIA A30 datasheet (BF16 330 sparse)"},
    {"A10", N, "", 24, 600, 125, false, "GDDR6", "NVIDIA A10 datasheet (BF16 250 sparse)"},
    {"A2", N, "", 16, 200, 36, false, "GDDR6", "NVIDIA A2 datasheet (BF16 72 sparse)"},
    {"L40S", N, "", 48, 864, 362.05, false, "GDDR6", "NVIDIA L40S datasheet (BF16 733 sparse)"},
    {"L40", N, "", 48, 864, 181.05, false, "GDDR6", "NVIDIA L40 datasheet (BF16 362.1 sparse)"},
    {"L4", N, "", 24, 300, 121, false, "GDDR6", "NVIDIA L4 datasheet (BF16 242 sparse)"},
    {"T4", N, "tesla t4", 16, 320, 65, false, "GDDR6",
     "NVIDIA T4 datasheet (FP16/FP32 mixed precision 65 TFLOPS; no BF16)"},
    {"V100 SXM2 32GB", N, "v100|v100 32gb|tesla v100", 32, 900, 125, false, "HBM2",
     "NVIDIA V100 datasheet (tensor FP16 125 TFLOPS; no BF16)"},
    {"V100 PCIe 16GB", N, "v100 16gb", 16, 900, 112, false, "HBM2",
     "NVIDIA V100 datasheet (tensor FP16 112 TFLOPS; no BF16)"},
    {"DGX Spark", N, "gb10|spark", 128, 273, 62.5, true, "LPDDR5X",
     "NVIDIA DGX Spark spec (derived: 1 PFLOP FP4 sparse / 16)"},
    // NVIDIA workstation: full-rate FP32 accumulate, dense = 4 x FP32 shader TFLOPS.
    {"RTX PRO 6000 Blackwell", N, "rtx pro 6000|rtx 6000 blackwell", 96, 1792, 500, false, "GDDR7",
     "NVIDIA RTX PRO 6000 Blackwell datasheet (derived: 4,000 AI TOPS FP4 sparse / 8)"},
    {"RTX 6000 Ada", N, "rtx 6000 ada generation", 48, 960, 364.2, false, "GDDR6",
     "NVIDIA Ada Lovelace architecture whitepaper, RTX 6000 Ada (FP16 FP32-acc 728.5 sparse)"},
    {"RTX A6000", N, "a6000", 48, 768, 154.8, false, "GDDR6",
     "NVIDIA RTX A6000 datasheet (tensor 309.7 sparse)"},
    {"RTX A5000", N, "a5000", 24, 768, 111.1, false, "GDDR6",
     "NVIDIA RTX A5000 datasheet (tensor 222.2 sparse)"},
    {"RTX A4000", N, "a4000", 16, 448, 76.7, false, "GDDR6",
     "NVIDIA RTX A4000 datasheet (tensor 153.4 sparse)"},
    // NVIDIA GeForce: BF16 with FP32 accumulate runs at half the FP16-accumulate rate.
    {"RTX 5090", N, "5090", 32, 1792, 209.5, false, "GDDR7",
     "NVIDIA RTX Blackwell GPU architecture whitepaper (derived: 3,352 AI TOPS FP4 sparse / 16)"},
    {"RTX 5080", N, "5080", 16, 960, 112.6, false, "GDDR7",
     "NVIDIA GeForce RTX 5080 spec page (derived: 1,801 AI TOPS / 16)"},
    {"RTX 5070 Ti", N, "5070ti", 16, 896, 87.9, false, "GDDR7",
     "NVIDIA GeForce RTX 5070 Ti spec page (derived: 1,406 AI TOPS / 16)"},
    {"RTX 5070", N, "5070", 12, 672, 61.8, false, "GDDR7",
     "NVIDIA GeForce RTX 5070 spec page (derived: 988 AI TOPS / 16)"},
    {"RTX 5060 Ti 16GB", N, "5060ti|rtx 5060 ti", 16, 448, 47.4, false, "GDDR7",
     "NVIDIA GeForce RTX 5060 Ti spec page (derived: 759 AI TOPS / 16)"},
    {"RTX 4090", N, "4090", 24, 1008, 165.2, false, "GDDR6X",
     "NVIDIA Ada Lovelace architecture whitepaper (BF16 FP32-acc 165.2 dense)"},
    {"RTX 4080", N, "4080", 16, 716.8, 97.5, false, "GDDR6X",
     "NVIDIA Ada Lovelace architecture whitepaper (BF16 FP32-acc 97.5 dense)"},
    {"RTX 4070 Ti", N, "4070ti", 12, 504, 80.2, false, "GDDR6X",
     "NVIDIA GeForce RTX 4070 Ti spec page (derived: 2 x 40.1 FP32 shader TFLOPS)"},
    {"RTX 4070", N, "4070", 12, 504, 58.3, false, "GDDR6X",
     "NVIDIA GeForce RTX 4070 spec page (derived: 2 x 29.1 FP32 shader TFLOPS)"},
    {"RTX 4060 Ti 16GB", N, "4060ti|rtx 4060 ti", 16, 288, 44.1, false, "GDDR6",
     "NVIDIA GeForce RTX 4060 Ti spec page (derived: 2 x 22.06 FP32 shader TFLOPS)"},
    {"RTX 4060", N, "4060", 8, 272, 30.2, false, "GDDR6",
     "NVIDIA GeForce RTX 4060 spec page (derived: 2 x 15.11 FP32 shader TFLOPS)"},
    {"RTX 3090 Ti", N, "3090ti", 24, 1008, 80, false, "GDDR6X",
     "NVIDIA Ampere GA102 whitepaper rule (derived: 2 x 40 FP32 shader TFLOPS)"},
    {"RTX 3090", N, "3090", 24, 936, 71, false, "GDDR6X",
     "NVIDIA Ampere GA102 GPU architecture whitepaper (FP16 FP32-acc 71 dense)"},
    {"RTX 3080", N, "3080|rtx 3080 10gb", 10, 760, 59.5, false, "GDDR6X",
     "NVIDIA Ampere GA102 GPU architecture whitepaper (FP16 FP32-acc 59.5 dense)"},
    {"RTX 3070", N, "3070", 8, 448, 40.6, false, "GDDR6",
     "NVIDIA GeForce RTX 3070 spec page (derived: 2 x 20.3 FP32 shader TFLOPS)"},
    {"RTX 3060 12GB", N, "3060|rtx 3060", 12, 360, 25.5, false, "GDDR6",
     "NVIDIA GeForce RTX 3060 spec page (derived: 2 x 12.74 FP32 shader TFLOPS)"},
    {"RTX 2080 Ti", N, "2080ti", 11, 616, 53.8, false, "GDDR6",
     "NVIDIA Turing GPU architecture whitepaper (FP16 FP32-acc 53.8; no BF16)"},
    {"TITAN RTX", N, "titan rtx", 24, 672, 130.5, false, "GDDR6",
     "NVIDIA Turing GPU architecture whitepaper (FP16 FP32-acc 130.5; no BF16)"},
    // AMD Instinct (dense matrix figures as printed on amd.com product pages).
    {"MI355X", A, "mi355x", 288, 8000, 2516.6, false, "HBM3E",
     "AMD Instinct MI355X product page (FP16/BF16 dense)"},
    {"MI350X", A, "", 288, 8000, 2307.2, false, "HBM3E",
     "AMD Instinct MI350X product page (FP16/BF16 dense)"},
    {"MI325X", A, "", 256, 6000, 1307.4, false, "HBM3E", "AMD Instinct MI325X product page"},
    {"MI300X", A, "", 192, 5300, 1307.4, false, "HBM3", "AMD Instinct MI300X product page"},
    {"MI300A", A, "", 128, 5300, 980.6, true, "HBM3", "AMD Instinct MI300A product page"},
    {"MI250X", A, "", 128, 3276.8, 383, false, "HBM2e", "AMD Instinct MI250X product page"},
    {"MI250", A, "", 128, 3276.8, 362.1, false, "HBM2e", "AMD Instinct MI250 product page"},
    {"MI210", A, "", 64, 1638.4, 181, false, "HBM2e", "AMD Instinct MI210 product page"},
    {"MI100", A, "", 32, 1228.8, 92.3, false, "HBM2",
     "AMD Instinct MI100 product page (BF16 92.3; FP16 184.6)"},
    // AMD Radeon (peak half-precision matrix figures from amd.com spec pages).
    {"RX 9070 XT", A, "9070xt", 16, 644.6, 194.7, false, "GDDR6",
     "AMD Radeon RX 9070 XT spec page (derived: 389 TFLOPS FP16 matrix sparse / 2)"},
    {"RX 7900 XTX", A, "7900xtx", 24, 960, 122.8, false, "GDDR6",
     "AMD Radeon RX 7900 XTX spec page (peak half precision)"},
    {"RX 7900 XT", A, "7900xt", 20, 800, 103, false, "GDDR6",
     "AMD Radeon RX 7900 XT spec page (peak half precision)"},
    {"RX 7900 GRE", A, "7900gre", 16, 576, 91.96, false, "GDDR6",
     "AMD Radeon RX 7900 GRE spec page (peak half precision)"},
    {"RX 7800 XT", A, "7800xt", 16, 624, 74.65, false, "GDDR6",
     "AMD Radeon RX 7800 XT spec page (peak half precision)"},
    {"Radeon PRO W7900", A, "w7900", 48, 864, 122.64, false, "GDDR6",
     "AMD Radeon PRO W7900 spec page (peak half precision)"},
    {"Radeon PRO W7800", A, "w7800", 32, 576, 90.5, false, "GDDR6",
     "AMD Radeon PRO W7800 spec page (peak half precision)"},
    // Apple M-series: unified memory at the largest configuration Apple sells.
    {"M1", M, "", 16, 68.25, 2.6, true, "LPDDR4X",
     "Apple M1 tech specs (8-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M1 Pro", M, "", 32, 200, 5.2, true, "LPDDR5",
     "Apple M1 Pro tech specs (16-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M1 Max", M, "", 64, 400, 10.4, true, "LPDDR5",
     "Apple M1 Max tech specs (32-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M1 Ultra", M, "", 128, 800, 20.9, true, "LPDDR5",
     "Apple M1 Ultra tech specs (64-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M2", M, "", 24, 100, 3.6, true, "LPDDR5",
     "Apple M2 tech specs (10-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M2 Pro", M, "", 32, 200, 6.8, true, "LPDDR5",
     "Apple M2 Pro tech specs (19-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M2 Max", M, "", 96, 400, 13.6, true, "LPDDR5",
     "Apple M2 Max tech specs (38-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M2 Ultra", M, "", 192, 800, 27.2, true, "LPDDR5",
     "Apple M2 Ultra tech specs (76-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M3", M, "", 24, 100, 3.6, true, "LPDDR5",
     "Apple M3 tech specs (10-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M3 Pro", M, "", 36, 150, 6.4, true, "LPDDR5",
     "Apple M3 Pro tech specs (18-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M3 Max", M, "", 128, 400, 14.2, true, "LPDDR5",
     "Apple M3 Max tech specs (40-core GPU, 16-core CPU model; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M3 Ultra", M, "", 512, 819, 28.4, true, "LPDDR5",
     "Apple M3 Ultra tech specs (80-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M4", M, "", 32, 120, 4.1, true, "LPDDR5X",
     "Apple M4 tech specs (10-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M4 Pro", M, "", 64, 273, 8.2, true, "LPDDR5X",
     "Apple M4 Pro tech specs (20-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M4 Max", M, "", 128, 546, 16.4, true, "LPDDR5X",
     "Apple M4 Max tech specs (40-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    {"M5", M, "", 32, 153, 4.1, true, "LPDDR5X",
     "Apple M5 tech specs (10-core GPU; TFLOPS estimated as cores x 128 x 2 x clock)"},
    // Intel.
    {"Gaudi 3", I, "gaudi3|hl-325l", 128, 3700, 1835, false, "HBM2e",
     "Intel Gaudi 3 AI accelerator white paper (BF16 matrix 1,835 TFLOPS)"},
    {"Data Center GPU Max 1550", I, "max 1550|ponte vecchio", 128, 3276.8, 832, false, "HBM2e",
     "Intel Data Center GPU Max Series product brief (XMX BF16 peak)"},
    {"Data Center GPU Max 1100", I, "max 1100", 48, 1228.8, 352, false, "HBM2e",
     "Intel Data Center GPU Max Series product brief (XMX BF16 peak)"},
    {"Arc A770 16GB", I, "a770", 16, 560, 137.6, false, "GDDR6",
     "Intel Arc A770 spec (derived: 32 Xe cores x 16 XMX x 128 FP16 FLOP/clk x 2.1 GHz)"},
    {"Arc B580", I, "b580", 12, 456, 116.5, false, "GDDR6",
     "Intel Arc B580 spec (derived: 233 INT8 TOPS / 2)"},
    {"Arc Pro B60", I, "b60", 24, 456, 98.5, false, "GDDR6",
     "Intel Arc Pro B60 spec (derived: 197 INT8 TOPS / 2)"},
};

// CUDA compute capability by catalog name (developer.nvidia.com/cuda-gpus): Blackwell data
// centre 10.0 / 10.3, Blackwell RTX 12.0, DGX Spark (GB10) 12.1, Hopper 9.0, Ada 8.9, Ampere GA10x
// 8.6, A100/A30 8.0, Turing 7.5, Volta 7.0.
struct Capability {
  std::string_view name;
  uint32_t cc;
};
constexpr Capability kCapabilities[] = {
    {"B300", 103}, {"B200", 100}, {"H200 SXM", 90}, {"H200 NVL", 90}, {"GH200", 90},
    {"H100 SXM", 90}, {"H100 PCIe", 90}, {"H100 NVL", 90}, {"A100 SXM 80GB", 80},
    {"A100 SXM 40GB", 80}, {"A100 PCIe 80GB", 80}, {"A100 PCIe 40GB", 80}, {"A40", 86},
    {"A30", 80}, {"A10", 86}, {"A2", 86}, {"L40S", 89}, {"L40", 89}, {"L4", 89}, {"T4", 75},
    {"V100 SXM2 32GB", 70}, {"V100 PCIe 16GB", 70}, {"DGX Spark", 121},
    {"RTX PRO 6000 Blackwell", 120}, {"RTX 6000 Ada", 89}, {"RTX A6000", 86}, {"RTX A5000", 86},
    {"RTX A4000", 86}, {"RTX 5090", 120}, {"RTX 5080", 120}, {"RTX 5070 Ti", 120},
    {"RTX 5070", 120}, {"RTX 5060 Ti 16GB", 120}, {"RTX 4090", 89}, {"RTX 4080", 89},
    {"RTX 4070 Ti", 89}, {"RTX 4070", 89}, {"RTX 4060 Ti 16GB", 89}, {"RTX 4060", 89},
    {"RTX 3090 Ti", 86}, {"RTX 3090", 86}, {"RTX 3080", 86}, {"RTX 3070", 86},
    {"RTX 3060 12GB", 86}, {"RTX 2080 Ti", 75}, {"TITAN RTX", 75},
};

}  // namespace

std::span<const GpuSpec> GpuTable() { return kGpus; }

uint32_t TableComputeCapability(std::string_view name) {
  for (const auto& row : kCapabilities) {
    if (row.name == name) return row.cc;
  }
  return 0;
}

}  // namespace memfit::plan
