// Parity of the architecture builders across rewrites (issue 30): every catalog model and every
// config of ../shared/eval is built under four option sets, and a digest of the model (every
// tensor's name, shape, dtype, bytes, logical parameters, kind, head/tie flags, stored/loaded,
// component, copies and block; the hyperparameters and per-layer facts; assumptions, notes and
// no-split patterns; or the error) is compared with tests/data/model_digests.tsv.
//
// "Both ways" cannot coexist once a hand-written builder is deleted for a DecoderSpec row, so the
// committed digests, generated from the old builders on the tree before any of them moved, ARE
// the old way: a family moves to a spec only while this test passes. MEMFIT_WRITE_DIGESTS=1
// rewrites the file (only for a change meant to alter models, said in its commit).
//
// Each model's tensors are also hashed in kSegments consecutive segments, so a mismatch names the
// first differing segment and prints its tensors as built now; MEMFIT_DIGEST_DUMP=<dir> writes
// every model's full canonical text there, to diff against a dump of an older tree.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "memfit/architecture.h"
#include "memfit/catalog.h"
#include "memfit/dtype.h"
#include "memfit/hf_config.h"
#include "memfit/model.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

constexpr size_t kSegments = 8;

uint64_t Fnv1a(std::string_view text, uint64_t h = 14695981039346656037ull) {
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Hex(uint64_t v) { return fmt::format("{:016x}", v); }

std::string TensorLine(const Tensor& t, const BlockAssignment& blocks, size_t i) {
  std::string line = t.name + "\t[";
  for (uint64_t d : t.shape) line += std::to_string(d) + ",";
  const int32_t block = blocks.tensor_block[i];
  line += fmt::format(
      "]\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}", DtypeName(t.dtype),
      t.dtype_label, t.numel, t.bytes, t.logical_params ? std::to_string(*t.logical_params) : "-",
      static_cast<int>(t.kind), t.in_head, t.tied_to, t.stored, t.loaded, t.component, t.base_only,
      t.tie_broken_on_meta, t.copies, t.repeat_span, t.repeat_index_from_end,
      block < 0 ? std::string("-") : blocks.names[static_cast<size_t>(block)]);
  return line;
}

std::string LayerLine(const LayerInfo& l) {
  return fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
                     static_cast<int>(l.attention), static_cast<int>(l.mixer), l.num_heads,
                     l.num_kv_heads, l.head_dim_k, l.head_dim_v, l.window_tokens, l.moe,
                     l.intermediate_size, l.cross_attention, l.recurrent, l.state.conv_channels,
                     l.state.conv_kernel, l.state.heads, l.state.elements_per_head,
                     l.state.state_bits, l.indexer_head_dim, l.compress_ratio, l.k_eq_v,
                     l.kv_shared, 0);
}

// Everything but the tensors: hyperparameters, layers, labels.
std::string MetaText(const Model& m) {
  const Hyperparameters& hp = m.hp;
  std::string s = fmt::format(
      "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|"
      "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}\n",
      m.name, m.source, m.model_type, m.architecture, hp.hidden_size, hp.num_layers,
      hp.num_attention_heads, hp.num_kv_heads, hp.head_dim, hp.intermediate_size, hp.vocab_size,
      hp.max_position_embeddings, hp.tie_word_embeddings, hp.gated_mlp, hp.activation, hp.norm,
      hp.num_experts, hp.experts_per_token, hp.num_shared_experts, hp.moe_intermediate_size,
      hp.kv_lora_rank, hp.qk_rope_head_dim, hp.is_encoder_decoder, hp.num_encoder_layers,
      hp.encoder_max_positions, hp.hidden_dropout, hp.attention_dropout, hp.sliding_window,
      hp.leading_dense_layers, hp.ssm_conv_kernel, hp.ssm_inner_size, hp.ssm_state_size,
      hp.ssm_group_count, hp.ssm_chunk_size, hp.q_lora_rank, hp.qk_nope_head_dim, hp.v_head_dim,
      hp.shared_expert_intermediate_size, hp.num_mtp_layers, hp.index_topk);
  s += hp.text_config_key + "|" + m.base_model_prefix + "|" + m.auto_map_class + "|" +
       (m.config_dtype ? std::string(DtypeName(*m.config_dtype)) : "-") + "|" +
       (m.index_total_size ? std::to_string(*m.index_total_size) : "-") + "\n";
  for (const LayerInfo& l : hp.layers) s += LayerLine(l) + "\n";
  for (const auto& p : m.no_split_patterns) s += "split " + p + "\n";
  for (const auto& a : m.assumptions) s += "assume " + a + "\n";
  for (const auto& n : m.notes) s += "note " + n + "\n";
  return s;
}

struct Digest {
  size_t tensors = 0;
  uint64_t meta = 0;
  std::vector<uint64_t> segments;  // kSegments hashes over consecutive tensor ranges
  std::string Line(const std::string& id) const {
    std::string line = id + "\t" + std::to_string(tensors) + "\t" + Hex(meta);
    for (uint64_t s : segments) line += "\t" + Hex(s);
    return line;
  }
};

// The tensors of segment k of n tensors: [n * k / kSegments, n * (k + 1) / kSegments).
size_t SegmentStart(size_t n, size_t k) { return n * k / kSegments; }

Digest DigestOf(const Result<Model>& built, std::string* dump) {
  Digest d;
  d.segments.assign(kSegments, Fnv1a(""));
  if (!built) {
    d.meta = Fnv1a("error " + built.error().message);
    if (dump) *dump = "error " + built.error().message + "\n";
    return d;
  }
  const Model& m = *built;
  const std::string meta = MetaText(m);
  d.meta = Fnv1a(meta);
  d.tensors = m.tensors.size();
  if (dump) *dump = meta;
  const BlockAssignment blocks = AssignBlocks(m, {});
  for (size_t k = 0; k < kSegments; ++k) {
    uint64_t h = Fnv1a("");
    for (size_t i = SegmentStart(d.tensors, k); i < SegmentStart(d.tensors, k + 1); ++i) {
      const std::string line = TensorLine(m.tensors[i], blocks, i);
      h = Fnv1a(line + "\n", h);
      if (dump) *dump += line + "\n";
    }
    d.segments[k] = h;
  }
  return d;
}

struct Variant {
  const char* name = "";
  BuildOptions options;
};

const std::vector<Variant>& Variants() {
  static const std::vector<Variant> kVariants = [] {
    std::vector<Variant> v(4);
    v[0].name = "default";
    v[1].name = "compact";
    v[1].options.compact_repeats = true;
    v[2].name = "tf442";
    v[2].options.buffers = BufferConvention::kTransformers442;
    v[3].name = "unquantized";
    v[3].options.ignore_quantization = true;
    return v;
  }();
  return kVariants;
}

// Every config the digests cover: (id, config.json text).
std::vector<std::pair<std::string, std::string>> Configs(bool* have_eval) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const CatalogEntry& entry : Catalog()) {
    out.emplace_back("catalog:" + std::string(entry.id), std::string(entry.config_json));
  }
  auto dir = testing::EvalDir();
  *have_eval = dir.has_value();
  if (!dir) return out;
  for (const char* set : {"recent", "models"}) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(*dir + "/" + set)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      auto text = testing::ReadFile(*dir + "/" + set + "/" + name + "/config.json");
      if (text) out.emplace_back("eval:" + std::string(set) + "/" + name, *text);
    }
  }
  return out;
}

const std::string kDigestFile = std::string(MEMFIT_SOURCE_DIR) + "/tests/data/model_digests.tsv";

// The committed digests: id -> the rest of its line.
std::map<std::string, std::string> ReadDigests() {
  std::map<std::string, std::string> out;
  std::ifstream in(kDigestFile);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    if (tab != std::string::npos) out[line.substr(0, tab)] = line;
  }
  return out;
}

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  std::string field;
  while (std::getline(s, field, '\t')) out.push_back(field);
  return out;
}

// What differs between a committed line and the model built now, for the failure message.
std::string Explain(const std::string& committed, const Digest& now, const Result<Model>& built) {
  const std::vector<std::string> old = Split(committed);
  if (old.size() != 3 + kSegments) return "malformed committed line";
  std::string why;
  if (old[1] != std::to_string(now.tensors)) {
    why += fmt::format("tensor count {} -> {}; ", old[1], now.tensors);
  }
  if (old[2] != Hex(now.meta)) {
    why += "hyperparameters, layers, assumptions, notes or the error differ; ";
    if (!built) why += "now: " + built.error().message + "; ";
  }
  for (size_t k = 0; k < kSegments && built; ++k) {
    if (old[3 + k] == Hex(now.segments[k])) continue;
    const size_t first = SegmentStart(now.tensors, k), end = SegmentStart(now.tensors, k + 1);
    why += fmt::format("first differing segment {} (tensors {}..{}), as built now:\n", k, first,
                       end);
    const BlockAssignment blocks = AssignBlocks(*built, {});
    for (size_t i = first; i < end && i < first + 40; ++i) {
      why += "  " + TensorLine(built->tensors[i], blocks, i) + "\n";
    }
    why += "(MEMFIT_DIGEST_DUMP=<dir> on both trees and diff for the exact tensor)";
    break;
  }
  return why;
}

// The digest line of every (config, variant) this run builds, in the file's order; `only` picks
// the configs (shard k of n: the i-th config with i % n == k), `each` sees every line built.
struct Built {
  std::string key, line;
  Digest digest;
  Result<Model> model;
};

template <typename Each>
void ForEachDigest(size_t shard, size_t shards, Each each) {
  bool have_eval = false;
  const auto configs = Configs(&have_eval);
  const char* dump_dir = std::getenv("MEMFIT_DIGEST_DUMP");
  // MEMFIT_DIGEST_TYPES=llama,qwen2: only configs whose model_type is listed (while iterating).
  const char* types = std::getenv("MEMFIT_DIGEST_TYPES");
  for (size_t i = 0; i < configs.size(); ++i) {
    if (i % shards != shard) continue;
    const auto& [id, text] = configs[i];
    auto config = HfConfig::Parse(text, id);
    if (types && (!config || ("," + std::string(types) + ",").find("," + config->model_type() + ",") ==
                                 std::string::npos)) {
      continue;
    }
    for (const Variant& v : Variants()) {
      // ignore_quantization changes nothing for a config without a quantization.
      if (v.options.ignore_quantization && text.find("quantization_config") == std::string::npos) continue;
      Built b{id + "|" + v.name, "", {}, config ? BuildFromConfig(*config, v.options) : config.error()};
      std::string dump;
      b.digest = DigestOf(b.model, dump_dir ? &dump : nullptr);
      if (dump_dir) {
        std::string file = b.key;
        for (char& ch : file) {
          if (ch == '/' || ch == ':' || ch == '|') ch = '_';
        }
        std::ofstream(std::string(dump_dir) + "/" + file + ".txt") << dump;
      }
      b.line = b.digest.Line(b.key);
      each(b);
    }
  }
  if (!have_eval && shard == 0) {
    // The catalog part ran; the eval part needs ../shared/eval.
    std::cout << "[ model digests ] ../shared/eval is absent (set MEMFIT_EVAL_DIR): only the "
                 "catalog's models were compared\n";
  }
}

// The comparison runs in kShards tests (one ctest entry each), so that under the sanitizers,
// several times slower, no single test builds all of the ~850 models within one test timeout.
constexpr size_t kShards = 8;

class ModelDigestShard : public ::testing::TestWithParam<size_t> {};

TEST_P(ModelDigestShard, BuildsAsTheCommittedDigests) {
  if (std::getenv("MEMFIT_WRITE_DIGESTS") != nullptr) GTEST_SKIP() << "writing, not comparing";
  static const auto committed = ReadDigests();
  ForEachDigest(GetParam(), kShards, [&](const Built& b) {
    const auto it = committed.find(b.key);
    if (it == committed.end()) {
      ADD_FAILURE() << b.key << ": no committed digest (new model? MEMFIT_WRITE_DIGESTS=1)";
    } else if (it->second != b.line) {
      ADD_FAILURE() << b.key << ": " << Explain(it->second, b.digest, b.model);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Shards, ModelDigestShard, ::testing::Range<size_t>(0, kShards));

// Every catalog model has its committed digests, so a shard cannot pass by building nothing.
TEST(ModelDigestTest, CommittedFileCoversEveryCatalogModel) {
  const auto committed = ReadDigests();
  for (const auto& entry : Catalog()) {
    size_t found = 0;
    for (const Variant& v : Variants()) {
      found += committed.count("catalog:" + std::string(entry.id) + "|" + v.name);
    }
    EXPECT_GE(found, Variants().size() - 1) << entry.id;
  }
}

// MEMFIT_WRITE_DIGESTS=1 rewrites the whole file (MEMFIT_DIGEST_TYPES with it writes nothing:
// the file is whole or not).
TEST(ModelDigestTest, WritesTheDigestsWhenAsked) {
  if (std::getenv("MEMFIT_WRITE_DIGESTS") == nullptr) GTEST_SKIP() << "MEMFIT_WRITE_DIGESTS unset";
  if (std::getenv("MEMFIT_DIGEST_TYPES") != nullptr) GTEST_SKIP() << "MEMFIT_DIGEST_TYPES set";
  std::vector<std::string> lines;
  ForEachDigest(0, 1, [&](const Built& b) { lines.push_back(b.line); });
  std::filesystem::create_directories(std::filesystem::path(kDigestFile).parent_path());
  std::ofstream out(kDigestFile);
  out << "# id|variant\ttensors\tmeta digest\t" << kSegments
      << " tensor segment digests (FNV-1a 64); written by model_digest_test.cc with "
         "MEMFIT_WRITE_DIGESTS=1\n";
  for (const auto& line : lines) out << line << "\n";
  std::cout << "[ model digests ] wrote " << lines.size() << " digests to " << kDigestFile << "\n";
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
