// Small helpers shared by the page's modules: DOM lookup, byte formatting, HTML escaping.
export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
// The CLI's units: binary, two decimals.
export function formatBytes(bytes) {
  if (bytes === null || bytes === undefined) return "N/A";
  let value = Number(bytes), unit = 0;
  if (Math.abs(value) < 1024) return `${value} B`;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) { value /= 1024; unit++; }
  return `${value.toFixed(2)} ${UNITS[unit]}`;
}
export const gib = (bytes) => Number(bytes) / 2 ** 30;
// Thousands separated by commas, as en-US writes them; by hand, because the first
// toLocaleString() loads the locale data (70 ms on a slow machine, on the first render's path).
export const formatCount = (n) => {
  const value = Number(n);
  if (!Number.isFinite(value)) return String(n);
  const [whole, fraction] = String(Math.abs(value)).split(".");
  return `${value < 0 ? "-" : ""}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}${fraction ? "." + fraction : ""}`;
};
export const formatTokens = formatCount;

export function escapeHtml(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// A table from headers and rows of cells (strings, escaped here, or {html} for trusted markup).
export function tableHtml(headers, rows, caption = "") {
  const cell = (c) => (c && typeof c === "object" && "html" in c ? c.html : escapeHtml(c));
  return `<table>${caption ? `<caption>${escapeHtml(caption)}</caption>` : ""}<thead><tr>${headers.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join("")}</tr></thead>` +
    `<tbody>${rows.map((r) => `<tr>${r.map((c, i) => `<td data-label="${escapeHtml(headers[i] ?? "")}">${cell(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
}

export function verdictClass(verdict) {
  const v = String(verdict || "");
  if (/does not|not fit|refused/.test(v)) return "nofit";
  if (/offload/.test(v)) return "offload";
  return v ? "fits" : "";
}
