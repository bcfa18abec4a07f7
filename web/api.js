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

// Several answers in one round trip (POST api/v1/batch): [{command, body}] -> [{status, body}], in
// order; each answer is what POST api/v1/<command> gives.
export async function apiBatch(requests) {
  const result = await api("batch", { requests });
  return result.results;
}

// An answer of a batch, or its error thrown as api() throws it.
export function answerOf(item) {
  if (item.status !== 200) throw new Error((item.body && item.body.error) || `HTTP ${item.status}`);
  return item.body;
}
