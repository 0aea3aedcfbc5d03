/**
 * pi-operator-guard: the pi extension shim (installed by `pi-guard install`).
 *
 * Wiring only. Every decision (what is destructive or protected, what the dialog says, why a
 * call is blocked) is made by the Python sidecar `pi-guard serve`, started once per session
 * with the Python recorded in guard.json at install time. It fails closed: when the sidecar
 * cannot answer, the tool call is blocked.
 */
import type { ExtensionAPI, ExtensionContext, ToolCallEventResult } from "@mariozechner/pi-coding-agent";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

interface GuardConfig {
	python: string;
	args: string[];
	home: string | null;
	confirmTimeoutMs: number;
	requestTimeoutMs: number;
	startTimeoutMs: number;
	ttlSeconds: number;
}

type Call = { toolName: string; input: unknown; cwd: string; toolCallId: string };
type JsonObject = { [key: string]: unknown };

// The sidecar's replies (guard/_sidecar/wire.py; pi has no type for them): shapes checked at run time.
type Kinds = { string: string; boolean: boolean; object: JsonObject; list: readonly unknown[] };
type Shape = Record<string, keyof Kinds | `${keyof Kinds}?`>;
type Of<S extends Shape> = { [K in keyof S]: S[K] extends `${infer T extends keyof Kinds}?` ? Kinds[T] | null | undefined : Kinds[S[K] & keyof Kinds] };
const TOOL = { name: "string", label: "string", description: "string", planner: "string", parameters: "object" } as const;
const EVALUATE = { action: "string", dialog: "object?", blockReason: "string?" } as const;
const RECORD = { decision: "string", evidenceId: "string?", envelope: "object?", summary: "string" } as const;

const EVIDENCE_ENTRY = "operator-confirmation-evidence";
const STATUS_KEY = "operator-guard";
const MAX_MISSED_AUDITS = 100;

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
const isKind = (v: unknown, kind: string): boolean =>
	kind.endsWith("?") ? v == null || isKind(v, kind.slice(0, -1)) : kind === "object" ? isObject(v) : kind === "list" ? Array.isArray(v) : typeof v === kind;
const has = <const S extends Shape>(v: unknown, shape: S): v is JsonObject & Of<S> =>
	isObject(v) && Object.entries(shape).every(([key, kind]) => isKind(v[key], kind));
const isTool = (v: unknown): v is Of<typeof TOOL> => has(v, TOOL);
const get = (v: unknown, key: string): unknown => (isObject(v) ? v[key] : undefined);

function loadConfig(): GuardConfig {
	const here = typeof __dirname === "string" ? __dirname : dirname(fileURLToPath(import.meta.url));
	const raw: unknown = JSON.parse(readFileSync(join(here, "guard.json"), "utf8"));
	if (!has(raw, { python: "string", args: "list" })) throw new Error("guard.json lacks python/args");
	return {
		python: raw.python,
		args: raw.args.map(String),
		home: typeof raw.home === "string" ? raw.home : null,
		confirmTimeoutMs: Number(raw.confirmTimeoutMs) || 60_000,
		requestTimeoutMs: Number(raw.requestTimeoutMs) || 10_000,
		startTimeoutMs: Number(raw.startTimeoutMs) || 30_000,
		ttlSeconds: Number(raw.ttlSeconds) || 30,
	};
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The sidecar answered with a JSON-RPC error: it is alive but refused this request. */
class RpcError extends Error {
	constructor(
		msg: string,
		readonly reason: string,
	) {
		super(msg);
	}
}

/** The sidecar's reply to `method`, narrowed to `shape`; a reply of another shape fails like a refusal. */
const malformed = (method: string) => new RpcError(`sidecar sent a malformed ${method} reply`, "malformed-reply");
function expect<const S extends Shape>(method: string, reply: unknown, shape: S): Of<S> {
	if (has(reply, shape)) return reply;
	throw malformed(method);
}

/** JSON-RPC 2.0 client over the sidecar's stdio: LF framing, ids, per-request timeouts. */
class Sidecar {
	private child: ChildProcessWithoutNullStreams | undefined;
	private buffer = "";
	private nextId = 1;
	private ready = false;
	private crashed: string | undefined;
	private stderrTail: string[] = [];
	private readonly expected = new WeakSet<object>();
	private readonly inflight = new Set<Promise<unknown>>();
	private readonly pending = new Map<number, { resolve: (result: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();

	constructor(private readonly cfg: GuardConfig) {}

	get pid(): number | undefined {
		return this.child?.pid;
	}

	start(): void {
		if (this.child) return;
		const env = { ...process.env };
		if (this.cfg.home) env.PI_OPERATOR_GUARD_HOME = this.cfg.home;
		const child = spawn(this.cfg.python, this.cfg.args, { stdio: ["pipe", "pipe", "pipe"], env });
		this.child = child;
		this.ready = false;
		this.buffer = "";
		child.stdout.setEncoding("utf8");
		child.stdout.on("data", (chunk: string) => this.onData(chunk));
		child.stderr.setEncoding("utf8");
		child.stderr.on("data", (chunk: string) => {
			this.stderrTail = [...this.stderrTail, ...chunk.split("\n").filter((l) => l.trim())].slice(-5);
		});
		child.stdin.on("error", () => undefined); // a dead pipe is reported by "exit"
		child.on("error", (err) => this.onGone(child, `could not start ${this.cfg.python}: ${err.message}`));
		child.on("exit", (code, sig) => this.onGone(child, `exited (${sig ?? `code ${code}`})`));
	}

	private onGone(child: ChildProcessWithoutNullStreams, why: string): void {
		if (this.child !== child) return;
		this.child = undefined;
		const tail = this.stderrTail.length ? `: ${this.stderrTail[this.stderrTail.length - 1]}` : "";
		if (!this.expected.has(child)) this.crashed = `sidecar ${why}${tail}`;
		for (const p of this.pending.values()) {
			clearTimeout(p.timer);
			p.reject(new Error(`sidecar ${why}${tail}`));
		}
		this.pending.clear();
	}

	private onData(chunk: string): void {
		this.buffer += chunk;
		for (let nl = this.buffer.indexOf("\n"); nl >= 0; nl = this.buffer.indexOf("\n")) {
			let line = this.buffer.slice(0, nl);
			this.buffer = this.buffer.slice(nl + 1);
			if (line.endsWith("\r")) line = line.slice(0, -1);
			let reply: unknown;
			try {
				reply = JSON.parse(line);
			} catch {
				continue;
			}
			if (!isObject(reply) || typeof reply.id !== "number") continue;
			const waiter = this.pending.get(reply.id);
			if (!waiter) continue;
			this.ready = true;
			this.pending.delete(reply.id);
			clearTimeout(waiter.timer);
			if (reply.error) {
				const reason = String(get(get(reply.error, "data"), "reason") ?? "error");
				waiter.reject(new RpcError(`${get(reply.error, "message")} [${reason}]`, reason));
			} else waiter.resolve(reply.result);
		}
	}

	/** Call a method. A sidecar that died since the last call fails this call and restarts. */
	call(method: string, params: object, opts: { restart?: boolean } = {}): Promise<unknown> {
		if (!this.child) {
			if (opts.restart === false) return Promise.reject(new Error(this.crashed ?? "sidecar not running"));
			if (this.crashed) {
				const why = this.crashed;
				this.crashed = undefined;
				this.start(); // back for the next call; this one fails closed
				return Promise.reject(new Error(`${why}; restarted for the next call`));
			}
			this.start();
		}
		const child = this.child!;
		const id = this.nextId++;
		const timeoutMs = this.ready ? this.cfg.requestTimeoutMs : this.cfg.startTimeoutMs;
		const answered = new Promise<unknown>((resolve, reject) => {
			const timer = setTimeout(() => {
				this.pending.delete(id);
				reject(new Error(`sidecar gave no answer to ${method} within ${timeoutMs} ms`));
				this.expected.add(child); // a hung sidecar is replaced on the next call
				child.kill("SIGKILL");
			}, timeoutMs);
			this.pending.set(id, { resolve, reject, timer });
			child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
		});
		this.inflight.add(answered);
		const done = () => this.inflight.delete(answered);
		answered.then(done, done);
		return answered;
	}

	async stop(): Promise<void> {
		const child = this.child;
		if (!child) return;
		// Let fire-and-forget audits already sent be answered (bounded), then stop.
		await Promise.race([Promise.allSettled([...this.inflight]), new Promise((r) => setTimeout(r, 2_000))]);
		this.expected.add(child);
		const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
		child.stdin.end(); // EOF: the sidecar finishes queued requests and exits on its own
		const term = setTimeout(() => child.kill("SIGTERM"), 1_000);
		const kill = setTimeout(() => child.kill("SIGKILL"), 3_000);
		await gone;
		clearTimeout(term);
		clearTimeout(kill);
	}
}

export default function operatorGuard(pi: ExtensionAPI) {
	let cfg: GuardConfig | undefined;
	let configError = "";
	try {
		cfg = loadConfig();
	} catch (err) {
		configError = `operator-guard config unreadable (${message(err)}); reinstall with pi-guard install`;
	}
	const sidecar = cfg ? new Sidecar(cfg) : undefined;
	const evidenceByCall = new Map<string, string | null | undefined>();
	const missedAudits: Call[] = [];
	const registered = new Set<string>();

	const failClosed = (call: Call, err: unknown): ToolCallEventResult => {
		if (err instanceof RpcError) {
			return {
				block: true,
				reason: `operator-guard blocked this ${call.toolName} call: the guard refused to evaluate it (${err.message}). Nothing was run. [reason: ${err.reason}]`,
			};
		}
		if (missedAudits.length < MAX_MISSED_AUDITS) missedAudits.push(call);
		return {
			block: true,
			reason:
				`operator-guard blocked this ${call.toolName} call: the guard sidecar is unavailable (${message(err)}). ` +
				"Fail closed: nothing was run. [reason: sidecar-unavailable]",
		};
	};

	const flushMissedAudits = () => {
		for (const call of missedAudits.splice(0)) {
			sidecar?.call("audit.declined", { ...call, reason: "sidecar-unavailable" }).catch(() => undefined);
		}
	};

	const registerTools = (tools: readonly Of<typeof TOOL>[]) => {
		for (const tool of tools) {
			if (registered.has(tool.name)) continue;
			registered.add(tool.name);
			pi.registerTool({
				name: tool.name,
				label: tool.label,
				description: tool.description,
				promptSnippet: tool.description,
				parameters: tool.parameters,
				async execute(_toolCallId, params) {
					if (!sidecar) throw new Error(configError);
					const plan = await sidecar.call("plan", { planner: tool.planner, params });
					return { content: [{ type: "text", text: JSON.stringify(plan, null, 2) }], details: plan };
				},
			});
		}
	};

	const loadTools = async () => {
		const tools = expect("describe", await sidecar!.call("describe", {}), { tools: "list?" }).tools ?? [];
		if (!tools.every(isTool)) throw malformed("describe");
		registerTools(tools);
	};

	pi.on("session_start", async (_event, ctx) => {
		if (!sidecar) {
			ctx.ui.notify(configError, "error");
			return;
		}
		try {
			await loadTools();
			ctx.ui.setStatus(STATUS_KEY, `operator-guard on (sidecar pid ${sidecar.pid})`);
		} catch (err) {
			ctx.ui.notify(`operator-guard: sidecar unavailable (${message(err)}); risky tool calls will be blocked`, "error");
		}
	});

	pi.on("session_shutdown", async () => {
		await sidecar?.stop();
	});

	pi.on("tool_call", async (event, ctx: ExtensionContext): Promise<ToolCallEventResult | undefined> => {
		const call: Call = { toolName: event.toolName, input: event.input, cwd: ctx.cwd, toolCallId: event.toolCallId };
		if (!sidecar || !cfg) return { block: true, reason: configError };
		let reply: Of<typeof EVALUATE>;
		try {
			const params = { ...call, hasUi: ctx.hasUI, confirmTimeoutMs: cfg.confirmTimeoutMs, ttlSeconds: cfg.ttlSeconds };
			reply = expect("evaluate", await sidecar.call("evaluate", params), EVALUATE);
		} catch (err) {
			return failClosed(call, err);
		}
		if (missedAudits.length) flushMissedAudits();
		if (!registered.size) loadTools().catch(() => undefined); // the sidecar was down at start
		if (reply.action === "allow") return undefined;
		if (reply.action !== "confirm") return { block: true, reason: String(reply.blockReason) };

		const dialog = expect("evaluate", reply.dialog, { title: "string", message: "string" }); // thrown: pi blocks the call
		const asked = Date.now();
		const yes = await ctx.ui.confirm(dialog.title, dialog.message, { timeout: cfg.confirmTimeoutMs });
		if (!yes) {
			const reason = Date.now() - asked >= cfg.confirmTimeoutMs - 20 ? "timeout" : "declined";
			try {
				const declined = await sidecar.call("audit.declined", { ...call, reason, confirmTimeoutMs: cfg.confirmTimeoutMs });
				return { block: true, reason: expect("audit.declined", declined, { blockReason: "string" }).blockReason };
			} catch (err) {
				return { block: true, reason: `operator-guard blocked this call (${reason}); the audit failed: ${message(err)}` };
			}
		}
		let record: Of<typeof RECORD>;
		try {
			record = expect("record", await sidecar.call("record", { ...call, confirmed: true, ttlSeconds: cfg.ttlSeconds }), RECORD);
		} catch (err) {
			return failClosed(call, err);
		}
		if (record.decision !== "recorded" || !record.envelope) {
			return { block: true, reason: `operator-guard blocked this call: no evidence recorded (${record.summary})` };
		}
		pi.appendEntry(EVIDENCE_ENTRY, record.envelope);
		evidenceByCall.set(event.toolCallId, record.evidenceId);
		return undefined;
	});

	pi.on("tool_result", async (event, ctx) => {
		const evidenceId = evidenceByCall.get(event.toolCallId);
		evidenceByCall.delete(event.toolCallId);
		// event.input is the input as executed: a later extension may have changed it.
		// Not awaited: auditing (an fsync) must not slow the tool loop; stop() drains it.
		void sidecar
			?.call(
				"audit.toolExecuted",
				{ toolCallId: event.toolCallId, toolName: event.toolName, input: event.input, cwd: ctx.cwd, isError: event.isError, evidenceId },
				{ restart: false },
			)
			.catch(() => undefined); // nothing to audit into; `audit report` shows the gap
		return undefined;
	});

	pi.registerCommand("guard", {
		description: "operator-guard: key, home, counts, and audit verify",
		handler: async (_args, ctx) => {
			if (!sidecar) return ctx.ui.notify(configError, "error");
			try {
				const status = expect("status", await sidecar.call("status", {}), { text: "string", auditIntact: "boolean" });
				ctx.ui.notify(status.text, status.auditIntact ? "info" : "error");
			} catch (err) {
				ctx.ui.notify(`operator-guard: sidecar unavailable (${message(err)})`, "error");
			}
		},
	});
}
