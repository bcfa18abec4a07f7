// Exports of the current result (JSON as the API returned it, CSV and Markdown of the main table,
// PNG of the chart) and posting the Markdown to the model's Hub discussions (the exact text is
// shown first; the server refuses a second post).
import { $ } from "./util.js";
import { currentChart } from "./charts.js";

function cell(c) { return /[",\n]/.test(String(c ?? "")) ? `"${String(c).replace(/"/g, '""')}"` : String(c ?? ""); }

const BYTES = /^-?\d+(\.\d+)? (B|KiB|MiB|GiB|TiB|PiB|KB|MB|GB|TB|bytes)$/;  // accelerate's labels too
// The columns whose shown values are byte sizes (their raw values are the bytes).
const byteColumns = (t) => t.headers.map((_, i) => t.rows.some((r) => BYTES.test(String(r[i]))) && t.raw.some((r) => typeof r[i] === "number"));
const settingsLine = (t) => (t.settings || []).map(([k, v]) => `${k}: ${v}`).join("; ");

// CSV of the shown table: its settings as "#" lines first, the values as shown (binary units), and
// beside each size its bytes, so a spreadsheet can add them up.
export function toCsv(t, model = "") {
  const bytes = byteColumns(t);
  const headers = t.headers.flatMap((h, i) => (bytes[i] ? [h, `${h} (bytes)`] : [h]));
  const rows = t.rows.map((r, j) => r.flatMap((c, i) => (bytes[i] ? [c, t.raw[j][i]] : [c])));
  const head = [`# memfit${model ? `: ${model}` : ""}`, ...(t.settings ? [`# ${settingsLine(t)}`] : [])];
  return [...head, ...[headers, ...rows].map((r) => r.map(cell).join(","))].join("\n") + "\n";
}

export function toMarkdown(model, t, source) {
  return [`## Memory requirements for \`${model}\``, "", ...(t.settings ? [settingsLine(t), ""] : []), `| ${t.headers.join(" | ")} |`,
    `|${t.headers.map((_, i) => (i ? "---:" : "---")).join("|")}|`, ...t.rows.map((r) => `| ${r.join(" | ")} |`), "",
    `Estimated by memfit from the model's metadata (${source || "memfit"}).`].join("\n") + "\n";
}

export function download(name, data, type) {
  const url = typeof data === "string" && data.startsWith("data:") ? data : URL.createObjectURL(new Blob([data], { type }));
  const a = document.createElement("a");
  a.href = url; a.download = name; document.body.append(a); a.click(); a.remove();
  if (url.startsWith("blob:")) setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// current(): {result, table} of what the page shows.
export function wireExports(current) {
  const modelOf = (r) => r.model || (r.estimate && r.estimate.model) || "model";  // llama.cpp's fit keeps it in its estimate
  const nameOf = (r) => modelOf(r).replace(/[^\w.-]+/g, "_");
  for (const b of document.querySelectorAll("[data-export]")) {
    b.addEventListener("click", async () => {
      const { result, table } = current();
      if (!result) return;
      const name = nameOf(result);
      const kind = b.dataset.export;
      if (kind === "json") download(`${name}.memfit.json`, JSON.stringify(result, null, 2), "application/json");
      if (kind === "csv") download(`${name}.memfit.csv`, toCsv(table, modelOf(result)), "text/csv");
      if (kind === "png" && currentChart()) download(`${name}.memfit.png`, currentChart().toBase64Image("image/png", 1), "image/png");
      if (kind === "markdown") {
        const md = toMarkdown(modelOf(result), table, result.source);
        try { await navigator.clipboard.writeText(md); } catch (_) { /* clipboard needs a secure context */ }
        download(`${name}.memfit.md`, md, "text/markdown");
      }
    });
  }
  $("#post").addEventListener("click", () => {
    const { result, table } = current();
    if (!result) return;
    $("#post-repo").textContent = modelOf(result);
    $("#post-body").textContent = toMarkdown(modelOf(result), table, result.source);
    $("#post-status").textContent = "";
    $("#post-dialog").showModal();
  });
  $("#post-confirm").addEventListener("click", async (e) => {
    e.preventDefault();
    const token = $("#post-token").value.trim();
    try {
      const response = await fetch("api/v1/hub/discussion", {
        method: "POST", headers: { "Content-Type": "application/json", Authorization: token ? `Bearer ${token}` : "" },
        body: JSON.stringify({ model: $("#post-repo").textContent, revision: "main", title: "[memfit] Model memory requirements",
          description: $("#post-body").textContent }),
      });
      const json = await response.json();
      $("#post-status").textContent = response.ok ? `Posted: ${json.url || "done"}` : json.error;
    } catch (err) { $("#post-status").textContent = err.message; }
  });
}
