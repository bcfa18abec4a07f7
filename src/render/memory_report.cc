// `memfit inference` and `memfit train` reports.

#include <fmt/format.h>

#include "formats/json.h"
#include "render/report_json.h"
#include "memfit/accuracy.h"
#include "memfit/render_memory.h"

#include "render/curve_report.h"
#include "memfit/units.h"

namespace memfit {
namespace {

using Rows = std::vector<std::vector<std::string>>;

// The verdict comes first; rows of zero bytes only with --wide (the CSV keeps every row).
std::string Render(OutputFormat format, const std::string& title, const Rows& rows,
                   const std::vector<std::string>& lines, const nlohmann::json& json,
                   const HardwareVerdict* verdict, const TextLayout& layout) {
  const std::vector<std::string> headers = {"component", "bytes", "size"};
  Rows shown;
  for (const auto& r : rows) {
    if (layout.wide || r[1] != "0") shown.push_back(r);
  }
  const std::string first = verdict ? verdict->line + "\n" : "";
  switch (format) {
    case OutputFormat::kJson: return DumpJson(json) + "\n";
    case OutputFormat::kCsv: return RenderCsv(headers, rows);
    case OutputFormat::kMarkdown: {
      std::string out = (verdict ? "**" + verdict->line + "**\n\n" : "") + "**" + title +
                        "**\n\n" + RenderMarkdownTable(headers, shown) + "\n";
      for (const auto& l : lines) out += "- " + l + "\n";
      return out;
    }
    case OutputFormat::kTable: {
      Rows pretty;
      for (const auto& r : shown) pretty.push_back({r[0], r[2]});
      std::string out = first + title + "\n" + RenderPlainTable({"component", "size"}, pretty, layout);
      for (const auto& l : lines) out += l + "\n";
      return out;
    }
  }
  return "";
}

void Row(Rows& rows, const std::string& name, uint64_t bytes) {
  rows.push_back({name, std::to_string(bytes), FormatBytes(bytes)});
}

void AddLines(std::vector<std::string>& lines, const std::vector<std::string>& assumptions,
              const std::vector<std::string>& notes, const Model& model) {
  for (const auto& a : model.assumptions) lines.push_back("assumption: " + a);
  for (const auto& a : assumptions) lines.push_back("assumption: " + a);
  for (const auto& n : notes) lines.push_back("note: " + n);
}

}  // namespace

nlohmann::json InferenceJson(const Model& model, const InferenceOptions& o,
                             const InferenceEstimate& e, const ContextCurve* curve) {
  nlohmann::json j;
  j["schema"] = "memfit.inference/1";
  j["model"] = model.name;
  j["settings"] = {{"context", o.context_tokens}, {"batch", o.batch},
                   {"new_tokens", o.new_tokens},
                   {"dtype", std::string(TorchDtypeName(o.dtype))},
                   {"quant", o.quant.scheme == QuantScheme::kNone
                                 ? std::string(o.quant.dequantize_stored ? "none" : "stored")
                                 : std::string(QuantSchemeName(o.quant.scheme))},
                   {"kv_dtype", std::string(KvDtypeName(o.kv_dtype))},
                   {"attn", std::string(AttnImplName(o.attn))},
                   {"engine", std::string(EngineName(o.engine))}, {"tp", o.tp},
                   {"dp", o.dp}, {"ep", o.ep}, {"pp", o.pp}, {"dp_attention", o.dp_attention},
                   {"compute_capability", o.compute_capability}};
  j["model_max_context"] = model.hp.max_position_embeddings;
  j["gpus"] = e.gpus;
  j["parallel"] = {{"attn_tp", e.layout.attn_tp}, {"dense_tp", e.layout.dense_tp},
                   {"ep", e.layout.ep}, {"expert_tp", e.layout.expert_tp},
                   {"vocab_tp", e.layout.vocab_tp}, {"head_tp", e.layout.head_tp},
                   {"pp", e.layout.pp}, {"replicas", e.layout.replicas}};
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& st : e.sharding.stages) {
    stages.push_back({{"first_layer", st.first_layer}, {"end_layer", st.end_layer},
                      {"weights", st.bytes}});
  }
  j["weights_per_gpu"] = {{"total", e.sharding.per_gpu_bytes},
                          {"replicated", e.sharding.replicated_bytes},
                          {"sharded", e.sharding.sharded_bytes},
                          {"experts", e.sharding.expert_bytes}, {"stages", stages}};
  j["per_gpu"] = {{"weights", e.weights_bytes}, {"kv_cache", e.kv_cache_bytes},
                  {"activations", e.activation_bytes}, {"cuda_context", e.cuda_context_bytes},
                  {"allocator_reserve", e.allocator_reserve_bytes},
                  {"cuda_graphs", e.cuda_graph_bytes}, {"total", e.total_bytes}};
  // SGLang 0.5's NEXTN draft, outside its budget (only when there is one).
  if (e.serving && e.serving->draft_bytes > 0) {
    j["per_gpu"]["speculative_draft"] = e.serving->draft_bytes;
  }
  // For the web page's per-device chart: components and the total.
  j["components"] = nlohmann::json::array();
  for (const auto& [k, v] : j["per_gpu"].items()) {
    if (k != "total") j["components"].push_back({{"name", k}, {"bytes", v}});
  }
  j["total_bytes"] = e.total_bytes;
  j["activation_peak_at"] = e.activation_peak_at;
  j["kv_bytes_per_token"] = e.kv.bytes_per_token;
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : e.kv.layers) {
    layers.push_back({{"layer", l.layer}, {"kind", l.kind}, {"tokens", l.tokens},
                      {"bytes_per_token", l.bytes_per_token}, {"bytes", l.bytes}});
  }
  j["kv_layers"] = layers;
  j["kv_state_bytes"] = e.kv.state_bytes;
  j["kv_block_size"] = e.kv.block_size;
  j["weights"] = {{"quantized_params", e.weights.quantized_params},
                  {"quantized_bytes", e.weights.quantized_bytes},
                  {"kept_params", e.weights.kept_params}, {"kept_bytes", e.weights.kept_bytes},
                  {"other_bytes", e.weights.other_bytes},
                  {"stored_format", e.weights.stored_format},
                  {"stored_quantized_bytes", e.weights.stored_quantized_bytes},
                  {"total_bytes", e.weights.total_bytes}};
  if (e.serving) {
    const auto& s = *e.serving;
    j["serving"] = {{"requested", s.requested_bytes}, {"non_kv", s.non_kv_bytes},
                    {"kv_pool", s.kv_pool_bytes}, {"page_bytes", s.page_bytes},
                    {"num_blocks", s.num_blocks}, {"token_capacity", s.token_capacity},
                    {"sequence_bytes", s.sequence_bytes},
                    {"max_concurrency", s.max_concurrency}, {"replicas", s.replicas},
                    {"draft", s.draft_bytes}, {"fits", s.fits}};
  } else {
    j["serving"] = nullptr;
  }
  // The serving engine's release and the settings it ran with (memfit/engine_release.h).
  if (e.engine_settings) {
    const auto& g = *e.engine_settings;
    j["engine_release"] = {{"engine", std::string(EngineName(o.engine))},
                           {"version", g.version.empty() ? nlohmann::json() : nlohmann::json(g.version)},
                           {"source", g.source},
                           {"gpu_memory_utilization", g.gpu_memory_utilization},
                           {"max_num_seqs", g.max_num_seqs},
                           {"max_batched_tokens", g.max_batched_tokens},
                           {"cuda_graphs_in_budget", g.cuda_graphs_in_budget},
                           {"equivalent_flags", g.equivalent_flags}};
  } else {
    j["engine_release"] = nullptr;
  }
  if (curve) j["curve"] = ContextCurveJson(*curve);
  std::vector<std::string> assumptions = model.assumptions;
  assumptions.insert(assumptions.end(), e.assumptions.begin(), e.assumptions.end());
  if (curve) assumptions.insert(assumptions.end(), curve->assumptions.begin(), curve->assumptions.end());
  j["assumptions"] = assumptions;
  j["notes"] = e.notes;
  j["accuracy"] = AccuracyJson(AccuracyFor(AccuracyClassFor(o.engine)));
  return j;
}

nlohmann::ordered_json HardwareVerdictJson(const HardwareVerdict& v) {
  auto optional = [](const auto& x) {
    return x ? nlohmann::ordered_json(*x) : nlohmann::ordered_json(nullptr);
  };
  return {{"verdict", VerdictName(v.verdict)},
          {"gpu", v.gpu_label},
          {"gpus", v.gpus},
          {"gpu_memory_bytes", v.gpu_memory_bytes},
          {"per_gpu", v.per_gpu},
          {"need_bytes", v.need_bytes},
          {"offloaded_bytes", v.offloaded_bytes},
          {"reason", v.reason},
          {"gpus_needed", optional(v.gpus_needed)},
          {"gpus_needed_flags", v.gpus_needed_flags},
          {"fix_flags", v.fix_flags},
          {"fix_bytes", v.fix_bytes},
          {"line", v.line}};
}

std::string RenderInference(const Model& model, const InferenceOptions& o,
                            const InferenceEstimate& e, OutputFormat format,
                            const ContextCurve* curve, const HardwareVerdict* verdict,
                            const TextLayout& layout) {
  Rows rows;
  Row(rows, "weights", e.weights_bytes);
  Row(rows, "kv cache", e.kv_cache_bytes);
  Row(rows, "activations (" + e.activation_peak_at + ")", e.activation_bytes);
  if (e.cuda_context_bytes) Row(rows, "cuda context", e.cuda_context_bytes);
  if (e.allocator_reserve_bytes) Row(rows, "allocator reserve", e.allocator_reserve_bytes);
  if (e.cuda_graph_bytes) Row(rows, "cuda graphs", e.cuda_graph_bytes);
  if (e.serving && e.serving->draft_bytes) {
    Row(rows, "speculative draft (NEXTN, outside the budget)", e.serving->draft_bytes);
  }
  if (e.serving && e.serving->requested_bytes) {
    Row(rows, "engine budget (gpu memory x utilization)", e.serving->requested_bytes);
  }
  Row(rows, "total per GPU", e.total_bytes);
  std::string quant;
  if (o.quant.scheme != QuantScheme::kNone) {
    quant = " + " + std::string(QuantSchemeName(o.quant.scheme));
  } else if (e.weights.stored_quantized_bytes > 0) {
    quant = " + " + e.weights.stored_format + " as stored";
  }
  std::string parallel;
  if (o.tp > 1) parallel += fmt::format(", tp {}", o.tp);
  if (o.dp > 1) parallel += fmt::format(", dp {}{}", o.dp, o.dp_attention ? " (attention)" : "");
  if (o.ep > 1) parallel += fmt::format(", ep {}", o.ep);
  if (o.pp > 1) parallel += fmt::format(", pp {}", o.pp);
  if (e.gpus > 1) parallel += fmt::format(" ({} GPUs)", e.gpus);
  const std::string split =
      o.new_tokens > 0 && o.new_tokens < o.context_tokens
          ? fmt::format(" ({} prompt + {} new)", o.context_tokens - o.new_tokens, o.new_tokens)
          : "";
  std::string title = fmt::format(
      "{}: inference, {} x {} tokens{}, {} weights{}, kv {}, {} attention, {}{}", model.name,
      o.batch, o.context_tokens, split, TorchDtypeName(o.dtype), quant, KvDtypeName(o.kv_dtype),
      AttnImplName(o.attn), EngineName(o.engine), parallel);
  std::vector<std::string> lines;
  lines.push_back(fmt::format("kv cache: {} per token (all layers, per GPU)",
                              FormatBytes(e.kv.bytes_per_token)));
  if (e.serving && e.serving->requested_bytes) {
    lines.push_back(fmt::format("max concurrent sequences of {} tokens: {}", o.context_tokens,
                                e.serving->max_concurrency));
  }
  if (curve) {
    for (const auto& [label, bytes] : ContextCurveRows(*curve)) Row(rows, label, bytes);
    for (auto& line : ContextCurveLines(*curve)) {
      if (!line.starts_with("assumption: ")) lines.push_back(std::move(line));
    }
  }
  lines.push_back(AccuracyLine(AccuracyFor(AccuracyClassFor(o.engine))));
  std::vector<std::string> assumptions = e.assumptions;
  if (curve) assumptions.insert(assumptions.end(), curve->assumptions.begin(), curve->assumptions.end());
  AddLines(lines, assumptions, e.notes, model);
  nlohmann::json json = InferenceJson(model, o, e, curve);
  json["verdict"] = verdict ? nlohmann::json(HardwareVerdictJson(*verdict)) : nlohmann::json(nullptr);
  return Render(format, title, rows, lines, json, verdict, layout);
}

nlohmann::json TrainJson(const Model& model, const TrainOptions& o, const TrainEstimate& e) {
  nlohmann::json j;
  j["schema"] = "memfit.train/1";
  j["model"] = model.name;
  j["settings"] = {{"method", std::string(TrainMethodName(o.method))},
                   {"optimizer", std::string(OptimizerName(o.optimizer))},
                   {"precision", std::string(PrecisionName(o.precision))},
                   {"batch", o.batch}, {"seq", o.seq},
                   {"decoder_tokens", o.decoder_tokens}, {"grad_accum", o.grad_accum},
                   {"checkpointing", std::string(CheckpointingName(o.checkpointing))},
                   {"attn", std::string(AttnImplName(o.attn))}, {"gpus", o.gpus},
                   {"strategy", std::string(StrategyName(o.strategy))},
                   {"offload", std::string(OffloadName(o.offload))}, {"tp", o.tp}, {"pp", o.pp},
                   {"lora_rank", o.lora.rank}, {"lora_alpha", o.lora.alpha}};
  j["trainable_params"] = e.trainable_params;
  j["frozen_params"] = e.frozen_params;
  j["per_gpu"] = {{"weights", e.weights_bytes}, {"master_weights", e.master_weights_bytes},
                  {"gradients", e.gradients_bytes}, {"optimizer_states", e.optimizer_bytes},
                  {"activations", e.activation_bytes}, {"logits_and_loss", e.logits_bytes},
                  {"communication", e.comm_bytes}, {"transient", e.transient_bytes},
                  {"cuda_context", e.cuda_context_bytes},
                  {"allocator_reserve", e.allocator_reserve_bytes}, {"peak", e.peak_bytes}};
  j["components"] = nlohmann::json::array();
  for (const auto& [k, v] : j["per_gpu"].items()) {
    if (k != "peak") j["components"].push_back({{"name", k}, {"bytes", v}});
  }
  j["total_bytes"] = e.peak_bytes;  // the peak, not the sum of components
  j["peak_stage"] = e.peak_stage;
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : e.stages) {
    nlohmann::json parts = nlohmann::json::array();
    for (const auto& p : s.parts) parts.push_back({{"name", p.name}, {"bytes", p.bytes}});
    stages.push_back({{"stage", s.stage}, {"bytes", s.bytes}, {"parts", parts}});
  }
  j["stages"] = stages;
  j["cpu_ram"] = e.cpu_bytes;
  std::vector<std::string> assumptions = model.assumptions;
  assumptions.insert(assumptions.end(), e.assumptions.begin(), e.assumptions.end());
  j["assumptions"] = assumptions;
  j["notes"] = e.notes;
  j["accuracy"] = AccuracyJson(AccuracyFor(AccuracyClass::kTraining));
  return j;
}

std::string RenderTrain(const Model& model, const TrainOptions& o, const TrainEstimate& e,
                        OutputFormat format, const HardwareVerdict* verdict,
                        const TextLayout& layout) {
  Rows rows;
  Row(rows, "weights", e.weights_bytes);
  Row(rows, "master weights / autocast copies", e.master_weights_bytes);
  Row(rows, "gradients", e.gradients_bytes);
  Row(rows, "optimizer states", e.optimizer_bytes);
  Row(rows, "activations", e.activation_bytes);
  Row(rows, "logits and loss", e.logits_bytes);
  if (e.comm_bytes) Row(rows, "communication buffers", e.comm_bytes);
  Row(rows, "transient (backward / optimizer)", e.transient_bytes);
  Row(rows, "cuda context", e.cuda_context_bytes);
  if (e.allocator_reserve_bytes) Row(rows, "allocator reserve", e.allocator_reserve_bytes);
  for (const auto& s : e.stages) Row(rows, "stage: " + s.stage, s.bytes);
  Row(rows, "peak per GPU (" + e.peak_stage + ")", e.peak_bytes);
  if (e.cpu_bytes) Row(rows, "CPU RAM (offload) per process", e.cpu_bytes);
  std::string title = fmt::format(
      "{}: train {} ({} trainable params), {}, {}, batch {} x seq {}, grad-accum {}, "
      "checkpointing {}, {} attention, {} GPU(s) {}", model.name, TrainMethodName(o.method),
      FormatCount(e.trainable_params), OptimizerName(o.optimizer), PrecisionName(o.precision),
      o.batch, o.seq, o.grad_accum, CheckpointingName(o.checkpointing), AttnImplName(o.attn),
      o.gpus, StrategyName(o.strategy));
  std::vector<std::string> lines = {AccuracyLine(AccuracyFor(AccuracyClass::kTraining))};
  AddLines(lines, e.assumptions, e.notes, model);
  nlohmann::json json = TrainJson(model, o, e);
  json["verdict"] = verdict ? nlohmann::json(HardwareVerdictJson(*verdict)) : nlohmann::json(nullptr);
  return Render(format, title, rows, lines, json, verdict, layout);
}

}  // namespace memfit
