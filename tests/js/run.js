// Evaluates an OPA Wasm policy with OPA's JavaScript SDK
// (@open-policy-agent/opa-wasm), for aclc's end-to-end run: a third Wasm
// runtime that aclc did not write.
//
// Usage: node run.js POLICY.wasm DATA.json
// Reads one JSON request per line on stdin, {"entrypoint": E, "input": I},
// and writes one JSON line per request: {"result": R}, {"undefined": true}
// or {"error": "..."}. An evaluation that throws (a trap in the module)
// leaves the instance in an unknown state: it is discarded and a fresh one
// is loaded before the next request, never reused.
"use strict";

const fs = require("fs");
const readline = require("readline");
const { loadPolicy } = require("@open-policy-agent/opa-wasm");

async function main() {
  const [wasmPath, dataPath] = process.argv.slice(2);
  const wasm = fs.readFileSync(wasmPath);
  const data = JSON.parse(fs.readFileSync(dataPath, "utf8"));
  const module = await WebAssembly.compile(wasm);
  const fresh = async () => {
    const p = await loadPolicy(module);
    p.setData(data);
    return p;
  };
  let policy = await fresh();
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    let out;
    try {
      const req = JSON.parse(line);
      const rs = policy.evaluate(req.input, req.entrypoint);
      out = rs.length === 0 ? { undefined: true } : { result: rs[0].result };
    } catch (e) {
      out = { error: String(e && e.message ? e.message : e) };
      policy = await fresh(); // never reuse an instance after a trap
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  }
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
