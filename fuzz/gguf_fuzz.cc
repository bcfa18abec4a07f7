// Fuzz target: the GGUF reader (ReadGgufHeader) and everything a GGUF model goes through: the
// Model (DescribeModel -> ModelFromGguf), the generic estimators and renderers (Exercise), the
// llama.cpp estimator, the llama.cpp fit planner and the llama.cpp reports in every format.
//
// Input: GGUF file bytes followed by a control trailer of kTrailerBytes (shorter inputs are all
// file, with zero controls). The trailer picks
//   - the reader's chunk size (the file is read twice, with the default chunk and a small one,
//     and both reads must agree: the chunked cursor's boundaries are exercised everywhere);
//   - a virtual tail: the source claims up to 2^63 more bytes (zeros) than the input holds, as a
//     sparse local file or a Hub Content-Range may, so counts and offsets in the header are checked
//     against a large file without the fuzzer holding it;
//   - a split: the bytes are cut at the second "GGUF" magic into two shard files;
//   - the llama.cpp options: context, batch sizes, -ngl, cache types, flash attention, sequences,
//     GPUs and their memory, --n-cpu-moe, and the fit planner's targets.

#include <cstring>
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_support.h"
#include "gguf_models.h"
#include "gguf_writer.h"
#include "memfit/gguf.h"
#include "memfit/gguf_model.h"
#include "memfit/llamacpp.h"
#include "memfit/llamacpp_report.h"

namespace memfit::fuzz {
namespace {

using testing::GgufShape;
using testing::GgufWriter;
using testing::kF16;
using testing::kF32;
using testing::kQ4_0;
using testing::kQ4_K;
using testing::kQ6_K;
using testing::kQ8_0;
using u128 = unsigned __int128;

constexpr size_t kTrailerBytes = 16;
// What one source serves at most (real bytes and virtual zeros): then reads fail, as a truncated
// download would. Keeps inputs fast; a header that needs more is an error path, not a finding.
constexpr uint64_t kMaxServedBytes = uint64_t{4} << 20;

// The input bytes followed by `tail` virtual zero bytes.
class TailSource final : public ByteSource {
 public:
  TailSource(std::string_view bytes, uint64_t tail, std::string name)
      : bytes_(bytes), size_(bytes.size() + tail), name_(std::move(name)) {}
  Result<uint64_t> Size() override { return size_; }
  Result<std::string> Read(uint64_t offset, size_t length) override {
    if (offset > size_ || length > size_ - offset) {
      return MakeError("{}: read of {} bytes at {} past the end", name_, length, offset);
    }
    served_ += length;
    if (served_ > kMaxServedBytes) {
      exhausted_ = true;
      return MakeError("{}: read limit of the fuzz source reached", name_);
    }
    std::string out(length, '\0');
    if (offset < bytes_.size()) {
      std::memcpy(out.data(), bytes_.data() + offset,
                  std::min<uint64_t>(length, bytes_.size() - offset));
    }
    return out;
  }
  std::string Name() const override { return name_; }
  bool exhausted() const { return exhausted_; }

 private:
  std::string_view bytes_;
  uint64_t size_;
  std::string name_;
  uint64_t served_ = 0;
  bool exhausted_ = false;
};

// ---- seeds ------------------------------------------------------------------------------------

std::string Trailer(std::initializer_list<uint8_t> bytes) {
  std::string t(kTrailerBytes, '\0');
  size_t i = 0;
  for (uint8_t b : bytes) t[i++] = static_cast<char>(b);
  return t;
}

GgufShape Small(std::string arch) {
  GgufShape s;
  s.arch = std::move(arch);
  s.n_layer = 2;
  s.n_embd = 32;
  s.n_head = 2;
  s.n_head_kv = 1;
  s.head_dim = 16;
  s.n_ff = 64;
  s.n_vocab = 40;
  s.ctx = 512;
  return s;
}

// A file of every value type (tests/gguf_writer.h), in a given version and byte order.
std::string EveryValueType(uint32_t version, bool big_endian) {
  GgufWriter w(version, big_endian);
  w.Str("general.architecture", "llama")
      .U32("llama.block_count", 1)
      .U32("llama.context_length", 256)
      .U32("llama.embedding_length", 32)
      .U32("llama.attention.head_count", 2)
      .U8("u8", 200)
      .I8("i8", -5)
      .U16("u16", 60000)
      .I16("i16", -300)
      .U32("u32", 4000000000u)
      .I32("i32", -7)
      .F32("f32", 1.5f)
      .Bool("b", true)
      .U64("u64", 1ull << 40)
      .I64("i64", -(1ll << 40))
      .F64("f64", 0.25)
      .U32Array("llama.feed_forward_length", {100})
      .I32Array("ia", {-1, 2})
      .F32Array("fa", {0.5f, 2.0f})
      .BoolArray("ba", {true, false, true})
      .StrArray("sa", {"a", "", "ccc"});
  w.NestedU16Array("nested", {{1, 2}, {3}});
  w.Tensor("blk.0.attn_q.weight", {256, 3}, kQ4_K)
      .Tensor("output_norm.weight", {5}, kF32)
      .Tensor("blk.0.ffn_gate_exps.weight", {64, 2}, 39);
  return w.Build();
}

// A seed file: the whole file when small, else its header with the data left virtual (a tail of
// 2^tail_shift zero bytes, at least the data section), so every seed stays under -max_len.
struct SeedFile {
  std::string bytes;
  uint8_t tail_shift = 0;
};

SeedFile SeedOf(const GgufWriter& w) {
  std::string file = w.Build();
  if (file.size() <= 16384) return {std::move(file), 0};
  uint8_t shift = 1;
  while ((uint64_t{1} << shift) < w.DataBytes()) ++shift;
  return {w.Header(), shift};
}

// Two shards of a split model (gguf-split): metadata in the first, split.* keys in both.
std::string SplitPair() {
  return testing::TinySplitShard(0, {{"token_embd.weight", 32}, {"blk.0.attn_q.weight", 64}}).Build() +
         testing::TinySplitShard(1, {{"blk.1.attn_q.weight", 64}, {"output.weight", 32}}).Build();
}

}  // namespace

std::vector<std::string> Seeds() {
  std::vector<SeedFile> files;
  // Model-shaped files (tests/gguf_models.h), small enough to hold their zero data.
  files.push_back(SeedOf(testing::MakeGgufWriter(Small("llama"))));
  {
    GgufShape s = Small("qwen3");
    s.tied = true;
    s.type_of = [](const std::string&, int) { return kQ8_0; };
    files.push_back(SeedOf(testing::MakeGgufWriter(s)));
  }
  {
    GgufShape s = Small("llama");
    s.n_embd = 256;
    s.n_ff = 256;
    s.head_dim = 128;
    s.rope_freqs = true;
    s.type_of = [](const std::string& n, int) { return n == "output.weight" ? kQ6_K : kQ4_K; };
    files.push_back(SeedOf(testing::MakeGgufWriter(s)));
  }
  {
    GgufShape s = Small("olmoe");  // MoE
    s.n_expert = 4;
    s.n_expert_used = 2;
    s.n_ff_exp = 32;
    files.push_back(SeedOf(testing::MakeGgufWriter(s)));
  }
  {
    GgufShape s = Small("gemma2");  // sliding window, built-in pattern
    s.n_layer = 4;
    s.extra_keys = [](GgufWriter& w) { w.U32("gemma2.attention.sliding_window", 128); };
    files.push_back(SeedOf(testing::MakeGgufWriter(s)));
  }
  {
    GgufShape s = Small("gemma3");  // explicit SWA pattern, per-layer arrays, SWA head sizes
    s.n_layer = 4;
    s.extra_keys = [](GgufWriter& w) {
      w.U32("gemma3.attention.sliding_window", 64)
          .BoolArray("gemma3.attention.sliding_window_pattern", {true, false, true, false})
          .U32("gemma3.attention.key_length_swa", 8)
          .U32("gemma3.attention.value_length_swa", 8)
          .U32("gemma3.attention.sliding_window_pattern_unused", 0)
          .Bool("gemma3.attention.causal", true);
    };
    files.push_back(SeedOf(testing::MakeGgufWriter(s)));
  }
  {
    // DeepSeek-V3-like MLA + MoE with dense leading layers, metadata only (vocab-only style).
    GgufWriter w;
    const std::string a = "deepseek2";
    w.Str("general.architecture", a)
        .U32(a + ".block_count", 4)
        .U32(a + ".context_length", 4096)
        .U32(a + ".embedding_length", 64)
        .U32(a + ".feed_forward_length", 128)
        .U32(a + ".attention.head_count", 4)
        .U32(a + ".attention.head_count_kv", 4)
        .U32(a + ".attention.key_length", 24)
        .U32(a + ".attention.value_length", 16)
        .U32(a + ".attention.kv_lora_rank", 32)
        .U32(a + ".rope.dimension_count", 8)
        .U32(a + ".expert_count", 8)
        .U32(a + ".expert_used_count", 2)
        .U32(a + ".expert_shared_count", 1)
        .U32(a + ".expert_feed_forward_length", 32)
        .U32(a + ".leading_dense_block_count", 1)
        .U32(a + ".vocab_size", 100)
        .U32("general.file_type", 15);
    files.push_back(SeedOf(w));
  }
  {
    // Qwen3-Next-like hybrid: recurrent layers, every 4th full attention.
    GgufWriter w;
    const std::string a = "qwen3next";
    w.Str("general.architecture", a)
        .U32(a + ".block_count", 8)
        .U32(a + ".context_length", 8192)
        .U32(a + ".embedding_length", 64)
        .U32(a + ".feed_forward_length", 128)
        .U32(a + ".attention.head_count", 4)
        .U32(a + ".attention.head_count_kv", 2)
        .U32(a + ".attention.key_length", 16)
        .U32(a + ".attention.value_length", 16)
        .U32(a + ".ssm.conv_kernel", 4)
        .U32(a + ".ssm.state_size", 16)
        .U32(a + ".ssm.group_count", 2)
        .U32(a + ".ssm.inner_size", 128)
        .U32(a + ".full_attention_interval", 4)
        .U32(a + ".expert_count", 8)
        .U32(a + ".expert_used_count", 2)
        .U32(a + ".vocab_size", 100);
    files.push_back(SeedOf(w));
  }
  {
    // RWKV (every layer recurrent) and a hybrid marking recurrent layers with head_count_kv 0.
    GgufWriter w;
    w.Str("general.architecture", "rwkv6")
        .U32("rwkv6.block_count", 2)
        .U32("rwkv6.context_length", 1024)
        .U32("rwkv6.embedding_length", 64)
        .U32("rwkv6.wkv.head_size", 16)
        .U32("rwkv6.feed_forward_length", 128)
        .U32("rwkv6.attention.head_count", 0);
    files.push_back(SeedOf(w));
    GgufWriter h;
    h.Str("general.architecture", "jamba")
        .U32("jamba.block_count", 4)
        .U32("jamba.embedding_length", 64)
        .U32("jamba.context_length", 1024)
        .U32Array("jamba.feed_forward_length", {128, 128, 128, 128})
        .U32("jamba.attention.head_count", 4)
        .I32Array("jamba.attention.head_count_kv", {0, 0, 2, 0})
        .U32("jamba.ssm.conv_kernel", 4)
        .U32("jamba.ssm.state_size", 16)
        .U32("jamba.ssm.inner_size", 128)
        .U32("jamba.shortconv.l_cache", 3);
    files.push_back(SeedOf(h));
  }
  {
    // A vocab-only file with a tokenizer (no tensors, ends without padding), and a non-causal
    // embedding model.
    GgufWriter w;
    w.Str("general.architecture", "llama")
        .U32("llama.block_count", 2)
        .U32("llama.context_length", 1024)
        .U32("llama.embedding_length", 64)
        .U32("llama.attention.head_count", 4)
        .Str("tokenizer.ggml.model", "llama")
        .StrArray("tokenizer.ggml.tokens", {"<s>", "</s>", "a", "b"})
        .F32Array("tokenizer.ggml.scores", {0, 0, -1, -2})
        .I32Array("tokenizer.ggml.token_type", {3, 3, 1, 1});
    files.push_back(SeedOf(w));
    GgufWriter b;
    b.Str("general.architecture", "bert")
        .U32("bert.block_count", 2)
        .U32("bert.context_length", 512)
        .U32("bert.embedding_length", 32)
        .U32("bert.attention.head_count", 2)
        .Bool("bert.attention.causal", false)
        .Tensor("token_embd.weight", {32, 16}, kF16)
        .Tensor("position_embd.weight", {32, 8}, kF16)
        .Tensor("token_types.weight", {32, 2}, kF32);
    files.push_back(SeedOf(b));
  }
  {
    // A multimodal projector, general.alignment 64, and a legacy Q4_0 file.
    GgufWriter p;
    p.Str("general.architecture", "clip")
        .Str("general.type", "mmproj")
        .Tensor("v.patch_embd.weight", {32, 4}, kF16);
    files.push_back(SeedOf(p));
    GgufWriter a;
    a.Str("general.architecture", "llama")
        .U32("general.alignment", 64)
        .U32("llama.block_count", 1)
        .U32("llama.embedding_length", 32)
        .U32("llama.attention.head_count", 1);
    a.set_alignment_for_offsets(64);
    a.Tensor("blk.0.attn_q.weight", {32, 32}, kQ4_0).Tensor("output.weight", {32, 8}, kF16);
    files.push_back(SeedOf(a));
  }
  for (uint32_t version : {1u, 2u, 3u}) {
    for (bool big : {false, true}) files.push_back({EveryValueType(version, big), 0});
  }
  std::vector<std::string> seeds;
  for (const auto& f : files) {
    const uint8_t tail = f.tail_shift ? 0x02 : 0, shift = static_cast<uint8_t>(f.tail_shift << 2);
    seeds.push_back(f.bytes + Trailer({tail, 0, shift}));  // defaults
    seeds.push_back(f.bytes +
                    Trailer({static_cast<uint8_t>(tail | 0x01), 7, shift, 0, 3, 5, 0x13, 0x12, 2}));
  }
  // Split files, a large virtual file, and cache/offload variants.
  seeds.push_back(SplitPair() + Trailer({0x04}));
  seeds.push_back(SplitPair() + Trailer({0x05, 100}));
  seeds.push_back(files[0].bytes + Trailer({0x02, 0, 0xa8, 0xff}));  // a tail of 2^50 bytes
  seeds.push_back(files[3].bytes +
                  Trailer({0x38, 0, 0, 0, 6, 0xff, 0x34, 0x24, 4, 1, 2, 3, 40, 30, 1, 0xff}));
  seeds.push_back(files[6].bytes +
                  Trailer({0xc0, 0, 0, 0, 9, 1, 0x45, 0x11, 1, 2, 0, 1, 20, 0, 2, 0x0f}));
  return seeds;
}

namespace {

// ---- invariants of a parsed file ----------------------------------------------------------------

uint32_t ValueDepth(const GgufValue& v) {
  uint32_t depth = 0;
  for (const auto& n : v.nested) depth = std::max(depth, ValueDepth(n));
  return v.is_array() ? depth + 1 : 0;
}

void CheckValue(const GgufValue& v, const GgufLimits& limits) {
  if (v.type == GgufValueType::kString)
    Require(v.string_value.size() <= limits.max_string_bytes, "string over the cap");
  if (v.type == GgufValueType::kBool) Require(v.uint_value <= 1, "bool value above 1");
  if (!v.is_array()) return;
  Require(v.array_size <= limits.max_array_elements, "array over the element cap");
  size_t held = 0;
  switch (v.array_type) {
    case GgufValueType::kString:
      held = v.strings.size();
      break;
    case GgufValueType::kFloat32:
    case GgufValueType::kFloat64:
      held = v.floats.size();
      break;
    case GgufValueType::kInt8:
    case GgufValueType::kInt16:
    case GgufValueType::kInt32:
    case GgufValueType::kInt64:
      held = v.ints.size();
      break;
    case GgufValueType::kArray:
      held = v.nested.size();
      break;
    default:
      held = v.uints.size();
      break;
  }
  Require(held == v.array_size, "array_size differs from the elements held");
  for (const auto& s : v.strings)
    Require(s.size() <= limits.max_string_bytes, "array string over the cap");
  for (const auto& n : v.nested) CheckValue(n, limits);
}

bool SameValue(const GgufValue& a, const GgufValue& b) {
  if (a.type != b.type || a.uint_value != b.uint_value || a.int_value != b.int_value ||
      std::memcmp(&a.float_value, &b.float_value, sizeof(double)) != 0 ||
      a.string_value != b.string_value || a.array_type != b.array_type ||
      a.array_size != b.array_size || a.uints != b.uints || a.ints != b.ints ||
      a.strings != b.strings || a.nested.size() != b.nested.size() ||
      a.floats.size() != b.floats.size()) {
    return false;
  }
  if (!a.floats.empty() &&
      std::memcmp(a.floats.data(), b.floats.data(), a.floats.size() * sizeof(double)) != 0) {
    return false;  // bitwise: NaNs read from the file compare equal to themselves
  }
  for (size_t i = 0; i < a.nested.size(); ++i) {
    if (!SameValue(a.nested[i], b.nested[i])) return false;
  }
  return true;
}

bool SameFile(const GgufFile& a, const GgufFile& b) {
  if (a.version != b.version || a.big_endian != b.big_endian || a.alignment != b.alignment ||
      a.file_bytes != b.file_bytes || a.header_bytes != b.header_bytes ||
      a.data_offset != b.data_offset || a.tensor_bytes != b.tensor_bytes ||
      a.metadata.size() != b.metadata.size() || a.tensors.size() != b.tensors.size()) {
    return false;
  }
  for (size_t i = 0; i < a.metadata.size(); ++i) {
    if (a.metadata[i].first != b.metadata[i].first ||
        !SameValue(a.metadata[i].second, b.metadata[i].second)) {
      return false;
    }
  }
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const auto &x = a.tensors[i], &y = b.tensors[i];
    if (x.name != y.name || x.dims != y.dims || x.type != y.type || x.offset != y.offset ||
        x.elements != y.elements || x.bytes != y.bytes) {
      return false;
    }
  }
  return true;
}

// Exactly what ReadGgufHeader promises (include/memfit/gguf.h, the layout comment in
// src/formats/gguf_reader.cc).
void CheckFile(const GgufFile& f, uint64_t source_bytes, const GgufLimits& limits) {
  Require(f.version >= 1 && f.version <= 3, "version outside 1..3");
  Require(f.file_bytes == source_bytes, "file_bytes differs from the source size");
  Require(f.alignment > 0 && (f.alignment & (f.alignment - 1)) == 0,
          "alignment not a power of two");
  if (const GgufValue* a = f.Find("general.alignment")) {
    Require(a->type == GgufValueType::kUint32 && a->uint_value == f.alignment,
            "general.alignment not applied");
  } else {
    Require(f.alignment == 32, "alignment without general.alignment is not 32");
  }
  Require(f.metadata.size() <= limits.max_kv, "more keys than the cap");
  Require(f.key_index.size() == f.metadata.size(),
          "key_index does not index every key (duplicates?)");
  for (size_t i = 0; i < f.metadata.size(); ++i) {
    const auto& [key, value] = f.metadata[i];
    Require(key.size() <= limits.max_key_bytes, "key over the cap");
    auto it = f.key_index.find(key);
    Require(it != f.key_index.end() && it->second == i, "key_index points elsewhere");
    Require(ValueDepth(value) <= limits.max_array_depth, "arrays nested deeper than the cap");
    CheckValue(value, limits);
  }
  Require(f.tensors.size() <= limits.max_tensors, "more tensors than the cap");
  Require(f.header_bytes <= f.file_bytes, "header_bytes beyond the file");
  u128 sum = 0;
  std::vector<std::pair<uint64_t, uint64_t>> extents;
  for (const auto& t : f.tensors) {
    Require(t.name.size() < 64, "tensor name of 64 bytes or more");
    Require(t.dims.size() <= 4, "more than 4 dimensions");
    Require(t.type != nullptr && FindGgmlType(t.type->id) == t.type,
            "tensor type not from the table");
    u128 elements = 1;
    for (uint64_t d : t.dims)
      elements = elements * d > (u128{1} << 64) ? (u128{1} << 64) : elements * d;
    Require(elements == t.elements && t.elements <= static_cast<uint64_t>(INT64_MAX),
            "elements differ from dims");
    const uint64_t ne0 = t.dims.empty() ? 1 : t.dims[0];
    Require(ne0 % t.type->block_elements == 0, "ne0 not a whole number of blocks");
    Require(u128{t.elements} / t.type->block_elements * t.type->block_bytes == t.bytes,
            "tensor bytes differ from elements / block x block bytes");
    Require(t.offset % f.alignment == 0, "tensor offset not aligned");
    sum += t.bytes;
    if (t.bytes > 0) extents.emplace_back(t.offset, t.bytes);
  }
  Require(sum == f.tensor_bytes, "tensor_bytes differs from the sum of tensor sizes");
  if (f.tensors.empty()) {
    Require(f.data_offset == f.header_bytes, "a file without tensors has a data section");
    return;
  }
  Require(f.data_offset >= f.header_bytes && f.data_offset - f.header_bytes < f.alignment &&
              f.data_offset % f.alignment == 0,
          "data_offset is not header_bytes aligned up");
  Require(f.data_offset <= f.file_bytes, "data section starts past the end");
  const uint64_t data_bytes = f.file_bytes - f.data_offset;
  std::sort(extents.begin(), extents.end());
  for (size_t i = 0; i < extents.size(); ++i) {
    Require(u128{extents[i].first} + extents[i].second <= data_bytes,
            "tensor data past the data section");
    if (i > 0)
      Require(extents[i - 1].first + extents[i - 1].second <= extents[i].first, "tensors overlap");
  }
  Require(f.tensor_bytes <= data_bytes, "tensor bytes exceed the data section");
}

// Reads `bytes` (+ `tail` virtual zeros) with the default limits and with `chunk`, checks both
// agree and the file's invariants. nullopt when the bytes are not a GGUF file.
std::optional<GgufFile> Read(std::string_view bytes, uint64_t tail, size_t chunk,
                             const std::string& name) {
  GgufLimits small;
  small.chunk_bytes = chunk;
  Result<GgufFile> a = Error{}, b = Error{};
  bool exhausted = false;
  if (tail == 0) {
    MemoryByteSource sa{std::string(bytes), name}, sb{std::string(bytes), name};
    a = ReadGgufHeader(sa);
    b = ReadGgufHeader(sb, small);
  } else {
    TailSource sa(bytes, tail, name), sb(bytes, tail, name);
    a = ReadGgufHeader(sa);
    b = ReadGgufHeader(sb, small);
    exhausted = sa.exhausted() || sb.exhausted();
  }
  CheckResult(a);
  CheckResult(b);
  if (!exhausted) {
    Require(a.has_value() == b.has_value(), "the chunk size changed whether the file parses");
    if (!a)
      Require(a.error().message == b.error().message, "the chunk size changed the error");
    else
      Require(SameFile(*a, *b), "the chunk size changed the parsed file");
  }
  Result<GgufFile>& r = b ? b : a;
  if (!r) return std::nullopt;
  CheckFile(*r, bytes.size() + tail, small);
  return std::move(*r);
}

// ---- the llama.cpp estimate -------------------------------------------------------------------

u128 DeviceTotal(const LlamaCppDevice& d) {
  return u128{d.model_bytes} + d.kv_bytes + d.rs_bytes + d.compute_bytes + d.output_bytes +
         d.context_bytes;
}

void CheckEstimate(const Model& m, const LlamaCppOptions& o, const LlamaCppEstimate& e) {
  const Hyperparameters& hp = m.hp;
  const size_t gpus =
      std::max<size_t>(o.num_gpus, std::max(o.tensor_split.size(), o.gpu_free_bytes.size()));
  Require(e.devices.size() == gpus + 1 && e.devices.back().is_host,
          "devices are not the GPUs then the host");
  Require(e.total_layers == hp.num_layers + 1 && e.offloaded_layers <= e.total_layers,
          "layer counts");
  uint64_t layers = 0, outputs = 0;
  u128 model_bytes = 0, kv = 0, rs = 0;
  for (const auto& d : e.devices) {
    Require(DeviceTotal(d) == d.total(), "a device total overflows 64 bits");
    layers += d.layers;
    outputs += d.output_layer;
    model_bytes += d.model_bytes;
    kv += d.kv_bytes;
    rs += d.rs_bytes;
    if (!d.is_host) Require(d.output_bytes == 0, "output buffer on a GPU");
  }
  Require(layers == hp.num_layers && outputs == 1, "layers placed more or less than once");
  u128 file_bytes = 0;
  for (const auto& t : m.tensors) file_bytes += t.bytes;
  Require(file_bytes == e.model_file_tensor_bytes,
          "model_file_tensor_bytes differs from the tensors");
  Require(model_bytes >= file_bytes, "device model buffers smaller than the tensors (overflow?)");
  Require(kv == u128{e.kv_k_bytes} + e.kv_v_bytes, "device KV differs from K + V (overflow?)");
  Require(rs == e.rs_bytes, "device recurrent state differs from the total (overflow?)");
  // The KV cache is exact (src/estimate/llamacpp_kv.cc): recompute it in 128 bits.
  const uint64_t requested = o.context_tokens ? o.context_tokens : hp.max_position_embeddings;
  // n_ctx: the context padded to 256; without a unified cache, n_ctx_seq (padded to 256) per
  // sequence, which may round n_ctx down by less than one cell per sequence.
  const bool unified = o.kv_unified || o.parallel == 1;
  Require(e.n_ctx_seq % 256 == 0 && e.kv_cells_full == e.n_ctx, "cache cells differ from n_ctx");
  if (unified) {
    Require(e.n_ctx >= requested && e.n_ctx % 256 == 0 && e.n_ctx_seq == e.n_ctx,
            "n_ctx is not -c padded to 256");
  } else {
    Require(u128{e.n_ctx_seq} * o.parallel == e.n_ctx && u128{e.n_ctx} + o.parallel > requested,
            "n_ctx is not n_ctx_seq x sequences");
  }
  Require(e.n_ubatch <= e.n_ctx, "n_ubatch above n_ctx");
  const GgmlTypeInfo* tk = FindGgmlTypeByName(o.cache_type_k);
  const GgmlTypeInfo* tv = FindGgmlTypeByName(o.cache_type_v);
  Require(tk && tv, "estimate with unknown cache types");
  u128 k_bytes = 0, v_bytes = 0;
  for (const auto& li : hp.layers) {
    if (li.recurrent || li.attention == AttentionKind::kNone || !hp.causal) continue;
    const u128 cells = li.attention == AttentionKind::kSliding ? e.kv_cells_swa : e.kv_cells_full;
    k_bytes += u128{li.head_dim_k} * li.num_kv_heads / tk->block_elements * tk->block_bytes * cells;
    v_bytes += u128{li.head_dim_v} * li.num_kv_heads / tv->block_elements * tv->block_bytes * cells;
  }
  Require(k_bytes == e.kv_k_bytes && v_bytes == e.kv_v_bytes,
          "KV cache differs from its formula (overflow?)");
  const u128 output =
      u128{4} * (u128{hp.vocab_size} + (o.embeddings ? hp.hidden_size : 0)) * o.parallel;
  Require(output == e.host().output_bytes,
          "output buffer differs from 4 x (vocab + embd) x sequences");
  // Graph inputs are part of every compute buffer in use: 4 B x n_embd x n_ubatch (+ positions on
  // the host). A smaller buffer wrapped around.
  const u128 inputs = u128{4} * hp.hidden_size * e.n_ubatch;
  Require(e.host().compute_bytes >= inputs + u128{8} * e.n_ubatch,
          "host compute buffer below its inputs");
  for (size_t g = 0; g < gpus; ++g) {
    if (e.devices[g].compute_bytes > 0)
      Require(e.devices[g].compute_bytes >= inputs, "GPU compute below inputs");
  }
}

void CheckJson(const std::string& text) {
  Require(nlohmann::json::accept(text), "a JSON report is not valid JSON (UTF-8)");
}

void RenderAll(const Model& m, const LlamaCppEstimate& e) {
  for (auto format :
       {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kCsv, OutputFormat::kMarkdown}) {
    std::string out = RenderLlamaCppEstimate(m, e, format);
    Require(!out.empty(), "empty llama.cpp report");
    if (format == OutputFormat::kJson) CheckJson(out);
  }
}

// The llama.cpp options a trailer byte selects.
constexpr uint64_t kContexts[] = {0,
                                  1,
                                  255,
                                  256,
                                  257,
                                  512,
                                  4096,
                                  32768,
                                  131072,
                                  uint64_t{1} << 24,
                                  uint64_t{1} << 32,
                                  uint64_t{1} << 40,
                                  uint64_t{1} << 62,
                                  UINT64_MAX - 255,
                                  UINT64_MAX - 1,
                                  UINT64_MAX};
constexpr const char* kCacheTypes[] = {"f16",    "f32",  "bf16", "q8_0", "q4_0", "q4_1",
                                       "iq4_nl", "q5_0", "q5_1", "Q4_K", "q2_k", "tq1_0",
                                       "mxfp4",  "i8",   "f64",  "bogus"};
constexpr uint64_t kBatches[] = {1, 2, 31, 32, 64, 512, 2048, 8192, uint64_t{1} << 32, UINT64_MAX};

uint64_t Pick(const uint64_t* table, size_t n, uint8_t b) { return table[b % n]; }

// A byte size from a byte: 2^(b % 64) scaled by 1..4, saturating.
uint64_t Bytes(uint8_t b) {
  const unsigned shift = b % 64;
  const uint64_t base = uint64_t{1} << shift;
  const uint64_t scale = 1 + (b >> 6);
  return base > UINT64_MAX / scale ? UINT64_MAX : base * scale;
}

LlamaCppOptions Options(const uint8_t* t) {
  LlamaCppOptions o;
  o.context_tokens = t[4] < 16 ? kContexts[t[4]] : uint64_t{t[4]} * 97;
  o.gpu_layers = static_cast<int8_t>(t[5]);
  if (t[5] == 0x7f) o.gpu_layers = INT64_MAX;
  if (t[5] == 0x80) o.gpu_layers = INT64_MIN;
  o.cache_type_k = kCacheTypes[t[6] & 15];
  o.cache_type_v = kCacheTypes[t[6] >> 4];
  o.flash_attn = static_cast<FlashAttn>(t[7] % 3);
  o.num_gpus = (t[7] >> 2) & 7;
  o.parallel = t[8] % 9;
  if (t[8] == 0xff) o.parallel = UINT32_MAX;
  o.ubatch_tokens = Pick(kBatches, std::size(kBatches), t[9]);
  o.batch_tokens = Pick(kBatches, std::size(kBatches), t[9] >> 4);
  o.n_cpu_moe = t[10] == 0xff ? UINT64_MAX : t[10];
  o.kv_unified = t[0] & 0x08;
  o.swa_full = t[0] & 0x10;
  o.no_kv_offload = t[0] & 0x20;
  o.ngl_semantics = t[0] & 0x40 ? NglSemantics::kLegacy : NglSemantics::kCurrent;
  o.embeddings = t[0] & 0x80;
  o.op_offload = !(t[15] & 0x01);
  o.mmap = !(t[15] & 0x02);
  o.reserve_logits_for_ubatch = t[15] & 0x04;
  if (t[15] & 0x08) o.cuda_context_bytes = Bytes(t[13]);
  // -ts and free memory per GPU (t[11]): none, equal, skewed, zeros, huge.
  const uint32_t split_gpus = 1 + (t[11] >> 5);
  switch (t[11] & 7) {
    case 1:
      o.tensor_split.assign(split_gpus, 1.0);
      break;
    case 2:
      for (uint32_t g = 0; g < split_gpus; ++g) o.tensor_split.push_back(g * 3.0 + 0.5);
      break;
    case 3:
      o.tensor_split.assign(split_gpus, 0.0);
      break;
    case 4:
      for (uint32_t g = 0; g < split_gpus; ++g) o.gpu_free_bytes.push_back(Bytes(t[12] + g * 7));
      break;
    case 5:
      o.tensor_split = {1e308, 1e308, 0.0};
      break;
    default:
      break;
  }
  return o;
}

LlamaCppFitOptions FitOptions(const LlamaCppOptions& base, const uint8_t* t) {
  LlamaCppFitOptions fit;
  fit.base = base;
  fit.base.gpu_free_bytes.clear();
  fit.base.num_gpus = 0;
  fit.context_fixed = (t[14] & 0x01) && base.context_tokens > 0;
  fit.gpu_layers_fixed = t[14] & 0x02;
  const uint32_t gpus = 1 + ((t[14] >> 2) & 3);
  for (uint32_t g = 0; g < gpus; ++g)
    fit.gpu_bytes.push_back(Bytes(static_cast<uint8_t>(t[12] + 11 * g)));
  if (t[14] & 0x10) fit.host_bytes = Bytes(t[13]);
  switch ((t[14] >> 5) & 3) {
    case 1:
      fit.margin_bytes.clear();
      break;
    case 2:
      fit.margin_bytes.assign(gpus, Bytes(t[13]));
      break;
    case 3:
      fit.margin_bytes = {UINT64_MAX - 1, 0};
      break;  // more margins than GPUs: an error
    default:
      break;
  }
  fit.min_context_tokens = t[15] & 0x10 ? Pick(kContexts, std::size(kContexts), t[15] >> 4) : 4096;
  return fit;
}

void CheckPlan(const Model& m, const LlamaCppFitOptions& fit, const LlamaCppFitPlan& plan) {
  CheckEstimate(m, plan.options, plan.estimate);
  Require(!plan.arguments.empty(), "a plan without llama.cpp arguments");
  if (fit.gpu_layers_fixed)
    Require(plan.options.gpu_layers == fit.base.gpu_layers, "-ngl changed although fixed");
  if (fit.context_fixed)
    Require(plan.options.context_tokens == fit.base.context_tokens, "-c changed although fixed");
  if (!plan.fits) return;
  for (size_t g = 0; g < fit.gpu_bytes.size(); ++g) {
    const uint64_t margin = fit.margin_bytes.empty() ? 0
                            : fit.margin_bytes.size() == 1
                                ? fit.margin_bytes[0]
                                : fit.margin_bytes[std::min(g, fit.margin_bytes.size() - 1)];
    Require(DeviceTotal(plan.estimate.devices[g]) + margin <= fit.gpu_bytes[g],
            "a plan that fits overfills a GPU");
  }
  if (fit.host_bytes)
    Require(DeviceTotal(plan.estimate.host()) <= fit.host_bytes, "a plan that fits overfills RAM");
}

void LlamaCpp(Model model, std::string_view label, const uint8_t* t) {
  model.name = std::string(label);  // arbitrary bytes: the reports must stay valid
  const LlamaCppOptions o = Options(t);
  auto est = EstimateLlamaCpp(model, o);
  CheckResult(est);
  if (est) {
    CheckEstimate(model, o, *est);
    RenderAll(model, *est);
  }
  const LlamaCppFitOptions fit = FitOptions(o, t);
  auto plan = FitLlamaCpp(model, fit);
  CheckResult(plan);
  if (!plan) return;
  CheckPlan(model, fit, *plan);
  for (auto format :
       {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kCsv, OutputFormat::kMarkdown}) {
    std::string out = RenderLlamaCppFit(model, *plan, std::string(label), format);
    Require(!out.empty(), "empty llama.cpp fit report");
    if (format == OutputFormat::kJson) CheckJson(out);
  }
}

void CheckModel(const Model& m, const std::vector<GgufShard>& shards) {
  size_t tensors = 0;
  u128 bytes = 0;
  for (const auto& s : shards) {
    tensors += s.file.tensors.size();
    bytes += s.file.tensor_bytes;
  }
  u128 model_bytes = 0;
  for (const auto& t : m.tensors) model_bytes += t.bytes;
  Require(m.tensors.size() == tensors && model_bytes == bytes,
          "the Model's tensors differ from the files'");
  Require(m.hp.layers.size() == m.hp.num_layers || GgufFacts(shards).is_projector,
          "one LayerInfo per layer");
  for (const auto& t : m.tensors) {
    const int64_t il = GgufLayerOf(t.name);
    Require(il < 0 || static_cast<uint64_t>(il) < m.hp.num_layers || GgufFacts(shards).is_projector,
            "a tensor of a layer beyond block_count");
  }
}

}  // namespace

void Run(std::string_view input) {
  uint8_t t[kTrailerBytes] = {};
  std::string_view file = input;
  if (input.size() > kTrailerBytes) {
    file = input.substr(0, input.size() - kTrailerBytes);
    std::memcpy(t, input.data() + file.size(), kTrailerBytes);
  }
  const size_t chunk =
      t[0] & 0x01 ? 1 + t[1] + static_cast<size_t>(t[2] & 3) * 256 : (size_t{1} << 20);
  uint64_t tail = 0;
  if (t[0] & 0x02) {
    const unsigned shift = t[2] >> 2;  // 0..63
    const uint64_t base = uint64_t{t[3]} + 1;
    tail = shift >= 56 ? (uint64_t{1} << 63) : std::min(base << shift, uint64_t{1} << 63);
  }
  std::vector<GgufShard> shards;
  const size_t second = file.size() > 8 ? file.find("GGUF", 8) : std::string_view::npos;
  if ((t[0] & 0x04) && second != std::string_view::npos) {
    auto a = Read(file.substr(0, second), 0, chunk, "fuzz-00001-of-00002.gguf");
    auto b = Read(file.substr(second), tail, chunk, "fuzz-00002-of-00002.gguf");
    if (!a || !b) return;
    shards.push_back({"fuzz-00001-of-00002.gguf", std::move(*a)});
    shards.push_back({"fuzz-00002-of-00002.gguf", std::move(*b)});
  } else {
    auto f = Read(file, tail, chunk, "fuzz.gguf");
    if (!f) return;
    shards.push_back({"fuzz.gguf", std::move(*f)});
  }
  ModelInputs inputs;
  inputs.name = "fuzz";
  inputs.location = "fuzz.gguf";
  inputs.gguf = std::move(shards);
  auto model = DescribeModel(inputs);
  CheckResult(model);
  if (!model) return;
  CheckModel(*model, inputs.gguf);
  const std::string_view label = input.substr(0, std::min<size_t>(input.size(), 16));
  const uint32_t choice = Choice(input);
  Exercise(*model, label, choice);
  if (!GgufFacts(inputs.gguf).is_projector) LlamaCpp(std::move(*model), label, t);
}

}  // namespace memfit::fuzz
