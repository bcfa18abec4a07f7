// Chart.js (the UMD build from npm, embedded as vendor/chart.umd.js) on the page's one canvas.
// Every number drawn is one the API returned; nothing is interpolated but the lines between them.
import { $, gib, formatBytes, formatTokens } from "./util.js";

let chart = null;
let drawSeq = 0;
// Chart.js (200 KB) is asked for when the first chart is drawn, after the first numbers are on
// the page: the server compresses each answer, and the charting code would compete with them.
let chartReady = null;
function loadChartJs() {
  if (!chartReady) {
    chartReady = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "vendor/chart.umd.js";
      script.onload = resolve;
      script.onerror = () => { chartReady = null; reject(new Error("the charting library did not load")); };
      document.head.append(script);
    });
  }
  return chartReady;
}
export const PALETTE = ["#2f6fde", "#d9622b", "#2e9c68", "#c2415d", "#8a5cd1", "#b8901c", "#2b9db3", "#6b7280", "#9c5a1a", "#4f8a5f"];

function themeColors() {
  const style = getComputedStyle(document.documentElement);
  return { fg: style.getPropertyValue("--fg").trim() || "#1d2330", grid: style.getPropertyValue("--line").trim() || "#e3e6ec" };
}

export async function drawChart(config, caption) {
  const seq = ++drawSeq;
  const figure = $("#fig-main");
  $('[data-export="png"]').disabled = !config;
  if (!config) { if (chart) { chart.destroy(); chart = null; } figure.hidden = true; return null; }
  await loadChartJs();
  if (seq !== drawSeq) return null;  // a newer chart was asked for meanwhile
  if (chart) { chart.destroy(); chart = null; }
  figure.hidden = false;
  const colors = themeColors();
  Chart.defaults.color = colors.fg;
  Chart.defaults.borderColor = colors.grid;
  config.options = { maintainAspectRatio: false, animation: false, ...config.options };
  chart = new Chart($("#chart-main"), config);
  $("#chart-main").setAttribute("aria-label", caption);
  $("#chart-caption").textContent = caption;
  return chart;
}

export const currentChart = () => chart;

// Bars of GiB per label (estimate-memory / accelerate rows, compared models); `log` when the
// values span decades, so the small ones are not flattened by the largest.
export function dtypeBars(labels, datasets, title, { log = false } = {}) {
  const y = log ? { type: "logarithmic", title: { display: true, text: "GiB (log scale)" } } : { title: { display: true, text: "GiB" } };
  return { type: "bar", data: { labels, datasets: datasets.map((d, i) => ({ ...d, backgroundColor: PALETTE[i] })) },
    options: { plugins: { title: { display: true, text: title } }, scales: { y } } };
}

// Memory against context: the API's curve, one horizontal line per GPU, a point where it stops fitting.
export function contextChart(curve) {
  const xs = curve.points.map((p) => p.context);
  const xmin = Math.min(...xs), xmax = Math.max(...xs);
  const datasets = [{ label: curve.metric, bytes: curve.points.map((p) => p.bytes), data: curve.points.map((p) => ({ x: p.context, y: gib(p.bytes) })),
    borderColor: PALETTE[0], backgroundColor: PALETTE[0], pointRadius: 3, tension: 0 }];
  curve.lines.forEach((line, i) => {
    const color = PALETTE[(i + 1) % PALETTE.length];
    datasets.push({ label: `${line.gpu}: ${formatBytes(line.bytes)}`, data: [{ x: xmin, y: gib(line.bytes) }, { x: xmax, y: gib(line.bytes) }],
      borderColor: color, borderDash: [6, 4], pointRadius: 0, borderWidth: 2 });
    if (line.crossing) {
      datasets.push({ label: `stops fitting on ${line.gpu} after ${formatTokens(line.crossing)} tokens`, type: "scatter",
        crossing: line.crossing, data: [{ x: line.crossing, y: gib(line.bytes) }], borderColor: color, backgroundColor: color, pointRadius: 7, pointStyle: "crossRot", borderWidth: 3 });
    }
  });
  return { type: "line", data: { datasets }, options: {
    parsing: false,
    scales: { x: { type: "logarithmic", title: { display: true, text: "context tokens" },
      afterBuildTicks: (axis) => { axis.ticks = xs.filter((x) => Number.isInteger(Math.log2(x)) || x === xmax).map((value) => ({ value })); },
      ticks: { callback: (v) => (v >= 1024 ? `${Math.round(v / 1024)}K` : String(v)) } },
    y: { beginAtZero: true, title: { display: true, text: "GiB" } } },
    plugins: { title: { display: true, text: curve.title }, tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${c.parsed.y.toFixed(2)} GiB at ${formatTokens(c.parsed.x)}` } } } } };
}

// Training stages: stacked bars of the parts alive at each stage, their sum the API's stage total.
export function stageChart(stages, parts, peakStage, peakBytes) {
  const labels = stages.map((s) => (s.stage === peakStage ? `${s.stage} (peak)` : s.stage));
  const datasets = parts.map((p, i) => ({ label: p.label, bytes: p.bytes, data: stages.map((s, j) => gib(p.bytes[j])), backgroundColor: PALETTE[i % PALETTE.length], stack: "s" }));
  return { type: "bar", data: { labels, datasets }, options: {
    scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: { display: true, text: "GiB allocated" } } },
    plugins: { title: { display: true, text: `Allocated memory per training stage; peak ${formatBytes(peakBytes)} with CUDA context and reserve` } } } };
}
