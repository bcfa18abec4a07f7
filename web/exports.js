// Exports of the current result (JSON as the API returned it, CSV and Markdown of the main table,
// PNG of the chart) and posting the Markdown to the model's Hub discussions (the exact text is
// shown first; the server refuses a second post).
import { $ } from "./util.js";
import { currentChart } from "./charts.js";

function cell(c) { return /[",\n]/.test(String(c ?? "")) ? `"${String(c).replace(/"/g, '""')}"` : String(c ?? ""); }
export const toCsv = (t) => [t.headers, ...t.raw].map((r) => r.map(cell).join(",")).join("\n") + "\n";

export function toMarkdown(model, t, source) {
  return [`## Memory requirements for \`${model}\``, "", `| ${t.headers.join(" | ")} |`,
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
  const nameOf = (r) => (r.model || "model").replace(/[^\w.-]+/g, "_");
  for (const b of document.querySelectorAll("[data-export]")) {
    b.addEventListener("click", async () => {
      const { result, table } = current();
      if (!result) return;
      const name = nameOf(result);
      const kind = b.dataset.export;
      if (kind === "json") download(`${name}.memfit.json`, JSON.stringify(result, null, 2), "application/json");
      if (kind === "csv") download(`${name}.memfit.csv`, toCsv(table), "text/csv");
      if (kind === "png" && currentChart()) download(`${name}.memfit.png`, currentChart().toBase64Image("image/png", 1), "image/png");
      if (kind === "markdown") {
        const md = toMarkdown(result.model, table, result.source);
        try { await navigator.clipboard.writeText(md); } catch (_) { /* clipboard needs a secure context */ }
        download(`${name}.memfit.md`, md, "text/markdown");
      }
    });
  }
  $("#post").addEventListener("click", () => {
    const { result, table } = current();
    if (!result) return;
    $("#post-repo").textContent = result.model;
    $("#post-body").textContent = toMarkdown(result.model, table, result.source);
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
