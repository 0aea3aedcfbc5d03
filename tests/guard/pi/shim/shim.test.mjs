// The pi extension shim (guard/_pi/extension/index.ts) fails closed: each of its fail-closed
// branches, against a fake pi (records what the shim registers) and a fake sidecar
// (fake_sidecar.mjs: misbehaves as each test tells it), without the real pi or the real guard.
// Run by tests/guard/pi/test_shim_node.py with Node >= 22.7:
//   node --experimental-transform-types --test-reporter=tap tests/guard/pi/shim/shim.test.mjs
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const SHIM = process.env.SHIM_SOURCE ?? resolve(HERE, "../../../../guard/_pi/extension/index.ts");
const FAKE = join(HERE, "fake_sidecar.mjs");
const ROOT = mkdtempSync(join(process.env.SHIM_TEST_DIR ?? tmpdir(), "shim-"));
const ACTIVE = Symbol.for("pi-operator-guard.active");
const STARTING = Symbol.for("pi-operator-guard.starting");

// The shim's one value import from pi, faked: the bash tool definition carries the spawn hook.
const FAKE_PI = join(ROOT, "node_modules", "@mariozechner", "pi-coding-agent");
mkdirSync(FAKE_PI, { recursive: true });
writeFileSync(join(ROOT, "package.json"), JSON.stringify({ type: "module" }));
writeFileSync(join(FAKE_PI, "package.json"), JSON.stringify({ name: "@mariozechner/pi-coding-agent", type: "module", main: "index.js" }));
writeFileSync(
	join(FAKE_PI, "index.js"),
	["bash", "read", "write", "edit"]
		.map((tool) => `export const create${tool[0].toUpperCase()}${tool.slice(1)}ToolDefinition = (cwd, options) => ({ name: '${tool}', cwd, ...options });\n`)
		.join("") + "export const createLocalBashOperations = () => ({ exec: async () => ({ exitCode: 0 }) });\n",
);

const lines = (path) => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const alive = (pid) => {
	try {
		return process.kill(pid, 0);
	} catch {
		return false;
	}
};

function fakePi() {
	const pi = { handlers: new Map(), tools: new Map(), commands: new Map(), entries: [] };
	return Object.assign(pi, {
		on: (event, handler) => pi.handlers.set(event, handler),
		registerTool: (def) => pi.tools.set(def.name, def),
		registerCommand: (name, def) => pi.commands.set(name, def),
		appendEntry: (type, data) => pi.entries.push({ type, data }),
	});
}

/** A tool-call context: `select` answers the dialog from its options (default: no answer, as without a UI). */
function fakeCtx({ hasUI = false, select = () => undefined, input = undefined, draft = undefined } = {}) {
	const seen = { notify: [], status: [], select: [], input: [], aborted: 0, editor: [] };
	let editor = draft ?? "";
	const ui = {
		getEditorText: () => editor,
		setEditorText: (text) => (seen.editor.push(text), (editor = text)),
		notify: (text, level) => seen.notify.push({ text, level }),
		setStatus: (_key, text) => seen.status.push(text),
		select: async (title, options, opts) => {
			seen.select.push({ title, options, opts });
			if (draft !== undefined) editor = ""; // the dialog took the keys the operator was typing
			return select(options, opts);
		},
		input: async (title, placeholder) => (seen.input.push({ title, placeholder }), input),
		onTerminalInput: () => () => undefined, // pi's raw keys (the shim holds typing while a question is open)
	};
	return { seen, hasUI, mode: hasUI ? "tui" : "print", cwd: ROOT, ui, abort: () => seen.aborted++ };
}

/** What the shim writes to stderr while `fn` runs, and what `fn` returned. */
async function stderrOf(fn) {
	const write = process.stderr.write;
	let text = "";
	process.stderr.write = (chunk) => ((text += String(chunk)), true);
	try {
		return { value: await fn(), text };
	} finally {
		process.stderr.write = write;
	}
}

const FAST = { requestTimeoutMs: 300 };
let serial = 0;
/** A fresh copy of the shim (its own directory: guard.json, spool) loaded into a fake pi, its
 * session started. `config`: guard.json's fields over the fake sidecar's, a string (written as
 * is) or null (no guard.json). Shut down after the test. */
async function guard(t, { spec = {}, config = {}, start = true, ctx = fakeCtx(), files = {} } = {}) {
	const dir = join(ROOT, `guard-${++serial}`);
	mkdirSync(dir);
	for (const name of readdirSync(dirname(SHIM)).filter((n) => n.endsWith(".ts"))) copyFileSync(join(dirname(SHIM), name), join(dir, name)); // index.ts and its modules
	for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text); // next to the shim, as install writes them
	const specPath = join(dir, "spec.json");
	writeFileSync(specPath, JSON.stringify(spec));
	const timeouts = { requestTimeoutMs: 10_000, startTimeoutMs: 20_000, confirmTimeoutMs: 10_000 };
	if (typeof config === "string") writeFileSync(join(dir, "guard.json"), config);
	else if (config) writeFileSync(join(dir, "guard.json"), JSON.stringify({ python: process.execPath, args: [FAKE, specPath], ...timeouts, ...config }));
	const pi = fakePi();
	(await import(pathToFileURL(join(dir, "index.ts")).href)).default(pi);
	t.after(() => pi.handlers.get("session_shutdown")?.({ type: "session_shutdown" }, fakeCtx()));
	let calls = 0;
	const g = {
		dir,
		pi,
		// Atomically: the fake sidecar reads the spec on every request, and a half-written file
		// made it crash (a flaky "sidecar-unavailable" instead of the reason under test).
		setSpec: (next) => {
			writeFileSync(`${specPath}.tmp`, JSON.stringify(next));
			renameSync(`${specPath}.tmp`, specPath);
		},
		requests: (method) => lines(join(dir, "requests.jsonl")).filter((r) => method === undefined || r.method === method),
		spool: () => lines(join(dir, "spool.jsonl")),
		call: (toolName, input, callCtx = fakeCtx()) =>
			pi.handlers.get("tool_call")({ type: "tool_call", toolName, input, toolCallId: `call_${++calls}` }, callCtx),
		// session_start returns before the sidecar answers; the tests wait for that start too.
		start: async (startCtx = fakeCtx()) => {
			await pi.handlers.get("session_start")({ type: "session_start" }, startCtx);
			await pi[STARTING];
		},
	};
	if (start) await g.start(ctx);
	return g;
}

function assertBlocked(result, pattern) {
	assert.equal(result?.block, true, `not blocked: ${JSON.stringify(result)}`);
	if (pattern instanceof RegExp) assert.match(result.reason, pattern);
	else if (pattern !== undefined) assert.equal(result.reason, pattern);
}
const UNAVAILABLE = /^operator-guard blocked this write call: the guard sidecar is unavailable \(.+\)\. Fail closed: nothing was run\. \[reason: sidecar-unavailable\]$/;
const WRITE = { path: "notes.txt", content: "x" };

// -- no usable guard.json: nothing starts, everything is blocked

for (const [what, config, why] of [
	["missing", null, /^operator-guard config unreadable \(ENOENT.*\); reinstall with pi-guard install$/],
	["not JSON", "{not json", /^operator-guard config unreadable \(.*JSON.*\); reinstall with pi-guard install$/],
	["without python/args", JSON.stringify({ python: "/usr/bin/python3" }), /guard\.json lacks python\/args/],
	["with args not a list", JSON.stringify({ python: "/usr/bin/python3", args: "-m guard serve" }), /guard\.json lacks python\/args/],
]) {
	test(`guard.json ${what}: every tool call is blocked, said on stderr without a UI, and the footer says down`, async (t) => {
		const ctx = fakeCtx({ hasUI: true });
		const g = await guard(t, { config, ctx });
		assert.match(ctx.seen.status.at(-1), /^operator-guard down \(operator-guard config unreadable/);
		assert.equal(ctx.seen.notify.at(-1).level, "error");
		const { value, text } = await stderrOf(() => g.call("write", WRITE));
		assertBlocked(value, why);
		assert.match(text, /^operator-guard blocked write: operator-guard config unreadable/);
		assertBlocked(await g.call("read", { path: "README.md" }), why);
		const notified = fakeCtx({ hasUI: true });
		await g.pi.commands.get("guard").handler("", notified);
		assert.equal(notified.seen.notify.at(-1).level, "error");
	});
}

// -- the sidecar is not there: blocked as sidecar-unavailable, and the refusal is spooled

test("a sidecar that cannot be started: blocked, and kept in the spool for a later sidecar", async (t) => {
	const ctx = fakeCtx({ hasUI: true });
	const g = await guard(t, { config: { python: join(ROOT, "no-such-python") }, ctx });
	assert.match(ctx.seen.status.at(-1), /^operator-guard down \(sidecar unavailable: .*could not start/);
	const result = await g.call("write", WRITE);
	assertBlocked(result, UNAVAILABLE);
	assert.match(result.reason, /no-such-python/);
	assertBlocked(await g.call("write", WRITE), UNAVAILABLE);
	const spooled = g.spool();
	assert.equal(spooled.length, 2);
	assert.deepEqual(
		spooled.map((e) => [e.kind, e.reason, e.toolName, e.toolCallId]),
		[
			["declined", "sidecar-unavailable", "write", "call_1"],
			["declined", "sidecar-unavailable", "write", "call_2"],
		],
	);
});

test("a sidecar that exits as it starts: blocked, and the session start says so on stderr", async (t) => {
	const spec = { start: { exit: 1, stderr: "No module named guard" } };
	const { value: g, text } = await stderrOf(() => guard(t, { spec }));
	assert.match(text, /operator-guard: sidecar unavailable: sidecar exited \(code 1\).*; risky tool calls will be blocked/);
	assertBlocked(await g.call("write", WRITE), /exited \(code 1\)/);
	assertBlocked(await g.call("write", WRITE), UNAVAILABLE);
});

test("a sidecar that dies during evaluate: that call is blocked, a new one starts at once and judges the next", async (t) => {
	const ctx = fakeCtx({ hasUI: true });
	const g = await guard(t, { spec: { methods: { evaluate: { exit: 3, stderr: "killed" } } }, ctx });
	assertBlocked(await g.call("write", WRITE, ctx), /exited \(code 3\).*\[reason: sidecar-unavailable\]$/);
	g.setSpec({});
	for (let i = 0; i < 250 && g.requests("health").length < 2; i++) await sleep(20);
	const [first, second] = [...new Set(g.requests("sandbox.plan").map((r) => r.pid))];
	assert.ok(second !== undefined && second !== first, "no replacement started when the sidecar died");
	assert.equal(g.requests("sandbox.plan").at(-1).params.sidecarRestarted, true);
	assert.equal(await g.call("write", WRITE), undefined); // judged, not blocked
	assert.equal(g.requests("evaluate").at(-1).pid, second);
	assert.deepEqual(ctx.seen.status.slice(-3, -1), ["operator-guard down (sidecar exited (code 3): killed)", "operator-guard restarting"]);
});

test("a sidecar that never answered is not restarted in a loop: the next call starts one", async (t) => {
	const { value: g } = await stderrOf(() => guard(t, { spec: { start: { exit: 1 } } }));
	await sleep(300);
	assert.equal(g.requests().length, 0);
	g.setSpec({});
	assert.equal(await g.call("write", WRITE), undefined);
});

test("/guard starts a dead sidecar again and says so", async (t) => {
	const { value: g } = await stderrOf(() => guard(t, { spec: { start: { exit: 1, stderr: "No module named guard" } } }));
	g.setSpec({});
	const ctx = fakeCtx({ hasUI: true });
	await g.pi.commands.get("guard").handler("", ctx);
	assert.equal(ctx.seen.notify.length, 1);
	assert.match(ctx.seen.notify[0].text, /^operator-guard: the sidecar was down \(sidecar exited \(code 1\): No module named guard\); a new one started\.\nfake status$/);
	assert.equal(ctx.seen.notify[0].level, "info");
});

test("a sidecar that never answers evaluate: blocked at the timeout, killed, and replaced on the next call", async (t) => {
	const g = await guard(t, { spec: { methods: { evaluate: {} } }, config: FAST });
	assertBlocked(await g.call("write", WRITE), /gave no answer to evaluate within 300 ms\)\. Fail closed/);
	const [hung] = g.requests("evaluate");
	for (let i = 0; i < 100 && alive(hung.pid); i++) await sleep(20);
	assert.equal(alive(hung.pid), false, "the hung sidecar was not killed");
	g.setSpec({});
	assert.equal(await g.call("write", WRITE), undefined);
	assert.notEqual(g.requests("evaluate").at(-1).pid, hung.pid);
});

// -- answers that are not an answer to this request: ignored, so the call times out blocked

for (const [what, line] of [
	["not JSON", "allow"],
	["a line cut short", '{"jsonrpc":"2.0","id":$ID,"result":{"action":"all'],
	["a batch (JSON array)", '[{"jsonrpc":"2.0","id":$ID,"result":{"action":"allow"}}]'],
	["the id as a string", '{"jsonrpc":"2.0","id":"$ID","result":{"action":"allow"}}'],
	["another request's id", '{"jsonrpc":"2.0","id":9999,"result":{"action":"allow"}}'],
	["no id", '{"jsonrpc":"2.0","result":{"action":"allow"}}'],
	["a null id", '{"jsonrpc":"2.0","id":null,"result":{"action":"allow"}}'],
]) {
	test(`evaluate answered with ${what}: blocked at the timeout`, async (t) => {
		const g = await guard(t, { spec: { methods: { evaluate: { raw: [line] } } }, config: FAST });
		assertBlocked(await g.call("write", WRITE), /gave no answer to evaluate within 300 ms/);
	});
}

// -- the sidecar refuses (JSON-RPC error): blocked with its reason, not spooled

for (const [what, behaviour, pattern] of [
	[
		"a refusal with a reason",
		{ error: { code: -32602, message: "invalid params", data: { reason: "bad-input" } } },
		/^operator-guard blocked this write call: the guard refused to evaluate it \(invalid params \[bad-input\]\)\. Nothing was run\. \[reason: bad-input\]$/,
	],
	[
		"a guard that cannot open its home",
		{ error: { code: -32000, message: "guard home unusable", data: { reason: "guard-open-failed", detail: "/home/x: Permission denied" } } },
		/^operator-guard blocked this write call: the guard cannot work \(guard home unusable: \/home\/x: Permission denied \[guard-open-failed\]\)\. Nothing was run\. \[reason: guard-open-failed\]$/,
	],
	["a broken audit log", { error: { code: -32000, message: "audit log tampered", data: { reason: "audit-integrity" } } }, /the guard cannot work \(audit log tampered \[audit-integrity\]\).*\[reason: audit-integrity\]$/],
	["an error without data", { error: { code: -32603, message: "internal error" } }, /the guard refused to evaluate it \(internal error \[error\]\)\. Nothing was run\. \[reason: error\]$/],
	["an error that is a string", { error: "boom" }, /\[reason: error\]$/],
	["an error that is true", { error: true }, /\[reason: error\]$/],
	["an error next to an allow", { raw: ['{"jsonrpc":"2.0","id":$ID,"error":{"code":1,"message":"no"},"result":{"action":"allow"}}'] }, /\(no \[error\]\)/],
]) {
	test(`evaluate answered with ${what}: blocked, not spooled`, async (t) => {
		const g = await guard(t, { spec: { methods: { evaluate: behaviour } } });
		assertBlocked(await g.call("write", WRITE), pattern);
		assert.deepEqual(g.spool(), []);
		assert.deepEqual(g.requests("record"), []);
	});
}

// -- an answer of the wrong shape: blocked as malformed-reply

for (const [what, behaviour] of [
	["a null result", { result: null }],
	["no result and no error", { raw: ['{"jsonrpc":"2.0","id":$ID}'] }],
	["a list", { result: [{ action: "allow" }] }],
	["a string", { result: "allow" }],
	["true", { result: true }],
	["an empty object", { result: {} }],
	["an action that is a number", { result: { action: 1 } }],
	["an action that is null", { result: { action: null } }],
	["an action that is a list", { result: { action: ["allow"] } }],
	["an action that is an object", { result: { action: { allow: true } } }],
	["a dialog that is a string", { result: { action: "allow", dialog: "yes" } }],
	["a block reason that is a number", { result: { action: "allow", blockReason: 5 } }],
]) {
	test(`evaluate answered with ${what}: blocked as malformed`, async (t) => {
		const g = await guard(t, { spec: { methods: { evaluate: behaviour } } });
		assertBlocked(await g.call("write", WRITE), /\(sidecar sent a malformed evaluate reply\)\. Nothing was run\. \[reason: malformed-reply\]$/);
	});
}

// -- any action but allow or confirm blocks, with the sidecar's reason

for (const action of ["block", "deny", "ALLOW", "Allow", "allow ", "", "yes", "confirmed"]) {
	test(`evaluate answered with action ${JSON.stringify(action)}: blocked, no dialog`, async (t) => {
		const g = await guard(t, { spec: { methods: { evaluate: { result: { action, blockReason: "policy says no" } } } } });
		const ctx = fakeCtx({ hasUI: true, select: (options) => options[2] });
		assertBlocked(await g.call("write", WRITE, ctx), "policy says no");
		assert.deepEqual(ctx.seen.select, []);
		assert.deepEqual(g.requests("record"), []);
	});
}

test("a block without a reason is still a block", async (t) => {
	const g = await guard(t, { spec: { methods: { evaluate: { result: { action: "block" } } } } });
	assertBlocked(await g.call("write", WRITE));
});

// -- bash: no sandbox plan, no bash

const BASH = { command: "echo hi" };
for (const [what, plan, pattern] of [
	["a refused plan", { error: { code: -32000, message: "bwrap missing", data: { reason: "sandbox" } } }, /sandbox of this session is unknown \(bwrap missing \[sandbox\]\)\. Nothing was run\. \[reason: sandbox-unavailable\]$/],
	["a malformed plan", { result: { state: "sandboxed", prefix: "x" } }, /sandbox of this session is unknown \(sidecar sent a malformed sandbox\.plan reply\)/],
	["a plan that cannot sandbox", { result: { state: "unavailable", unsetEnv: [], effects: "off", noticeLevel: "error", blockReason: "no sandbox here" } }, /^no sandbox here$/],
	["a sandboxed plan without a prefix", { result: { state: "sandboxed", unsetEnv: [], effects: "off", noticeLevel: "info" } }, /sandbox of this session is unknown \(no usable plan\)/],
	["a sandboxed plan with an empty prefix", { result: { state: "sandboxed", prefix: "", unsetEnv: [], effects: "off", noticeLevel: "info" } }, /\(no usable plan\)/],
	["a plan of an unknown state", { result: { state: "maybe", prefix: "x", unsetEnv: [], effects: "off", noticeLevel: "info" } }, /\(no usable plan\)/],
]) {
	test(`bash with ${what}: blocked before any dialog, and the spawn hook refuses`, async (t) => {
		const g = await guard(t, { spec: { methods: { "sandbox.plan": plan, evaluate: { result: { action: "allow" } } } } });
		assertBlocked(await g.call("bash", BASH), pattern);
		assert.equal(await g.call("write", WRITE), undefined, "only bash needs the sandbox");
		g.setSpec({ methods: { "sandbox.plan": plan, evaluate: { result: { action: "confirm", dialog: DIALOG } } } });
		const ctx = fakeCtx({ hasUI: true, select: (options) => options[2] });
		assertBlocked(await g.call("bash", BASH, ctx), pattern);
		assert.deepEqual(ctx.seen.select, []);
		const hook = g.pi.tools.get("bash").spawnHook;
		assert.throws(() => hook({ command: "echo hi", cwd: ROOT, env: {} }), /sandbox|no sandbox here/);
	});
}

test("bash whose plan failed at the session start asks again, and runs sandboxed once planned", async (t) => {
	const g = await guard(t, { spec: { methods: { "sandbox.plan": { exit: 4 } } } });
	assertBlocked(await g.call("bash", BASH), /sidecar is unavailable|sandbox-unavailable/);
	g.setSpec({});
	assert.equal(await g.call("bash", BASH), undefined);
	const hook = g.pi.tools.get("bash").spawnHook;
	const spawned = hook({ command: "echo 'hi'", cwd: ROOT, env: { GUARD_SECRET: "s", PATH: "/bin" } });
	assert.deepEqual(spawned, { command: `fake-sandbox -- 'echo '"'"'hi'"'"''`, cwd: ROOT, env: { PATH: "/bin" } });
	assert.throws(() => hook({ command: "echo \0", cwd: ROOT, env: {} }), /NUL byte/);
});

// -- the dialog: only the operator's Yes, recorded as evidence, lets a call through

const DIALOG = {
	title: "Confirm",
	message: "write notes.txt",
	details: "Payload: sha256:…",
	choices: { no: "No", noWithReason: "No, with a reason", stop: "No, and stop the agent", yes: "Yes", grants: [], details: "Details…" },
	reasonTitle: "Why?",
	reasonPlaceholder: "reason",
};
const confirm = (methods = {}) => ({ methods: { evaluate: { result: { action: "confirm", dialog: DIALOG } }, ...methods } });
const YES = (options) => options.find((o) => o === "Yes");

test("a Yes given after the sidecar that asked died goes to no replacement: blocked and kept", async (t) => {
	const approval = { id: "ap_1", digest: "d".repeat(8) };
	const spec = { methods: { evaluate: { result: { action: "confirm", dialog: DIALOG, approval } } } };
	const g = await guard(t, { spec });
	const ctx = fakeCtx({
		hasUI: true,
		select: async (options) => {
			const asker = g.requests("evaluate").at(-1).pid;
			process.kill(asker, "SIGKILL");
			for (let i = 0; i < 250 && !g.requests("health").some((r) => r.pid !== asker); i++) await sleep(20);
			return YES(options);
		},
	});
	assertBlocked(await g.call("write", WRITE, ctx), /\[reason: sidecar-unavailable\]$/);
	const asker = g.requests("evaluate").at(-1).pid;
	assert.deepEqual(
		g.requests().filter((r) => r.pid !== asker && ["approvals.answer", "record"].includes(r.method)),
		[],
	);
	assert.deepEqual(
		g.spool().map((e) => [e.kind, e.reason, e.toolCallId]),
		[["declined", "confirmed-unrecorded", "call_1"]],
	);
	assert.deepEqual(g.pi.entries, []);
});

for (const [what, dialog] of [
	["no dialog", undefined],
	["a dialog without choices", { ...DIALOG, choices: undefined }],
	["choices without a yes", { ...DIALOG, choices: { no: "No", noWithReason: "No, with a reason" } }],
	["a dialog without a message", { ...DIALOG, message: 1 }],
]) {
	test(`confirm with ${what}: the handler throws (pi blocks the call), nothing is asked or recorded`, async (t) => {
		const g = await guard(t, { spec: { methods: { evaluate: { result: { action: "confirm", dialog } } } } });
		const ctx = fakeCtx({ hasUI: true, select: YES });
		await assert.rejects(g.call("write", WRITE, ctx), /malformed evaluate reply/);
		assert.deepEqual(ctx.seen.select, []);
		assert.deepEqual(g.requests("record"), []);
	});
}

test("confirm without a UI: nobody can say Yes, so it is blocked as declined and said on stderr", async (t) => {
	const g = await guard(t, { spec: confirm() });
	const { value, text } = await stderrOf(() => g.call("write", WRITE, fakeCtx({ hasUI: false })));
	assertBlocked(value, /the operator declined/);
	assert.match(text, /^operator-guard blocked write: /);
	assert.equal(g.requests("audit.declined")[0].params.reason, "declined");
	assert.deepEqual(g.requests("record"), []);
});

for (const [what, select, input, expected] of [
	["No", (o) => o[0], undefined, { reason: "declined" }],
	["Esc (no answer)", () => undefined, undefined, { reason: "declined" }],
	["an answer that is not one of the choices", () => "yes", undefined, { reason: "declined" }],
	["No, with a reason", (o) => o[1], "  not now  ", { reason: "declined", operatorReason: "  not now  " }],
	["No, with an empty reason", (o) => o[1], "   ", { reason: "declined" }],
	["No, with a reason too long", (o) => o[1], "r".repeat(5000), { reason: "declined", operatorReason: "r".repeat(4096) }],
]) {
	test(`the operator answers ${what}: blocked with the sidecar's reason, nothing recorded`, async (t) => {
		const g = await guard(t, { spec: confirm() });
		const ctx = fakeCtx({ hasUI: true, select, input });
		assertBlocked(await g.call("write", WRITE, ctx), /the operator declined/);
		const [declined] = g.requests("audit.declined");
		assert.equal(declined.params.reason, expected.reason);
		assert.equal(declined.params.operatorReason, expected.operatorReason);
		assert.equal(ctx.seen.input.length, select(["a", "b", "c", "d"]) === "b" ? 1 : 0);
		assert.deepEqual(g.requests("record"), []);
	});
}

test("the dialog times out: blocked as a timeout", async (t) => {
	const g = await guard(t, { spec: confirm(), config: { confirmTimeoutMs: 150 } });
	const ctx = fakeCtx({ hasUI: true, select: () => sleep(200).then(() => undefined) });
	assertBlocked(await g.call("write", WRITE, ctx), /the operator declined/);
	assert.equal(ctx.seen.select[0].opts.timeout, 150);
	assert.equal(g.requests("audit.declined")[0].params.reason, "timeout");
	assert.deepEqual(g.requests("record"), []);
});

for (const [what, behaviour, pattern, spooled] of [
	["dies", { exit: 5 }, /^operator-guard blocked this call \(declined\); the audit failed: sidecar exited \(code 5\)/, true],
	["never answers", {}, /^operator-guard blocked this call \(declined\); the audit failed: sidecar gave no answer to audit\.declined/, true],
	["refuses", { error: { code: 1, message: "no", data: { reason: "bad-input" } } }, /the audit failed: no \[bad-input\]$/, false],
	["answers without a block reason", { result: {} }, /the audit failed: sidecar sent a malformed audit\.declined reply$/, false],
]) {
	test(`the operator says No and audit.declined ${what}: still blocked${spooled ? ", and spooled" : ""}`, async (t) => {
		const g = await guard(t, { spec: confirm({ "audit.declined": behaviour }), config: FAST });
		const ctx = fakeCtx({ hasUI: true, select: (o) => o[1], input: "because" });
		assertBlocked(await g.call("write", WRITE, ctx), pattern);
		const kept = g.spool();
		if (!spooled) assert.deepEqual(kept, []);
		else assert.deepEqual([kept.length, kept[0].kind, kept[0].reason, kept[0].operatorReason], [1, "declined", "declined", "because"]);
		assert.deepEqual(g.requests("record"), []);
	});
}

// -- Yes: allowed only with evidence recorded

for (const [what, behaviour, pattern, spooled] of [
	["record dies", { exit: 6 }, /the guard sidecar is unavailable \(sidecar exited \(code 6\).*\[reason: sidecar-unavailable\]$/, true],
	["record never answers", {}, /the guard sidecar is unavailable \(sidecar gave no answer to record within 300 ms\)/, true],
	["record is refused", { error: { code: 1, message: "evidence refused", data: { reason: "bad-input" } } }, /the guard refused to evaluate it \(evidence refused \[bad-input\]\)\. Nothing was run\. \[reason: bad-input\]$/, false],
	["record is malformed", { result: { decision: "recorded", envelope: { e: 1 } } }, /malformed record reply.*\[reason: malformed-reply\]$/, false],
	["record's envelope is a string", { result: { decision: "recorded", envelope: "e", summary: "s" } }, /\[reason: malformed-reply\]$/, false],
	["nothing is recorded", { result: { decision: "refused", envelope: { e: 1 }, summary: "ledger full" } }, /^operator-guard blocked this call: no evidence recorded \(ledger full\)$/, false],
	["recorded has no envelope", { result: { decision: "recorded", envelope: null, summary: "lost" } }, /^operator-guard blocked this call: no evidence recorded \(lost\)$/, false],
]) {
	test(`Yes, but ${what}: blocked, no evidence entry${spooled ? ", the confirmation spooled" : ""}`, async (t) => {
		const g = await guard(t, { spec: confirm({ record: behaviour }), config: FAST });
		assertBlocked(await g.call("write", WRITE, fakeCtx({ hasUI: true, select: YES })), pattern);
		assert.deepEqual(g.pi.entries, []);
		const kept = g.spool();
		if (!spooled) assert.deepEqual(kept, []);
		else assert.deepEqual([kept.length, kept[0].kind, kept[0].reason], [1, "declined", "confirmed-unrecorded"]);
	});
}

test("Yes, recorded: allowed, the evidence appended to the session, and the result audited with it", async (t) => {
	const g = await guard(t, { spec: confirm() });
	assert.equal(await g.call("write", WRITE, fakeCtx({ hasUI: true, select: YES })), undefined);
	assert.deepEqual(g.pi.entries, [{ type: "operator-confirmation-evidence", data: { evidence: "fake" } }]);
	assert.equal(g.requests("record")[0].params.confirmed, true);
	await g.pi.handlers.get("tool_result")({ type: "tool_result", toolCallId: "call_1", toolName: "write", input: WRITE, isError: false }, fakeCtx());
	for (let i = 0; i < 100 && !g.requests("audit.toolExecuted").length; i++) await sleep(20);
	assert.equal(g.requests("audit.toolExecuted")[0].params.evidenceId, "ev_fake");
});

test("a tool result no sidecar takes is spooled, not lost", async (t) => {
	const g = await guard(t, { spec: { methods: { "audit.toolExecuted": { exit: 7 } } } });
	await g.pi.handlers.get("tool_result")({ type: "tool_result", toolCallId: "call_9", toolName: "write", input: WRITE, isError: true }, fakeCtx());
	for (let i = 0; i < 100 && !g.spool().length; i++) await sleep(20);
	assert.deepEqual(
		g.spool().map((e) => [e.kind, e.toolCallId, e.isError]),
		[["executed", "call_9", true]],
	);
});

// -- pi's start does not wait for the sidecar; nothing is judged before the sidecar's start

const PLAN = { state: "sandboxed", prefix: "fake-sandbox --", unsetEnv: [], effects: "off", noticeLevel: "info" };
const PLANNER = { name: "guard_plan", label: "Plan", description: "plans", planner: "channel", parameters: { type: "object" } };

test("session_start returns before the sidecar answers; a call made meanwhile waits for the sidecar's start and is judged after it", async (t) => {
	const g = await guard(t, { spec: { methods: { "sandbox.plan": { delayMs: 800, result: PLAN } } }, start: false });
	const began = Date.now();
	await g.pi.handlers.get("session_start")({ type: "session_start" }, fakeCtx());
	assert.ok(Date.now() - began < 400, `session_start waited ${Date.now() - began} ms for the sidecar`);
	assert.equal(await g.call("bash", { command: "rm -rf ~" }), undefined); // the fake allows it: judged
	assert.ok(Date.now() - began >= 800, "the call went on before the session's sandbox was planned");
	const order = g.requests().map((r) => r.method);
	assert.ok(order.indexOf("sandbox.plan") < order.indexOf("health") && order.indexOf("health") < order.indexOf("evaluate"), order.join(" "));
});

test("a sidecar that never answers its start: the session starts at once, and every call is blocked with the reason", async (t) => {
	const ctx = fakeCtx({ hasUI: true });
	const hung = { "sandbox.plan": {}, health: {}, evaluate: {} };
	const g = await guard(t, { spec: { methods: hung }, config: { startTimeoutMs: 400, requestTimeoutMs: 300 }, start: false });
	const began = Date.now();
	await g.pi.handlers.get("session_start")({ type: "session_start" }, ctx);
	assert.ok(Date.now() - began < 300, `session_start waited ${Date.now() - began} ms`);
	for (const [tool, input] of [["bash", { command: "rm -rf ~" }], ["write", WRITE], ["read", { path: "README.md" }]]) {
		const { value, text } = await stderrOf(() => g.call(tool, input));
		assertBlocked(value, /the guard sidecar is unavailable \((sidecar gave no answer to evaluate within 400 ms|sidecar exited \(SIGKILL\))\)\. Fail closed: nothing was run\. \[reason: sidecar-unavailable\]$/);
		assert.match(text, new RegExp(`^operator-guard blocked ${tool}: `));
	}
	assert.deepEqual(g.spool().map((e) => [e.kind, e.reason, e.toolName]), [["declined", "sidecar-unavailable", "bash"], ["declined", "sidecar-unavailable", "write"], ["declined", "sidecar-unavailable", "read"]]);
	assert.match(ctx.seen.notify.at(-1).text, /risky tool calls will be blocked$/);
});

test("the guard's tools in tools.json are registered when pi loads the shim: no describe, nothing awaited", async (t) => {
	const g = await guard(t, { files: { "tools.json": JSON.stringify([PLANNER, { name: "no planner" }]) }, start: false });
	assert.deepEqual([...g.pi.tools.keys()], ["guard_plan"]); // before any session: in the model's first request
	assert.equal(g.pi.tools.get("guard_plan").description, "plans");
	await g.start();
	assert.deepEqual(g.requests("describe"), []);
	assert.ok(g.pi.tools.has("bash"));
});

for (const [what, text] of [
	["missing", undefined],
	["not JSON", "[{"],
	["not a list", JSON.stringify(PLANNER)],
]) {
	test(`tools.json ${what} (an older install): the shim still loads, and session_start waits for describe`, async (t) => {
		const spec = { methods: { describe: { delayMs: 300, result: { tools: [PLANNER] } } } };
		const g = await guard(t, { spec, files: text === undefined ? {} : { "tools.json": text }, start: false });
		assert.ok(!g.pi.tools.has("guard_plan"));
		await g.pi.handlers.get("session_start")({ type: "session_start" }, fakeCtx());
		assert.ok(g.pi.tools.has("guard_plan"), "the planner tool was not registered before session_start returned");
		assert.equal(g.requests("describe").length, 1);
	});
}

test("the sidecar starts when pi loads the shim, before session_start, and the session uses that one", async (t) => {
	const g = await guard(t, { start: false });
	const started = () => lines(join(g.dir, "started.jsonl"));
	for (let i = 0; i < 250 && !started().length; i++) await sleep(20);
	assert.equal(started().length, 1, "no sidecar started when pi loaded the shim");
	await g.start();
	assert.equal(await g.call("write", WRITE), undefined);
	assert.deepEqual([...new Set(g.requests().map((r) => r.pid))], [started()[0].pid]);
	assert.equal(started().length, 1);
});

test("after session_shutdown no call starts another sidecar (pi exits); the next session_start opens it again", async (t) => {
	const g = await guard(t);
	await g.pi.handlers.get("session_shutdown")({ type: "session_shutdown" }, fakeCtx());
	const pids = new Set(g.requests().map((r) => r.pid));
	const { value } = await stderrOf(() => g.call("write", WRITE));
	assertBlocked(value, UNAVAILABLE);
	await sleep(100);
	assert.deepEqual(new Set(g.requests().map((r) => r.pid)), pids, "a sidecar started after pi's shutdown");
	await g.start();
	assert.equal(await g.call("write", WRITE), undefined); // a new session: judged by a new sidecar
	assert.equal(new Set(g.requests().map((r) => r.pid)).size, pids.size + 1);
});

// -- the session start says when the guard cannot work

for (const [what, methods, pattern] of [
	["describe is malformed", { describe: { result: { tools: [{ name: "x" }] } } }, /operator-guard down \(sidecar unavailable: sidecar sent a malformed describe reply\)/],
	["describe is refused", { describe: { error: { code: 1, message: "no", data: { reason: "guard-open-failed" } } } }, /operator-guard down \(sidecar unavailable: no \[guard-open-failed\]\)/],
	["health is malformed", { health: { result: { ok: "yes", statusText: "?" } } }, /operator-guard down \(sidecar unavailable: sidecar sent a malformed health reply\)/],
]) {
	test(`the session starts and ${what}: the footer says down and the UI is told`, async (t) => {
		const ctx = fakeCtx({ hasUI: true });
		await guard(t, { spec: { methods }, ctx });
		assert.match(ctx.seen.status.at(-1), pattern);
		assert.match(ctx.seen.notify.at(-1).text, /risky tool calls will be blocked$/);
		assert.equal(ctx.seen.notify.at(-1).level, "error");
	});
}

test("the session starts and health is not ok: the UI is told risky calls will be blocked", async (t) => {
	const ctx = fakeCtx({ hasUI: true });
	await guard(t, { spec: { methods: { health: { result: { ok: false, statusText: "operator-guard: key unreadable" } } } }, ctx });
	assert.deepEqual(ctx.seen.notify.at(-1), { text: "operator-guard: key unreadable; risky tool calls will be blocked", level: "error" });
});

// -- two copies in one pi: the first guards, the second registers nothing that guards

test("a second copy in the same pi stands down and the first one keeps guarding", async (t) => {
	const first = await guard(t, { spec: { methods: { evaluate: { result: { action: "block", blockReason: "first" } } } } });
	const { value: second, text } = await stderrOf(() => guard(t, { start: false }));
	assert.match(text, /stands down; the copy at .* guards this session/);
	assert.deepEqual([...second.pi.handlers.keys()], ["session_start"]);
	assert.deepEqual([...second.pi.tools.keys(), ...second.pi.commands.keys()], []);
	assertBlocked(await first.call("write", WRITE), "first");
	assert.ok(globalThis[ACTIVE]);
});

// -- the compact dialog: details one choice away, stop the agent, grants, what the operator typed

const GRANTS = ["Yes, and allow rm -f of exactly ./a.txt", "Yes, and allow rm -f of files matching ./*.txt"];
const withGrants = (methods = {}) => ({
	methods: { evaluate: { result: { action: "confirm", dialog: { ...DIALOG, choices: { ...DIALOG.choices, grants: GRANTS } } } }, ...methods },
});

test("the choices come in order: No first, the grants after the plain Yes, Details last", async (t) => {
	const g = await guard(t, { spec: withGrants() });
	const ctx = fakeCtx({ hasUI: true, select: (o) => o[0] });
	assertBlocked(await g.call("write", WRITE, ctx));
	assert.deepEqual(ctx.seen.select[0].options, ["No", "No, with a reason", "No, and stop the agent", "Yes", ...GRANTS, "Details…"]);
	assert.equal(ctx.seen.select[0].title, "Confirm\nwrite notes.txt");
});

test("Details shows the details, then asks again; only the answer after it counts", async (t) => {
	const g = await guard(t, { spec: confirm() });
	const answers = ["Details…", "Back", "Yes"];
	const ctx = fakeCtx({ hasUI: true, select: () => answers.shift() });
	assert.equal(await g.call("write", WRITE, ctx), undefined);
	assert.deepEqual(ctx.seen.select.map((s) => s.title), ["Confirm\nwrite notes.txt", "Confirm\nPayload: sha256:…", "Confirm\nwrite notes.txt"]);
	assert.equal(g.requests("record").length, 1);
});

test("Details, then no answer: declined, nothing recorded", async (t) => {
	const g = await guard(t, { spec: confirm() });
	const answers = ["Details…", "Back", undefined];
	const ctx = fakeCtx({ hasUI: true, select: () => answers.shift() });
	assertBlocked(await g.call("write", WRITE, ctx), /the operator declined/);
	assert.deepEqual(g.requests("record"), []);
});

for (const [what, index] of [["the first grant", 0], ["the second grant", 1]]) {
	test(`Yes with ${what}: record asks for grant ${index} by number, never sends a pattern`, async (t) => {
		const grant = { grantId: "grant_0123456789abcdefghijkl", label: "rm -f of ./*.txt", expiresAtIso: "2026-01-01T00:00:00.000Z", maxUses: 20 };
		const record = { result: { decision: "recorded", evidenceId: "ev_fake", envelope: { evidence: "fake" }, summary: "recorded", grant } };
		const g = await guard(t, { spec: withGrants({ record }) });
		const ctx = fakeCtx({ hasUI: true, select: (o) => o[4 + index] });
		assert.equal(await g.call("write", WRITE, ctx), undefined);
		const [sent] = g.requests("record");
		assert.deepEqual([sent.params.confirmed, sent.params.grant], [true, index]);
		assert.equal(JSON.stringify(sent.params).includes("./*.txt"), false);
		assert.match(ctx.seen.notify.at(-1).text, /grant grant_0123456789abcdefghijkl kept/);
		assert.deepEqual(g.pi.entries, [{ type: "operator-confirmation-evidence", data: { evidence: "fake" } }]);
	});
}

test("a plain Yes sends no grant", async (t) => {
	const g = await guard(t, { spec: withGrants() });
	assert.equal(await g.call("write", WRITE, fakeCtx({ hasUI: true, select: YES })), undefined);
	assert.equal(g.requests("record")[0].params.grant, undefined);
});

test("a covered call: no dialog, its own evidence appended, the operator told which grant", async (t) => {
	const covered = { grantId: "grant_0123456789abcdefghijkl", label: "rm -f of ./*.txt" };
	const record = { decision: "recorded", evidenceId: "ev_cov", envelope: { evidence: "covered" }, summary: "recorded" };
	const g = await guard(t, { spec: { methods: { evaluate: { result: { action: "allow", record, covered } } } } });
	const ctx = fakeCtx({ hasUI: true, select: YES });
	assert.equal(await g.call("write", WRITE, ctx), undefined);
	assert.deepEqual(ctx.seen.select, []);
	assert.deepEqual(g.pi.entries, [{ type: "operator-confirmation-evidence", data: { evidence: "covered" } }]);
	assert.match(ctx.seen.notify.at(-1).text, /covered by grant grant_0123456789abcdefghijkl/);
});

test("a covered call whose evidence was not recorded is blocked", async (t) => {
	const record = { decision: "invalid", envelope: null, summary: "no" };
	const g = await guard(t, { spec: { methods: { evaluate: { result: { action: "allow", record } } } } });
	assertBlocked(await g.call("write", WRITE, fakeCtx({ hasUI: true })), /no evidence recorded \(no\)/);
	assert.deepEqual(g.pi.entries, []);
});

test("No, and stop the agent: the turn is aborted, this call and every later one declined until the next prompt", async (t) => {
	const g = await guard(t, { spec: confirm() });
	const ctx = fakeCtx({ hasUI: true, select: (o) => o[2] });
	assertBlocked(await g.call("write", WRITE, ctx));
	assert.equal(ctx.seen.aborted, 1);
	const later = fakeCtx({ hasUI: true, select: YES });
	assertBlocked(await g.call("write", WRITE, later));
	assert.deepEqual(later.seen.select, [], "no dialog after stop");
	assert.deepEqual(g.requests("audit.declined").map((r) => r.params.reason), ["stopped", "stopped"]);
	assert.deepEqual(g.requests("record"), []);
	await g.pi.handlers.get("agent_start")({ type: "agent_start" }, fakeCtx());
	assert.equal(await g.call("write", WRITE, fakeCtx({ hasUI: true, select: YES })), undefined, "asked again after a new prompt");
});

test("No, and stop the agent: the calls pi queued and answered itself become the guard's stopped ones", async (t) => {
	const g = await guard(t, { spec: confirm() });
	const end = (message) => g.pi.handlers.get("message_end")({ type: "message_end", message }, fakeCtx());
	const queued = { type: "toolCall", id: "call_q", name: "bash", arguments: { command: "rm -rf build" } };
	assert.equal(await end({ role: "assistant", content: [{ type: "toolCall", id: "call_1", name: "write", arguments: WRITE }, queued] }), undefined);
	const before = { role: "toolResult", toolCallId: "call_0", toolName: "read", content: [{ type: "text", text: "ran" }], isError: false };
	assert.equal(await end(before), undefined, "untouched before a stop");
	assertBlocked(await g.call("write", WRITE, fakeCtx({ hasUI: true, select: (o) => o[2] })));
	const aborted = (id, toolName) => ({ role: "toolResult", toolCallId: id, toolName, content: [{ type: "text", text: "Operation aborted" }], isError: true });
	const asked = await end(aborted("call_1", "write"));
	const left = await end(aborted("call_q", "bash"));
	const declined = g.requests("audit.declined");
	assert.deepEqual(declined.map((r) => [r.params.toolCallId, r.params.reason]), [["call_1", "stopped"], ["call_q", "stopped"]]);
	assert.deepEqual(declined[1].params.input, { command: "rm -rf build" }, "the queued call's own input");
	for (const replaced of [asked, left]) {
		assert.equal(replaced.message.content[0].text, "operator-guard blocked this call: the operator declined. [reason: declined]");
		assert.equal(replaced.message.isError, true);
	}
	await g.pi.handlers.get("agent_start")({ type: "agent_start" }, fakeCtx());
	assert.equal(await end(aborted("call_9", "bash")), undefined, "a new prompt: pi's own results again");
});

for (const [what, select] of [["Yes", YES], ["No", (o) => o[0]], ["no answer", () => undefined]]) {
	test(`what the operator was typing survives the dialog (${what})`, async (t) => {
		const g = await guard(t, { spec: confirm() });
		const ctx = fakeCtx({ hasUI: true, select, draft: "half a sentence" });
		await g.call("write", WRITE, ctx);
		assert.equal(ctx.ui.getEditorText(), "half a sentence");
	});
}

// -- the approval port: the same question on every screen, the first answer wins; the sidecar pushes another
// screen's answer (`approvals.answered`, a message without an id) the moment the broker takes it: nothing polls

const APPROVAL = { id: "apr_0123456789abcdefgh", digest: "sha256:" + "0".repeat(64) };
const notice = (answer, id = APPROVAL.id) => JSON.stringify({ jsonrpc: "2.0", method: "approvals.answered", params: { id, answer } });
/** The evaluate reply asks `evaluated` (confirm: the dialog); `pushed`: lines the sidecar writes `delayMs` after it. */
const asking = (evaluated, pushed = [], delayMs = 50, methods = {}) => ({
	methods: { evaluate: { result: { approval: APPROVAL, ...evaluated }, later: pushed.length ? [{ delayMs, raw: pushed }] : [] }, ...methods },
});
const ported = (pushed = [], methods = {}, delayMs = 50) => asking({ action: "confirm", dialog: DIALOG }, pushed, delayMs, methods);
/** A dialog nobody at pi answers: it resolves only when the shim closes it (its signal). */
const waitForClose = (_options, opts) => new Promise((resolve) => opts.signal.addEventListener("abort", () => resolve(undefined)));
const noPolling = (g) => assert.deepEqual(g.requests().filter((r) => r.method === "approvals.poll"), [], "nothing polls");

for (const [what, answer, expectYes] of [
	["yes", { decision: "yes", approver: "cli" }, true],
	["no with a reason", { decision: "no", approver: "cli", reason: "not now" }, false],
]) {
	test(`answered ${what} from another screen: the pi dialog closes and that answer counts`, async (t) => {
		const g = await guard(t, { spec: ported([notice(answer)]) });
		const ctx = fakeCtx({ hasUI: true, select: waitForClose });
		const result = await g.call("write", WRITE, ctx);
		assert.equal(ctx.seen.select.length, 1);
		assert.match(ctx.seen.notify.at(-1).text, new RegExp(`answered ${answer.decision} from cli`));
		assert.deepEqual(g.requests("approvals.answer"), [], "the pi dialog gave no answer");
		noPolling(g);
		if (expectYes) {
			assert.equal(result, undefined);
			assert.equal(g.requests("record")[0].params.approvalId, APPROVAL.id);
		} else {
			assertBlocked(result, /the operator declined/);
			const [declined] = g.requests("audit.declined");
			assert.deepEqual([declined.params.approvalId, declined.params.operatorReason], [APPROVAL.id, "not now"]);
			assert.deepEqual(g.requests("record"), []);
		}
	});
}

test("an answer pushed by the sidecar closes the pi dialog at once (well under the old 300 ms poll)", async (t) => {
	const g = await guard(t, { spec: ported([notice({ decision: "no", approver: "cli" })], {}, 400) });
	let closed = 0;
	const select = (options, opts) => waitForClose(options, opts).then((v) => ((closed = Date.now()), v));
	assertBlocked(await g.call("write", WRITE, fakeCtx({ hasUI: true, select })));
	const pushed = lines(join(g.dir, "sent.jsonl")).find((l) => l.line.includes("approvals.answered"));
	assert.ok(closed - pushed.at < 100, `closed ${closed - pushed.at} ms after the push`);
});

test("an answer pushed before the evaluate reply arrives (they cross) still closes the dialog", async (t) => {
	const spec = { methods: { evaluate: { raw: [notice({ decision: "yes", approver: "web" })], result: { action: "confirm", dialog: DIALOG, approval: APPROVAL } } } };
	const g = await guard(t, { spec });
	const ctx = fakeCtx({ hasUI: true, select: waitForClose });
	assert.equal(await g.call("write", WRITE, ctx), undefined);
	assert.match(ctx.seen.notify.at(-1).text, /answered yes from web/);
	assert.equal(g.requests("record")[0].params.approvalId, APPROVAL.id);
});

test("answered in the pi dialog: the answer goes to the broker first, then the record names the question", async (t) => {
	const g = await guard(t, { spec: ported([], { "approvals.answer": { result: { outcome: "accepted", answer: { decision: "yes", approver: "pi-dialog" } } } }) });
	assert.equal(await g.call("write", WRITE, fakeCtx({ hasUI: true, select: YES })), undefined);
	const [sent] = g.requests("approvals.answer");
	assert.deepEqual([sent.params.id, sent.params.digest, sent.params.decision], [APPROVAL.id, APPROVAL.digest, "yes"]);
	assert.equal(g.requests("record")[0].params.approvalId, APPROVAL.id);
	assert.equal(g.requests("record")[0].params.digest, undefined);
	noPolling(g);
});

test("the pi dialog says No but another screen said Yes first: the first answer wins", async (t) => {
	const first = { decision: "yes", approver: "cli" };
	const g = await guard(t, { spec: ported([], { "approvals.answer": { result: { outcome: "already-answered", answer: first } } }) });
	assert.equal(await g.call("write", WRITE, fakeCtx({ hasUI: true, select: (o) => o[0] })), undefined);
	assert.equal(g.requests("record").length, 1);
	assert.deepEqual(g.requests("audit.declined"), []);
});

// A forged or stray push: only an answer to this very question, well formed, from the sidecar that asked, counts.
for (const [what, pushed] of [
	["an answer to another question", [notice({ decision: "yes", approver: "cli" }, "apr_another_question_00")]],
	["an answer without a decision", [notice({ approver: "cli" })]],
	["another method", [JSON.stringify({ jsonrpc: "2.0", method: "approvals.approved", params: { id: APPROVAL.id, answer: { decision: "yes", approver: "cli" } } })]],
	["a line that is no JSON", ['{"jsonrpc":"2.0","method":"approvals.answered","params":{"id":"' + APPROVAL.id + '"']],
	["params that are a list", [JSON.stringify({ jsonrpc: "2.0", method: "approvals.answered", params: [APPROVAL.id, { decision: "yes", approver: "cli" }] })]],
]) {
	test(`${what} leaves the pi dialog open: the operator's No there stands`, async (t) => {
		const g = await guard(t, { spec: ported(pushed, { "approvals.answer": { result: { outcome: "accepted", answer: null } } }) });
		const ctx = fakeCtx({ hasUI: true, select: (o) => sleep(400).then(() => o[0]) });
		assertBlocked(await g.call("write", WRITE, ctx), /the operator declined/);
		assert.equal(ctx.seen.select.length, 1);
		assert.deepEqual(g.requests("record"), []);
		assert.equal(g.requests("approvals.answer")[0].params.decision, "no");
		assert.equal(g.requests("audit.declined")[0].params.approvalId, APPROVAL.id);
	});
}

test("an answer pushed after the dialog timed out changes nothing: the call stays declined", async (t) => {
	const g = await guard(t, { spec: ported([notice({ decision: "yes", approver: "cli" })], {}, 900), config: { confirmTimeoutMs: 500 } });
	const ctx = fakeCtx({ hasUI: true, select: (_o, opts) => sleep(opts.timeout).then(() => undefined) });
	assertBlocked(await g.call("write", WRITE, ctx));
	assert.equal(g.requests("audit.declined")[0].params.reason, "timeout");
	await sleep(600);
	assert.deepEqual(g.requests("record"), []);
	assert.deepEqual(g.pi.entries, []);
});

// -- no UI, but the operator answers elsewhere: the call waits

const WAIT = { action: "wait", waitNotice: "operator-guard: this write call waits: pi-guard approvals approve apr_x" };
for (const [what, answer, expectYes, reason] of [
	["approved elsewhere", { decision: "yes", approver: "web" }, true, undefined],
	["declined elsewhere", { decision: "no", approver: "cli", reason: "no" }, false, "declined"],
]) {
	test(`a call without a UI waits for another screen: ${what}`, async (t) => {
		const g = await guard(t, { spec: asking(WAIT, [notice(answer)]) });
		const { value, text } = await stderrOf(() => g.call("write", WRITE, fakeCtx({ hasUI: false })));
		assert.match(text, /^operator-guard: this write call waits: pi-guard approvals approve apr_x$/m);
		if (expectYes) {
			assert.equal(value, undefined);
			assert.equal(g.requests("record")[0].params.approvalId, APPROVAL.id);
		} else {
			assertBlocked(value);
			assert.deepEqual([g.requests("audit.declined")[0].params.reason, g.requests("audit.declined")[0].params.approvalId], [reason, APPROVAL.id]);
			assert.deepEqual(g.requests("record"), []);
		}
		assert.ok(!JSON.stringify(value ?? {}).includes("pi-guard approvals"), "the model is never told the way to answer");
		noPolling(g);
	});
}

test("a waiting call whose sidecar dies is blocked at once, not at the timeout, and kept", async (t) => {
	const spec = { methods: { evaluate: { result: { approval: APPROVAL, ...WAIT }, later: [{ delayMs: 100, exit: 3 }] } } };
	const g = await guard(t, { spec, config: { confirmTimeoutMs: 20_000 } });
	const started = Date.now();
	const { value } = await stderrOf(() => g.call("write", WRITE, fakeCtx({ hasUI: false })));
	assertBlocked(value, /\[reason: sidecar-unavailable\]$/);
	assert.ok(Date.now() - started < 5_000);
	assert.deepEqual(g.spool().map((e) => [e.kind, e.reason]), [["declined", "sidecar-unavailable"]]);
	assert.deepEqual(g.requests("record"), []);
});

test("a waiting call that nobody answers times out as No", async (t) => {
	const g = await guard(t, { spec: asking(WAIT), config: { confirmTimeoutMs: 700 } });
	const { value } = await stderrOf(() => g.call("write", WRITE, fakeCtx({ hasUI: false })));
	assertBlocked(value);
	assert.equal(g.requests("audit.declined")[0].params.reason, "timeout");
	noPolling(g);
});

test("a grant chosen on another screen: the dialog closes and the record follows that answer", async (t) => {
	const answer = { decision: "yes", approver: "web", grant: 1 };
	const g = await guard(t, { spec: asking({ action: "confirm", dialog: { ...DIALOG, choices: { ...DIALOG.choices, grants: GRANTS } } }, [notice(answer)]) });
	assert.equal(await g.call("write", WRITE, fakeCtx({ hasUI: true, select: waitForClose })), undefined);
	const [sent] = g.requests("record");
	assert.deepEqual([sent.params.approvalId, sent.params.grant], [APPROVAL.id, 1]);
});

test("a grant chosen in the pi dialog goes to the broker with its number", async (t) => {
	const spec = asking({ action: "confirm", dialog: { ...DIALOG, choices: { ...DIALOG.choices, grants: GRANTS } } }, [], 0, { "approvals.answer": { result: { outcome: "accepted", answer: null } } });
	const g = await guard(t, { spec });
	assert.equal(await g.call("write", WRITE, fakeCtx({ hasUI: true, select: (o) => o[5] })), undefined);
	const [said] = g.requests("approvals.answer");
	assert.deepEqual([said.params.decision, said.params.grant], ["yes", 1]);
});

// -- the effects review: the same ask (apply is yes), with a UI or waiting for another screen

const HELD = {
	decision: "held",
	summary: "held",
	note: "held back",
	dialog: { title: "Effects", message: "it deleted a.txt", discard: "Discard", apply: "Apply", preselect: "discard" },
	approval: APPROVAL,
};
/** Run a command through the shim's bash on a layer of its own; the output the model reads. */
async function reviewed(g, ctx) {
	assert.equal(await g.call("bash", { command: "rm a.txt" }, ctx), undefined); // hasUi: the latest call's
	const out = [];
	const env = g.pi.tools.get("bash").spawnHook({ command: "rm a.txt", cwd: ROOT, env: {} }).env;
	await g.pi.tools.get("bash").operations.exec("rm a.txt", ROOT, { env, onData: (d) => out.push(String(d)) });
	return out.join("");
}
const effects = (review, pushed = []) => ({
	methods: {
		"sandbox.plan": { result: { state: "sandboxed", prefix: "fake-sandbox --", unsetEnv: [], noticeLevel: "info", effects: "review" } },
		"effects.review": { result: review, later: pushed.length ? [{ delayMs: 50, raw: pushed }] : [] },
		"effects.resolve": { result: { decision: "applied", note: "resolved" } },
		"approvals.answer": { result: { outcome: "accepted", answer: null } },
	},
});

test("held effects without a UI wait for another screen: its yes applies them", async (t) => {
	const g = await guard(t, { spec: effects(HELD, [notice({ decision: "yes", approver: "cli" })]) });
	const { value, text } = await stderrOf(() => reviewed(g, fakeCtx({ hasUI: false })));
	assert.match(text, /held for the operator: pi-guard approvals approve apr_/);
	assert.match(value, /resolved/);
	const [resolved] = g.requests("effects.resolve");
	assert.deepEqual([resolved.params.apply, resolved.params.approvalId], [true, APPROVAL.id]);
	noPolling(g);
});

test("held effects in the pi dialog: another screen's discard closes it", async (t) => {
	const g = await guard(t, { spec: effects(HELD, [notice({ decision: "no", approver: "web" })]) });
	const ctx = fakeCtx({ hasUI: true, select: waitForClose });
	await reviewed(g, ctx);
	assert.deepEqual(ctx.seen.select.map((s) => s.options), [["Discard", "Apply"]]);
	const [resolved] = g.requests("effects.resolve");
	assert.deepEqual([resolved.params.apply, resolved.params.reason], [false, "declined"]);
	assert.deepEqual(g.requests("approvals.answer"), []);
});

test("held effects applied in the pi dialog: the answer goes to the broker by its id", async (t) => {
	const g = await guard(t, { spec: effects(HELD) });
	await reviewed(g, fakeCtx({ hasUI: true, select: (o) => o.find((x) => x === "Apply") }));
	assert.deepEqual(g.requests("approvals.answer").map((r) => [r.params.id, r.params.decision]), [[APPROVAL.id, "yes"]]);
	assert.equal(g.requests("effects.resolve")[0].params.apply, true);
});
