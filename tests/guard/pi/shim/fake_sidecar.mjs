// A fake guard sidecar for the shim's node tests (shim.test.mjs): JSON-RPC over stdio, LF framed,
// told how to behave by a JSON spec file (argv[2]) that it reads again for every request, so a test
// can change it between calls. Every request is appended to `requests.jsonl` next to the spec, and
// every start to `started.jsonl`.
//
// spec: { "start": Behaviour?, "methods": { "<method>": Behaviour } }; a method not listed gets a
// healthy answer (DEFAULTS). A Behaviour is any of:
//   { "result": X }          answer with result X ("result": null is a null result)
//   { "error": E }           answer with error E (any JSON value)
//   { "raw": ["line", ...] } write these lines first ("$ID" becomes the request's id); with no
//                            result/error after them the request is never answered
//   { "exit": N, "stderr": "text" }  write text to stderr and exit with code N
//   { "delayMs": N }         wait before acting
//   { "later": [{ "delayMs": N, "raw": ["line", ...] } | { "delayMs": N, "exit": N }] }
//                            after acting, each of these in its time (a notification the sidecar pushes, say);
//                            every line written is appended to `sent.jsonl` with the time it was written
//   {}                       never answer (a hung sidecar)
import { appendFileSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

const specPath = process.argv[2];
const log = join(dirname(specPath), "requests.jsonl");
const DEFAULTS = {
	describe: { result: { tools: [] } },
	"sandbox.plan": { result: { state: "sandboxed", prefix: "fake-sandbox --", unsetEnv: ["GUARD_SECRET"], noticeLevel: "info", effects: "off" } },
	health: { result: { ok: true, statusText: "operator-guard: fake sidecar" } },
	evaluate: { result: { action: "allow" } },
	record: { result: { decision: "recorded", evidenceId: "ev_fake", envelope: { evidence: "fake" }, summary: "recorded" } },
	"audit.declined": { result: { blockReason: "operator-guard blocked this call: the operator declined. [reason: declined]" } },
	"audit.toolExecuted": { result: { logged: true } },
	"audit.replay": { result: { delivered: [], duplicates: [], skipped: [], rejected: [] } },
	status: { result: { text: "fake status", auditIntact: true } },
};
const spec = () => JSON.parse(readFileSync(specPath, "utf8"));
const sent = join(dirname(specPath), "sent.jsonl");
const write = (line) => (process.stdout.write(`${line}\n`), appendFileSync(sent, `${JSON.stringify({ at: Date.now(), line })}\n`));

function act(behaviour, id) {
	if ("exit" in behaviour) {
		if (behaviour.stderr) process.stderr.write(`${behaviour.stderr}\n`);
		process.exit(behaviour.exit);
	}
	for (const line of behaviour.raw ?? []) write(line.replaceAll("$ID", String(id)));
	if ("error" in behaviour) write(JSON.stringify({ jsonrpc: "2.0", id, error: behaviour.error }));
	else if ("result" in behaviour) write(JSON.stringify({ jsonrpc: "2.0", id, result: behaviour.result }));
	for (const then of behaviour.later ?? []) setTimeout(() => act({ ...then, later: undefined }, id), then.delayMs ?? 0);
}

appendFileSync(join(dirname(specPath), "started.jsonl"), `${JSON.stringify({ pid: process.pid, at: Date.now() })}\n`);
const later = (behaviour, fn) => (behaviour.delayMs ? setTimeout(fn, behaviour.delayMs) : fn());
const start = spec().start;
if (start) act(start, null);

let buffer = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
	buffer += chunk;
	for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
		const request = JSON.parse(buffer.slice(0, nl));
		buffer = buffer.slice(nl + 1);
		appendFileSync(log, `${JSON.stringify({ pid: process.pid, ...request })}\n`);
		const behaviour = spec().methods?.[request.method] ?? DEFAULTS[request.method] ?? { error: { code: -32601, message: "no such method" } };
		later(behaviour, () => act(behaviour, request.id));
	}
});
process.stdin.on("end", () => process.exit(0));
