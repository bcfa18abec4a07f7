// `memfit serve` on a loopback port the system picks (--port 0), so that no two servers (nor a
// port some other test's connection holds) collide: the port is read from the server's own
// "serving on http://127.0.0.1:PORT/" line. An early exit rejects with what the server said.
import { spawn } from "node:child_process";

export function startMemfitServer(binary, env = process.env, timeoutMs = 20000) {
  const child = spawn(binary, ["serve", "--port", "0"], { stdio: ["ignore", "ignore", "pipe"], env });
  let said = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${said.trim()}`)), timeoutMs);
    child.stderr.on("data", (d) => {
      said += String(d);
      const m = /serving on (http:\/\/[^\s/]+:\d+)\//.exec(said);  // the whole line, port and "/"
      if (m) { clearTimeout(timer); resolve({ child, base: `${m[1]}/` }); }
    });
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`server exited ${code}: ${said.trim()}`)); });
  });
}
