// The JSON API under api/v1/ (docs/openapi.json): the CLI's own JSON. Nothing but the server is
// ever asked.
export async function api(command, body) {
  const response = await fetch(`api/v1/${command}`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(json.error || `HTTP ${response.status}`);
  return json;
}

export async function apiGet(command) {
  const response = await fetch(`api/v1/${command}`);
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return response.json();
}

// The model's longest context (max_position_embeddings): no JSON states it, so fit on a GPU too
// large to be the limit answers it (limits.max_context_tokens, capped at the model's maximum).
const maxContextCache = new Map();
export function modelMaxContext(model) {
  if (!maxContextCache.has(model)) {
    maxContextCache.set(model, api("fit", { model, gpu: "64TiB", task: "inference", "no-advice": true })
      .then((r) => (r.limits && r.limits.max_context_tokens) || 131072)
      .catch((e) => { maxContextCache.delete(model); throw e; }));
  }
  return maxContextCache.get(model);
}
