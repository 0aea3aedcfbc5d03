/**
 * pi-operator-guard: the pi extension shim (installed by `pi-guard install`).
 *
 * Wiring only. Every decision (what is destructive or protected, what the dialog says, why a
 * call is blocked) is made by the Python sidecar `pi-guard serve`, started once per session
 * with the Python recorded in guard.json at install time. It fails closed: when the sidecar
 * cannot answer, the tool call is blocked. It is never silently absent: the footer follows the
 * sidecar, and without a UI every block and a broken start are written to stderr. When two
 * copies load into one pi (global and project install), the first one guards, the other stands down.
 *
 * The agent's `bash` tool is replaced by pi's own (`createBashToolDefinition`) with a spawn hook
 * that runs every command in the OS sandbox the sidecar planned for the session (`sandbox.plan`:
 * the shim only prepends the prefix it got); no plan, or a sandbox that cannot start, and bash
 * fails closed. The operator's own `!` commands are not the agent's and stay unsandboxed. pi's
 * `read`, `write` and `edit` are replaced the same way by pi's own, whose file operations open only the file the
 * guard judged for that call (a link swapped in by a parallel call is refused). Those four functions are the
 * shim's only value imports from pi; everything else from pi is a type.
 * Nothing is lost: an audit event no sidecar took is spooled here (read-only in the sandbox) for
 * the next sidecar, in this pi or a later one (`audit.replay`). A Yes never recorded: blocked, kept.
 */
import type { BashOperations, BashSpawnContext, ExtensionAPI, ExtensionContext, ExtensionUIContext, ToolCallEventResult } from "@mariozechner/pi-coding-agent";
import {
	createBashToolDefinition,
	createEditToolDefinition,
	createLocalBashOperations,
	createReadToolDefinition,
	createWriteToolDefinition,
} from "@mariozechner/pi-coding-agent";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, constants, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, realpathSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

type Call = { toolName: string; input: unknown; cwd: string; toolCallId: string };
type JsonObject = { [key: string]: unknown };

type Kinds = { string: string; boolean: boolean; number: number; object: JsonObject; list: readonly unknown[] };
type Shape = Record<string, keyof Kinds | `${keyof Kinds}?`>;
type Of<S extends Shape> = { [K in keyof S]: S[K] extends `${infer T extends keyof Kinds}?` ? Kinds[T] | null | undefined : Kinds[S[K] & keyof Kinds] };
// <wire shapes: the sidecar's replies, checked at run time; generated from guard/_sidecar/wire.py by `python -m tools.pi.wire_shapes`>
const TOOL = { name: "string", label: "string", description: "string", planner: "string", parameters: "object" } as const;
const EVALUATE = { action: "string", dialog: "object?", blockReason: "string?", sandbox: "object?", file: "object?", record: "object?", covered: "object?", approval: "object?", waitNotice: "string?" } as const;
const APPROVAL = { id: "string", digest: "string" } as const;
const ANSWER = { decision: "string", approver: "string", reason: "string?", grant: "number?" } as const;
const JUDGED = { path: "string", real: "string" } as const;
const DIALOG = { title: "string", message: "string", details: "string", choices: "object", reasonTitle: "string", reasonPlaceholder: "string" } as const;
const CHOICES = { no: "string", noWithReason: "string", stop: "string", yes: "string", grants: "list", details: "string" } as const;
const GRANT = { grantId: "string", label: "string" } as const;
const HEALTH = { ok: "boolean", statusText: "string" } as const;
const RECORD = { decision: "string", evidenceId: "string?", envelope: "object?", summary: "string", grant: "object?" } as const;
const REPLAY = { delivered: "list", duplicates: "list", skipped: "list", rejected: "list" } as const;
const SANDBOX = { state: "string", prefix: "string?", unsetEnv: "list", notice: "string?", noticeLevel: "string", blockReason: "string?", effects: "string" } as const;
const EFFECTS_REVIEW = { decision: "string", summary: "string", note: "string?", dialog: "object?", hint: "string?", approval: "object?" } as const;
const EFFECTS_DIALOG = { title: "string", message: "string", discard: "string", apply: "string", preselect: "string" } as const;
const EFFECTS_RESOLVE = { decision: "string", note: "string" } as const;
// </wire shapes>
const ANSWERED = "approvals.answered"; // the sidecar's one notification: another screen answered a question first
const KEEP_ANSWERS = 64; // answers heard before their question's asker listens (the reply and the answer cross)
const LAYER_ENV = "PI_OPERATOR_GUARD_LAYER"; // names a command's copy-on-write layer (guard/_effects)
const EVIDENCE_ENTRY = "operator-confirmation-evidence";
const STATUS_KEY = "operator-guard";
const SPOOL = "spool.jsonl"; // in this directory: read-only inside the sandbox
const CLAIMED = /^spool\.[0-9]+\.[A-Za-z0-9_-]+\.claimed$/; // a spool a replay took over
const MAX_SPOOL_BYTES = 8 << 20;
const MAX_BATCH_BYTES = 768 << 10; // one audit.replay request stays well under the sidecar's 1 MiB line
const MAX_BATCH_EVENTS = 1000;
const MAX_REASON_CHARS = 4096; // what the sidecar accepts; it keeps a redacted line of 200
const SHIM_VERSION = "2";
const ACTIVE = Symbol.for("pi-operator-guard.active"); // one pi process, one guard
const HERE = typeof __dirname === "string" ? __dirname : dirname(fileURLToPath(import.meta.url));

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
const isKind = (v: unknown, kind: string): boolean =>
	kind.endsWith("?") ? v == null || isKind(v, kind.slice(0, -1)) : kind === "object" ? isObject(v) : kind === "list" ? Array.isArray(v) : typeof v === kind;
const has = <const S extends Shape>(v: unknown, shape: S): v is JsonObject & Of<S> =>
	isObject(v) && Object.entries(shape).every(([key, kind]) => isKind(v[key], kind));
const isTool = (v: unknown): v is Of<typeof TOOL> => has(v, TOOL);
const get = (v: unknown, key: string): unknown => (isObject(v) ? v[key] : undefined);

type GuardConfig = ReturnType<typeof loadConfig>;
function loadConfig() {
	const raw: unknown = JSON.parse(readFileSync(join(HERE, "guard.json"), "utf8"));
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

/** pi's own package (its directory and version), found upward from pi's entry script. */
function piPackage(): { dir: string; version: string } | undefined {
	try {
		for (let dir = dirname(realpathSync(process.argv[1] ?? "")); dir !== dirname(dir); dir = dirname(dir)) {
			if (!existsSync(join(dir, "package.json"))) continue;
			const meta: unknown = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
			return String(get(meta, "name")).endsWith("/pi-coding-agent") ? { dir, version: String(get(meta, "version")) } : undefined;
		}
	} catch {
		// not found: the sandbox protects what the sidecar knows of
	}
	return undefined;
}

/** What pi says of a tool (`pi.getAllTools()`) as the sidecar's `ToolFacts`: where it comes from (this directory's
 * tools are the guard's), its MCP namespace, and only the four MCP hints, only booleans (an odd value of a server's
 * must not cost the session its plan). A tool pi does not list says nothing: the sidecar asks. */
const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];
const short = (a: unknown): a is string => typeof a === "string" && a.length > 0 && a.length <= 256;
function toolFacts(all: readonly unknown[], name: string): JsonObject | undefined {
	const info = short(name) ? all.find((t) => get(t, "name") === name) : undefined;
	if (info === undefined) return undefined;
	const [where, ns, hints, exposure] = [get(info, "sourceInfo"), get(info, "namespace"), get(info, "annotations"), get(info, "exposure")];
	const origin = get(where, "path"), said = get(where, "source");
	const own = typeof origin === "string" && (origin === HERE || origin.startsWith(`${HERE}/`));
	const source = own ? "guard" : said === "builtin" || said === "sdk" ? said : where === undefined ? "unknown" : "extension";
	const namespace = has(ns, { name: "string" }) && short(ns.name) ? { name: ns.name, aliases: Array.isArray(ns.aliases) ? ns.aliases.filter(short).slice(0, 16) : [] } : undefined;
	const annotations = isObject(hints) ? Object.fromEntries(HINTS.flatMap((k) => (typeof hints[k] === "boolean" ? [[k, hints[k]]] : []))) : undefined;
	const [reachesTools, from] = [get(info, "reachesTools") !== undefined, typeof origin === "string" ? origin.slice(0, 4096) : undefined];
	return { name, source, origin: from, namespace, annotations, exposure: typeof exposure === "string" ? exposure.slice(0, 64) : undefined, reachesTools };
}

/** An event for `audit.replay` (guard/_sidecar/wire.py `SpooledEvent`) without its id and time. */
type Spoolable = { kind: "declined"; reason: string; operatorReason?: string } | { kind: "executed"; isError: boolean; evidenceId?: string | null };

/** pi's session when an event was kept: a late record names the session it happened in. */
let spoolSession: { sessionId?: string; sessionFile?: string } = {};

/** Keep an event no sidecar could take: one JSON line with a unique id and the time, fsynced. */
function spool(event: Spoolable & JsonObject): void {
	const kept = { id: `spool_${randomBytes(12).toString("base64url")}`, at: new Date().toISOString(), ...spoolSession, ...event };
	const line = `${JSON.stringify(kept)}\n`;
	const path = join(HERE, SPOOL);
	let fd: number | undefined;
	try {
		const bytes = Buffer.byteLength(line);
		if (bytes > MAX_BATCH_BYTES || (existsSync(path) ? statSync(path).size : 0) + bytes > MAX_SPOOL_BYTES) throw new Error("the spool is full");
		fd = openSync(path, "a", 0o600);
		writeSync(fd, line);
		fsyncSync(fd);
	} catch (err) {
		process.stderr.write(`operator-guard: an audit event could not be kept for later (${message(err)}); it is lost\n`);
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

/** The spooled events waiting in this directory: the spool itself is first claimed (renamed) so
 * appends that follow start a new one; claims a pi left behind (it died mid-replay) are retried. */
function claimSpool(): string[] {
	const path = join(HERE, SPOOL);
	try {
		if (existsSync(path)) renameSync(path, join(HERE, `spool.${process.pid}.${randomBytes(6).toString("base64url")}.claimed`));
	} catch {
		// another pi claimed it first
	}
	return readdirSync(HERE).flatMap((name) => (CLAIMED.test(name) ? [join(HERE, name)] : []));
}

const parse = (line: string): unknown => { try { return JSON.parse(line); } catch { return undefined; } };
/** A claimed spool's events in batches that fit one request; lines that do not parse (a torn write) are dropped. */
function batches(text: string): unknown[][] {
	const out: unknown[][] = [];
	let batch: unknown[] = [];
	let bytes = 0;
	for (const line of text.split("\n")) {
		if (!line.trim()) continue;
		const event = parse(line);
		if (event === undefined) continue;
		if (batch.length && (bytes + line.length > MAX_BATCH_BYTES || batch.length >= MAX_BATCH_EVENTS)) out.push(batch), (batch = []), (bytes = 0);
		batch.push(event), (bytes += line.length);
	}
	if (batch.length) out.push(batch);
	return out;
}

/** POSIX single quoting, so the command reaches the sandbox's shell byte for byte. */
const posixQuote = (text: string): string => {
	if (text.includes("\0")) throw new Error("operator-guard: a command with a NUL byte cannot be run");
	return `'${text.replaceAll("'", `'"'"'`)}'`;
};
const noSandbox = (why: string) =>
	`operator-guard blocked this bash call: the OS sandbox of this session is unknown (${why}). Nothing was run. [reason: sandbox-unavailable]`;

/** Open `path` as pi's read/write/edit would, but only if it is the file the guard judged (`real`): a link a
 * parallel call swapped in after the decision is refused, never followed. The check is on the open descriptor
 * (Linux `/proc/self/fd`), so nothing can change between the check and the read or write. A new file is made
 * through the already checked directory's descriptor, O_EXCL: never in another place, never through a link. */
const fdPath = (fd: number): string => (existsSync(`/proc/self/fd/${fd}`) ? readlinkSync(`/proc/self/fd/${fd}`) : "");
const refused = (path: string, opened: string, real: string, write: boolean): Error =>
	new Error(`operator-guard refused this file access: ${path} now leads to ${opened || "another file"}, not to ${real} as when the guard decided. Nothing was ${write ? "written" : "read"}. [reason: path-changed-after-decision]`);
function openJudged(path: string, real: string | undefined, write: boolean): number {
	if (real === undefined) throw new Error(`operator-guard refused this file access: ${path} was not judged by the guard. Nothing was done. [reason: not-judged]`);
	let fd: number;
	try {
		fd = openSync(path, write ? constants.O_WRONLY : constants.O_RDONLY);
	} catch (err) {
		if (!write || (err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
		const dir = openSync(dirname(real), constants.O_RDONLY | constants.O_DIRECTORY);
		try {
			const where = fdPath(dir);
			if (where !== dirname(real)) throw refused(path, where, real, write);
			fd = openSync(`/proc/self/fd/${dir}/${basename(real)}`, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o666);
		} finally {
			closeSync(dir);
		}
	}
	const opened = fdPath(fd) || realpathSync(path); // no /proc (not Linux): the path again, a weaker check
	if (opened !== real || !fstatSync(fd).isFile()) {
		closeSync(fd);
		throw refused(path, opened, real, write);
	}
	return fd;
}
const judgedRead = (path: string, real: string | undefined): Buffer => {
	const fd = openJudged(path, real, false);
	try {
		const chunks: Buffer[] = [];
		for (let chunk = Buffer.alloc(1 << 16), n = readSync(fd, chunk); n > 0; chunk = Buffer.alloc(1 << 16), n = readSync(fd, chunk)) chunks.push(chunk.subarray(0, n));
		return Buffer.concat(chunks);
	} finally {
		closeSync(fd);
	}
};
const judgedWrite = (path: string, real: string | undefined, content: string): void => {
	const fd = openJudged(path, real, true);
	try {
		ftruncateSync(fd, 0), writeSync(fd, content, 0, "utf8");
	} finally {
		closeSync(fd);
	}
};

/** Claim this pi process for this copy; returns the copy that already holds it, if another one does. */
const registry = globalThis as unknown as Record<symbol, unknown>;
function elect(): { path: string; version: string } | undefined {
	const held = registry[ACTIVE];
	if (has(held, { path: "string", version: "string" }) && held.path !== HERE) return held;
	registry[ACTIVE] = { path: HERE, version: SHIM_VERSION };
	return undefined;
}
function release(): void {
	if (get(registry[ACTIVE], "path") === HERE) delete registry[ACTIVE];
}

/** The TUI owns the terminal; every other mode (print, JSON, RPC: stdout is the protocol) can take a stderr line.
 * `ctx.mode` is new in pi 0.8x; older pi: a UI on a terminal is the TUI. */
const isTui = (ctx: ExtensionContext & { mode?: unknown }): boolean =>
	ctx.mode !== undefined ? ctx.mode === "tui" : ctx.hasUI && process.stdout.isTTY === true;
const say = (ctx: ExtensionContext, text: string, level: "warning" | "error"): void => {
	if (!isTui(ctx)) process.stderr.write(`${text.replaceAll("\n", " ")}\n`);
	if (ctx.hasUI) ctx.ui.notify(text, level);
};

/** While a question is open, typed text is the operator's, never an answer (pi's select moves on j/k and takes
 * Enter: "jjj" + Enter said Yes). Text and pastes are held, then put back in the editor. */
function holdTyping(ui: ExtensionContext["ui"] | undefined): () => void {
	const held: string[] = [];
	const take = (d: string) => /^\x1b\[200~([\s\S]*?)(?:\x1b\[201~)?$/.exec(d)?.[1] ?? (/^[^\x00-\x1f\x7f]+$/.test(d) ? d : undefined);
	const off = ui?.onTerminalInput((d) => (take(d) === undefined ? undefined : (held.push(take(d)!), { consume: true })));
	return () => {
		off?.();
		if (held.length && ui) ui.setEditorText(ui.getEditorText() + held.join(""));
		if (held.length) ui?.notify("operator-guard: what you typed while the question was open was not taken as an answer; it is back in the editor", "info");
	};
}

/** The sidecar answered with a JSON-RPC error: it is alive but refused this request. */
class RpcError extends Error { constructor(msg: string, readonly reason: string) { super(msg); } }

/** The sidecar's reply to `method`, narrowed to `shape`; a reply of another shape fails like a refusal. */
const malformed = (method: string) => new RpcError(`sidecar sent a malformed ${method} reply`, "malformed-reply");
function expect<const S extends Shape>(method: string, reply: unknown, shape: S): Of<S> {
	if (has(reply, shape)) return reply;
	throw malformed(method);
}

type Answer = Of<typeof ANSWER>;
/** JSON-RPC 2.0 client over the sidecar's stdio: LF framing, ids, per-request timeouts.
 * `onChange` hears when a sidecar goes down (why) and when a replacement starts (no text).
 * A message without an id is the sidecar's notification `approvals.answered` (another screen answered a question
 * first): only on this sidecar's own stdout pipe, which no sandboxed command can reach; `answered` hears it. */
class Sidecar {
	private child: ChildProcessWithoutNullStreams | undefined;
	starts = 0; // which sidecar runs: one more each start
	private readonly heard = new Map<string, Answer>(); // question id -> the answer another screen gave (this sidecar's)
	private readonly waiting = new Map<string, (answer: Answer | Error) => void>(); // question id -> its asker
	private buffer = "";
	private nextId = 1;
	private ready = false;
	private born = 0; // when this sidecar was started
	private closed = false; // after stop(): no call starts another one (start() opens it again)
	private crashed: string | undefined;
	private stderrTail: string[] = [];
	private readonly expected = new WeakSet<object>();
	private readonly pending = new Map<number, { resolve: (result: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();

	constructor(
		private readonly cfg: GuardConfig,
		private readonly onChange: (down?: string) => void,
	) {}

	start(): void {
		if (this.child) return;
		const env = { ...process.env };
		if (this.cfg.home) env.PI_OPERATOR_GUARD_HOME = this.cfg.home;
		const child = spawn(this.cfg.python, this.cfg.args, { stdio: ["pipe", "pipe", "pipe"], env });
		this.child = child;
		[this.ready, this.closed, this.born] = [false, false, Date.now()];
		this.buffer = "";
		this.heard.clear();
		child.stdout.setEncoding("utf8");
		child.stdout.on("data", (chunk: string) => this.child === child && this.onData(chunk));
		child.stderr.setEncoding("utf8");
		child.stderr.on("data", (chunk: string) => {
			this.stderrTail = [...this.stderrTail, ...chunk.split("\n").filter((l) => l.trim())].slice(-5);
		});
		child.stdin.on("error", () => undefined); // a dead pipe is reported by "exit"
		child.on("error", (err) => this.onGone(child, `could not start ${this.cfg.python}: ${err.message}`));
		child.on("exit", (code, sig) => this.onGone(child, `exited (${sig ?? `code ${code}`})`));
		if (this.starts++) this.onChange();
	}

	private onGone(child: ChildProcessWithoutNullStreams, why: string): void {
		if (this.child !== child) return;
		this.child = undefined;
		const tail = this.stderrTail.length ? `: ${this.stderrTail[this.stderrTail.length - 1]}` : "";
		if (!this.expected.has(child)) this.onChange((this.crashed = `sidecar ${why}${tail}`));
		this.drop(`sidecar ${why}${tail}`);
		// A crash costs no call: the replacement starts now (one that never answered waits for the next call: no restart loop).
		if (!this.expected.has(child) && this.ready) this.start();
	}

	private drop(why?: string): void { // each pending request fails with why, or (none: the session ended) is never answered
		for (const p of this.pending.values()) clearTimeout(p.timer), why !== undefined && p.reject(new Error(why));
		this.pending.clear();
		// A question's asker is gone with it: nothing can answer it any more.
		for (const wake of this.waiting.values()) wake(new Error(why ?? "the session ended"));
		this.waiting.clear(), this.heard.clear();
	}

	/** Another screen's answer to question `id` of sidecar `to` (its `starts`), as the sidecar pushes it; an Error
	 * when that sidecar is gone (or replaced) first. `signal`: the asker stopped waiting. */
	answered(id: string, to: number, signal: AbortSignal): Promise<Answer | Error> {
		if (to !== this.starts || !this.child) return Promise.resolve(new Error(this.crashed ?? "the sidecar that asked was replaced"));
		const heard = this.heard.get(id);
		if (heard) return this.heard.delete(id), Promise.resolve(heard);
		return new Promise((resolve) => {
			const done = (answer: Answer | Error) => (this.waiting.get(id) === done && this.waiting.delete(id), resolve(answer));
			this.waiting.set(id, done);
			signal.addEventListener("abort", () => this.waiting.get(id) === done && this.waiting.delete(id), { once: true });
		});
	}

	private onNotice(message: JsonObject): void {
		const params = message.params;
		if (message.method !== ANSWERED || !has(params, { id: "string", answer: "object" }) || !has(params.answer, ANSWER)) return;
		const wake = this.waiting.get(params.id);
		if (wake) return wake(params.answer);
		this.heard.set(params.id, params.answer); // its evaluate reply is still on the way
		for (const old of this.heard.keys()) if (this.heard.size > KEEP_ANSWERS) this.heard.delete(old);
	}

	private onData(chunk: string): void {
		this.buffer += chunk;
		for (let nl = this.buffer.indexOf("\n"); nl >= 0; nl = this.buffer.indexOf("\n")) {
			let line = this.buffer.slice(0, nl);
			this.buffer = this.buffer.slice(nl + 1);
			if (line.endsWith("\r")) line = line.slice(0, -1);
			const reply = parse(line);
			if (isObject(reply) && !("id" in reply)) this.onNotice(reply);
			if (!isObject(reply) || typeof reply.id !== "number") continue;
			const waiter = this.pending.get(reply.id);
			if (!waiter) continue;
			this.ready = true;
			this.pending.delete(reply.id);
			clearTimeout(waiter.timer);
			if (reply.error) {
				const data = get(reply.error, "data");
				const reason = String(get(data, "reason") ?? "error");
				const detail = get(data, "detail"); // e.g. the home's path and OS error
				const text = typeof detail === "string" ? `${get(reply.error, "message")}: ${detail}` : get(reply.error, "message");
				waiter.reject(new RpcError(`${text} [${reason}]`, reason));
			} else waiter.resolve(reply.result);
		}
	}

	/** Why the sidecar is down (crashed, or not started), or undefined while one runs. */
	down = () => (this.child ? undefined : (this.crashed ?? "not running"));
	/** Call a method; a dead sidecar is replaced for it (`restart: false`: not) and the new one judges it afresh. `to`: only
	 * the sidecar of that `starts` (the one that asked a question; a replacement approves nothing it did not ask). */
	call(method: string, params: object, opts: { restart?: boolean; to?: number } = {}): Promise<unknown> {
		if (!this.child && !this.closed && opts.restart !== false && opts.to === undefined) this.start();
		const child = this.closed ? undefined : this.child;
		if (!child || (opts.to !== undefined && opts.to !== this.starts)) return Promise.reject(new Error(child ? "the sidecar that asked was replaced" : (this.crashed ?? "sidecar not running")));
		const id = this.nextId++;
		const timeoutMs = this.ready ? this.cfg.requestTimeoutMs : this.cfg.startTimeoutMs;
		return new Promise<unknown>((resolve, reject) => {
			const timer = setTimeout(() => {
				this.pending.delete(id);
				reject(new Error(`sidecar gave no answer to ${method} within ${timeoutMs} ms`));
				this.expected.add(child); // a hung sidecar is replaced on the next call
				child.kill("SIGKILL");
				this.onChange(`sidecar gave no answer within ${timeoutMs} ms`);
			}, timeoutMs);
			this.pending.set(id, { resolve, reject, timer });
			child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
		});
	}

	async stop(): Promise<void> {
		const child = this.child;
		this.closed = true;
		if (!child) return;
		this.expected.add(child);
		const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
		// EOF after every request already sent (fire-and-forget audits too): the sidecar answers them, writes what it owes, and exits at once.
		child.stdin.end();
		if (!this.ready && Date.now() - this.born < this.cfg.startTimeoutMs) {
			// Still starting: pi does not wait for its Python start. It reads what was sent (the session's start), writes session.ended, exits.
			return void ((this.child = undefined), this.drop(), child.stdout.destroy(), child.stderr.destroy(), child.unref());
		}
		const [term, kill] = [setTimeout(() => child.kill("SIGTERM"), 1_000), setTimeout(() => child.kill("SIGKILL"), 3_000)];
		await gone;
		clearTimeout(term), clearTimeout(kill);
	}
}

export default function operatorGuard(pi: ExtensionAPI) {
	const active = elect();
	if (active) {
		// Another copy (a global and a project install, say) already guards this pi: two guards
		// would mean two sidecars and two dialogs per call. Stand down: register nothing that guards.
		const notice =
			`operator-guard: the copy at ${HERE} stands down; the copy at ${active.path} guards this session. ` +
			"Two installs load at once: remove one (pi-guard install --uninstall).";
		process.stderr.write(`${notice}\n`);
		pi.on("session_start", (_event, ctx) => (ctx.hasUI ? ctx.ui.notify(notice, "warning") : undefined));
		return;
	}
	let cfg: GuardConfig | undefined;
	let configError = "";
	try {
		cfg = loadConfig();
	} catch (err) {
		configError = `operator-guard config unreadable (${message(err)}); reinstall with pi-guard install`;
	}
	let ui: ExtensionUIContext | undefined; // the latest context's UI: the footer follows the sidecar
	const status = (text: string) => {
		try {
			ui?.setStatus(STATUS_KEY, text);
		} catch {
			// a context pi has since replaced
		}
	};
	const probe = () =>
		sidecar
			?.call("health", {}, { restart: false })
			.then((reply) => expect("health", reply, HEALTH))
			.then((health) => (status(health.statusText), health));
	const sidecar = cfg
		? new Sidecar(cfg, (down) => {
				status(down === undefined ? "operator-guard restarting" : `operator-guard down (${down})`);
				// A new sidecar plans the session's sandbox again (if it cannot, the old plan stays), then shows the footer.
				const up = () => planSandbox(true).catch(() => undefined).then(probe).then(replayLater);
				if (down === undefined) up().catch((err) => status(`operator-guard down (${message(err)})`));
			})
		: undefined;
	sidecar?.start(); // now: its Python start overlaps pi's own, and session_start does not wait for it

	// The session's sandbox, planned by the sidecar; the spawn hook (synchronous) applies it.
	let sandbox: Of<typeof SANDBOX> | undefined;
	let sessionCwd = process.cwd();
	// pi's session: every record the sidecar writes names it (sandbox.plan tells it).
	let session: { sessionId?: string; sessionFile?: string; mode?: string } = {};
	const piPkg = piPackage();
	// What pi lists of its tools (a pi without `getAllTools` lists none: every tool it would have placed asks).
	const allTools = (): readonly unknown[] => ((all: unknown) => (Array.isArray(all) ? all : []))((pi as { getAllTools?: () => unknown }).getAllTools?.());
	const everyTool = () => ((all) => all.flatMap((t) => toolFacts(all, String(get(t, "name"))) ?? []).slice(0, 512))(allTools());
	// The input of each call that may reach other tools (a codemode script, at most 64 KiB): its nested calls name it.
	const reaching = new Map<string, { toolName: string; input?: JsonObject }>();
	const planSandbox = async (sidecarRestarted = false) => {
		const extraReadOnly = [HERE, process.execPath, ...(piPkg ? [piPkg.dir] : [])];
		const envNames = Object.keys(process.env); // names only: credentials among them are removed from the agent's commands
		const runtime = { piDir: piPkg?.dir, nodePath: process.execPath }; // pi renames its process: /proc cannot tell
		const params = { cwd: sessionCwd, extraReadOnly, piVersion: piPkg?.version, sidecarRestarted, envNames, tools: everyTool(), ...runtime, ...session };
		const plan = expect("sandbox.plan", await sidecar!.call("sandbox.plan", params), SANDBOX);
		return (sandbox = plan);
	};
	const runnable = (plan: Of<typeof SANDBOX> | undefined) => plan?.state === "unsandboxed" || (plan?.state === "sandboxed" && !!plan.prefix);
	let executing: string | undefined; // the bash call whose spawn hook runs now (set synchronously around it)
	const layers = new Map<string, { callId?: string; command: string }>();
	const spawnHook = (spawned: BashSpawnContext): BashSpawnContext => {
		const plan = sandbox;
		if (!plan || !runnable(plan)) throw new Error(plan?.blockReason ?? noSandbox("the guard sidecar has not planned it"));
		const env = { ...spawned.env };
		for (const name of plan.unsetEnv) delete env[String(name)];
		const command = plan.state === "sandboxed" ? `${plan.prefix} ${posixQuote(spawned.command)}` : spawned.command;
		if (plan.state === "sandboxed" && plan.effects === "review") {
			// The command writes the workspace through its own layer; reviewedExec hands it to the sidecar after.
			const layer = randomBytes(12).toString("base64url");
			env[LAYER_ENV] = layer;
			layers.set(layer, { callId: executing, command: spawned.command });
		}
		return { command, cwd: spawned.cwd, env };
	};
	// The input of each call the guard let through, as it decided on it (canonical JSON, keys sorted).
	const judgedInputs = new Map<string, string>();
	const canon = (value: unknown): string =>
		JSON.stringify(value, (_key, v: unknown) => (isObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));
	/** The tool, running only the input the guard decided on; `onCall` hears the call's id first, synchronously. */
	const asJudged = <T extends { name: string; execute: (...args: never[]) => unknown }>(tool: T, onCall?: (id: string | undefined) => void): T => {
		const run = tool.execute as (...args: unknown[]) => unknown;
		const execute = (...args: unknown[]) => {
			const [id, params] = args as [string, unknown];
			const judgedInput = judgedInputs.get(id);
			judgedInputs.delete(id);
			if (stopped) return stopQueued(args[4] as ExtensionContext, id, tool.name, params).then((text) => Promise.reject(new Error(text)));
			if (judgedInput === undefined || judgedInput !== canon(params)) {
				const call = { toolName: tool.name, input: params, cwd: sessionCwd, toolCallId: id, reason: "input-changed-after-decision" };
				void sidecar?.call("audit.declined", call).catch(() => spool({ kind: "declined", ...call }));
				throw new Error(
					`operator-guard refused this ${tool.name} call: its input is not the one the guard decided on (something changed it afterwards). Nothing was run. [reason: input-changed-after-decision]`,
				);
			}
			onCall?.(id); // pi calls the spawn hook before execute's first await
			try {
				return run(...args);
			} finally {
				onCall?.(undefined);
			}
		};
		return { ...tool, execute } as T;
	};
	/** One question to the operator, on every screen at once; the first answer wins. With a UI, pi's dialog (`dialog`:
	 * its options, and `more` for the option that shows the rest first); without one, `notice` on stderr (the operator's,
	 * never the model's). Either races the answer another screen gives (pushed by the sidecar that asked, `to`) and the
	 * timeout; pi's own answer goes to that sidecar by the question's id. What may run is settled there from the broker:
	 * the outcome only says which answer won. `gone`: no UI, and the sidecar that asked went away (nobody can answer). */
	type Question = { approval?: Of<typeof APPROVAL>; to: number; timeoutMs: number; notice: string; decide: (choice: string) => { decision: "yes" | "no"; grant?: number };
		dialog?: { title: string; message: string; options: string[]; more?: { choice: string; text: string } } };
	type Outcome = { decision: "yes" | "no" | "timeout" | "gone"; by: string; choice?: string; said?: string; grant?: number; failed?: unknown };
	const ask = async (ui: ExtensionUIContext | undefined, q: Question): Promise<Outcome> => {
		const asked = Date.now();
		const closer = new AbortController();
		const late = (): boolean => Date.now() - asked >= q.timeoutMs - 20;
		const heard = q.approval ? sidecar!.answered(q.approval.id, q.to, closer.signal) : new Promise<never>(() => undefined);
		const fromElsewhere = (a: Answer): Outcome => ({ decision: a.decision === "yes" ? "yes" : "no", by: a.approver, said: a.reason ?? undefined, grant: a.grant ?? undefined });
		let elsewhere: Answer | undefined;
		let choice: string | undefined;
		if (!ui || !q.dialog) {
			if (!q.approval) return { decision: "no", by: "nobody" }; // no screen to ask
			process.stderr.write(`${q.notice.replaceAll("\n", " ")}\n`);
			let timer: NodeJS.Timeout | undefined;
			const answer = await Promise.race([heard, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), q.timeoutMs)))]).finally(() => (clearTimeout(timer), closer.abort()));
			if (answer instanceof Error) return { decision: "gone", by: "nobody", failed: answer };
			return answer ? fromElsewhere(answer) : { decision: "timeout", by: "nobody" };
		}
		const dialog = q.dialog;
		void heard.then((a) => (a instanceof Error ? undefined : ((elsewhere = a), closer.abort()))); // gone: pi's dialog stays the one screen
		let first = true; // the first ask waits the whole timeout; after the rest is shown, what is left of it
		const left = () => (first ? ((first = false), q.timeoutMs) : Math.max(1, q.timeoutMs - (Date.now() - asked)));
		const select = (text: string, items: string[]) => ui.select(`${dialog.title}\n${text}`, items, { timeout: left(), signal: closer.signal });
		const draft = ui.getEditorText?.() ?? ""; // what the operator was typing is given back
		const typed = holdTyping(ui);
		try {
			choice = await select(dialog.message, dialog.options);
			while (dialog.more && choice === dialog.more.choice && !elsewhere) {
				await select(dialog.more.text, ["Back"]);
				choice = !late() && !elsewhere ? await select(dialog.message, dialog.options) : undefined;
			}
		} finally {
			closer.abort();
			if (draft && ui.getEditorText?.() !== draft) ui.setEditorText?.(draft);
			typed();
		}
		if (elsewhere) return fromElsewhere(elsewhere);
		if (choice === undefined || choice === dialog.more?.choice) return { decision: late() ? "timeout" : "no", by: "pi-dialog" };
		const here = q.decide(choice);
		const out: Outcome = { ...here, by: "pi-dialog", choice };
		if (!q.approval) return out;
		try {
			// Never to a replacement sidecar: a restart approves nothing (it has no such question).
			const params = { id: q.approval.id, digest: q.approval.digest, decision: here.decision, ...(here.grant !== undefined ? { grant: here.grant } : {}) };
			const said = expect("approvals.answer", await sidecar!.call("approvals.answer", params, { to: q.to }), { outcome: "string", answer: "object?" });
			if (said.outcome !== "accepted" && has(said.answer, ANSWER)) return fromElsewhere(said.answer); // another screen was first
		} catch (err) {
			if (!(err instanceof RpcError)) out.failed = err; // the sidecar went away with the question
		}
		return out;
	};
	let hasUi = false; // the latest tool call's context: can the operator be asked?
	/** After a command: the sidecar applies what it did, or holds what loses work and the operator decides.
	 * Returns the line the command's output gets (the model reads it); never throws. */
	const reviewEffects = async (layer: string, call: { callId?: string; command: string } | undefined, cwd: string, tail: string) => {
		const about = { layer, toolCallId: call?.callId, cwd, command: call?.command ?? "" };
		try {
			const timeout = cfg?.confirmTimeoutMs ?? 60_000;
			const params = { ...about, outputTail: tail, hasUi, confirmTimeoutMs: timeout };
			const reply = expect("effects.review", await sidecar!.call("effects.review", params), EFFECTS_REVIEW);
			const to = sidecar!.starts; // the sidecar that holds it: only it hears the answer
			if (reply.hint) ui?.notify(`operator-guard: ${reply.hint}`, "info"); // the operator's, never the model's
			if (reply.decision !== "held" || !reply.dialog) return reply.note ?? undefined;
			const dialog = expect("effects.review", reply.dialog, EFFECTS_DIALOG);
			// The same question on every screen (apply is yes): the first answer wins.
			const approval = has(reply.approval, APPROVAL) ? reply.approval : undefined;
			const notice = `operator-guard: what the agent's command did is held for the operator: pi-guard approvals approve ${approval?.id} (or decline it, or the page of pi-guard approvals serve); no answer within ${timeout / 1000} s discards it`;
			const options = dialog.preselect === "apply" ? [dialog.apply, dialog.discard] : [dialog.discard, dialog.apply];
			const decide = (choice: string) => ({ decision: choice === dialog.apply ? ("yes" as const) : ("no" as const) });
			const said = await ask(hasUi ? ui : undefined, { approval, to, timeoutMs: timeout, dialog: { title: dialog.title, message: dialog.message, options }, notice, decide });
			if (said.decision === "gone") throw said.failed;
			const apply = said.decision === "yes";
			const reason = apply ? undefined : said.decision === "timeout" ? "timeout" : "declined";
			const answered = approval ? { approvalId: approval.id } : {};
			const resolved = await sidecar!.call("effects.resolve", { ...about, apply, reason, ...answered });
			return [expect("effects.resolve", resolved, EFFECTS_RESOLVE).note, reply.note].filter(Boolean).join("\n");
		} catch (err) {
			return `operator-guard: what this command did could not be reviewed (${message(err)}); what it held back was not applied. [reason: effects-unreviewed]`;
		}
	};
	const localBash = createLocalBashOperations();
	const reviewedExec: BashOperations["exec"] = async (command, cwd, options) => {
		const layer = options.env?.[LAYER_ENV];
		if (!layer) return localBash.exec(command, cwd, options);
		const call = layers.get(layer);
		layers.delete(layer);
		let tail = "";
		const onData = (data: Buffer) => {
			tail = (tail + data.toString("utf8")).slice(-4096);
			options.onData(data);
		};
		let result: Awaited<ReturnType<BashOperations["exec"]>> | undefined;
		let failure: unknown;
		try {
			result = await localBash.exec(command, cwd, { ...options, onData });
		} catch (err) {
			failure = err; // aborted or timed out: what it did so far is still reviewed
		}
		const note = await reviewEffects(layer, call, cwd, tail);
		if (note) options.onData(Buffer.from(`\n${note}\n`));
		if (failure !== undefined) throw failure;
		return result!;
	};
	const evidenceByCall = new Map<string, string | null | undefined>();
	// The files pi's read/write/edit may open, as the guard judged them: path -> real file (set in tool_call).
	const judged = new Map<string, string>();
	const judgedByCall = new Map<string, string>();
	const realOf = (path: string) => judged.get(path);
	const fileOps = {
		readFile: async (path: string) => judgedRead(path, realOf(path)),
		writeFile: async (path: string, content: string) => judgedWrite(path, realOf(path), content),
		access: async (path: string) => void closeSync(openJudged(path, realOf(path), false)),
		mkdir: async (dir: string) => void mkdirSync(dir, { recursive: true }),
	};

	/** Hand every spooled event to the sidecar (`audit.replay`); a spool is removed only after a reply.
	 * One replay at a time; a sidecar that cannot take them leaves them for the next start. */
	let replaying: Promise<void> | undefined;
	const replaySpool = (): Promise<void> =>
		(replaying ??= (async () => {
			for (const path of claimSpool()) {
				const text = readFileSync(path, "utf8");
				for (const events of batches(text)) expect("audit.replay", await sidecar!.call("audit.replay", { events }, { restart: false }), REPLAY);
				// Every event was answered (delivered, already logged, or invalid for good). A line
				// appended through a descriptor opened before the claim stays for the next replay.
				const now = readFileSync(path, "utf8");
				if (now.length > text.length) writeFileSync(path, now.slice(text.length));
				else unlinkSync(path);
			}
		})().finally(() => (replaying = undefined)));
	const replayLater = () => void replaySpool().catch(() => undefined); // kept for the next start
	const registered = new Set<string>();
	let starting: Promise<unknown> = Promise.resolve(); // session_start's work with the sidecar; never rejects

	/** Block the call; without a UI nobody would see the tool result, so say it on stderr too. */
	const blocked = (ctx: ExtensionContext, toolName: string, reason: string): ToolCallEventResult => {
		if (!ctx.hasUI) {
			const colon = reason.indexOf(": ");
			const why = reason.startsWith("operator-guard blocked this ") && colon > 0 ? reason.slice(colon + 2) : reason;
			process.stderr.write(`operator-guard blocked ${toolName}: ${why.replaceAll("\n", " ")}\n`);
		}
		return { block: true, reason };
	};

	/** Blocked without an answer from the sidecar: kept as `reason` (default: blocked while it was down). */
	const failClosed = (ctx: ExtensionContext, call: Call, err: unknown, reason = "sidecar-unavailable"): ToolCallEventResult => {
		if (err instanceof RpcError) {
			if (err.reason === "audit-integrity") void probe()?.catch(() => undefined); // the footer names the damage and the way out
			const what = err.reason === "guard-open-failed" || err.reason === "audit-integrity" ? "the guard cannot work" : "the guard refused to evaluate it";
			return blocked(ctx, call.toolName, `operator-guard blocked this ${call.toolName} call: ${what} (${err.message}). Nothing was run. [reason: ${err.reason}]`);
		}
		spool({ kind: "declined", reason, ...call });
		return blocked(ctx, call.toolName, `operator-guard blocked this ${call.toolName} call: the guard sidecar is unavailable (${message(err)}). Fail closed: nothing was run. [reason: sidecar-unavailable]`);
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
				async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
					if (!sidecar) throw new Error(configError);
					// What this runtime knows; the sidecar fills it in unless the caller set it.
					const runtime = { hasUi: ctx.hasUI, appendEntry: typeof pi.appendEntry === "function" };
					const plan = await sidecar.call("plan", { planner: tool.planner, params, runtime });
					return { content: [{ type: "text", text: JSON.stringify(plan, null, 2) }], details: plan };
				},
			});
		}
	};

	try {
		registerTools(JSON.parse(readFileSync(join(HERE, "tools.json"), "utf8")).filter(isTool)); // listed in the model's first request
	} catch {} // an install without tools.json (older): session_start waits for describe
	const loadTools = async () => {
		const tools = expect("describe", await sidecar!.call("describe", {}), { tools: "list?" }).tools ?? [];
		if (!tools.every(isTool)) throw malformed("describe");
		registerTools(tools);
	};

	pi.on("session_start", async (_event, ctx) => {
		ui = ctx.ui;
		sessionCwd = ctx.cwd;
		const manager = ctx.sessionManager as Partial<typeof ctx.sessionManager> | undefined; // a bare context (tests, older pi) may lack it
		session = { sessionId: manager?.getSessionId?.() || undefined, sessionFile: manager?.getSessionFile?.() || undefined, mode: (ctx as { mode?: string }).mode };
		spoolSession = { sessionId: session.sessionId, sessionFile: session.sessionFile };
		sandbox = undefined;
		// pi's own bash, commands sandboxed, each on a layer of the workspace reviewed after it ends;
		// pi's own file tools, opening only the file the guard judged (they run outside the sandbox).
		// Each runs only the input the guard decided on (a later extension may change it: pi does not check).
		const bash = createBashToolDefinition(ctx.cwd, { spawnHook, operations: { exec: reviewedExec } });
		pi.registerTool(asJudged(bash, (id) => (executing = id)));
		pi.registerTool(asJudged(createReadToolDefinition(ctx.cwd, { operations: { readFile: fileOps.readFile, access: fileOps.access } })));
		pi.registerTool(asJudged(createWriteToolDefinition(ctx.cwd, { operations: { writeFile: fileOps.writeFile, mkdir: fileOps.mkdir } })));
		pi.registerTool(
			asJudged(createEditToolDefinition(ctx.cwd, { operations: { readFile: fileOps.readFile, writeFile: fileOps.writeFile, access: fileOps.access } })),
		);
		const broken = (why: string) => {
			status(`operator-guard down (${why})`);
			say(ctx, `operator-guard: ${why}; risky tool calls will be blocked`, "error");
		};
		if (!sidecar) return broken(configError);
		sidecar.start(); // again after a session_shutdown (pi switched sessions)
		const described = registered.size ? undefined : loadTools(); // an install without tools.json: pi waits for describe
		starting = (pi as object as Record<symbol, unknown>)[Symbol.for("pi-operator-guard.starting")] = (async () => {
			await described; // pi goes on without waiting for the rest; every tool call waits for it all (tool_call)
			await replaySpool().catch(() => undefined); // what earlier sessions could not deliver
			const plan = await planSandbox().catch(() => undefined); // bash then asks again and says why
			const health = await probe();
			if (health && !health.ok) say(ctx, `${health.statusText}; risky tool calls will be blocked`, "error");
			else if (plan?.notice) say(ctx, plan.notice, plan.noticeLevel === "error" ? "error" : "warning");
		})().catch((err) => broken(`sidecar unavailable: ${message(err)}`));
		await described?.catch(() => undefined);
	});

	pi.on("session_shutdown", async () => {
		release();
		await sidecar?.stop();
	});

	pi.on("tool_call", async (event, ctx: ExtensionContext): Promise<ToolCallEventResult | undefined> => {
		ui = ctx.ui;
		hasUi = ctx.hasUI;
		const call: Call = { toolName: event.toolName, input: event.input, cwd: ctx.cwd, toolCallId: event.toolCallId };
		if (!sidecar || !cfg) return blocked(ctx, call.toolName, configError);
		if (stopped) return declineStopped(ctx, call);
		await starting; // the session's start in the sidecar (sandbox.plan) comes before any call's judgement
		let reply: Of<typeof EVALUATE>, asker: number; // asker: the sidecar that judged it (only it hears the answer)
		try {
			const tool = toolFacts(allTools(), event.toolName);
			const code = get(event.input, "code");
			if (tool?.reachesTools) reaching.set(event.toolCallId, { toolName: event.toolName, input: typeof code === "string" ? { code: code.slice(0, 64 << 10) } : undefined });
			const parentId = get(event, "parentToolCallId");
			const parent = typeof parentId === "string" ? { toolCallId: parentId.slice(0, 256), toolName: "unknown", ...reaching.get(parentId) } : undefined;
			const params = { ...call, hasUi: ctx.hasUI, confirmTimeoutMs: cfg.confirmTimeoutMs, ttlSeconds: cfg.ttlSeconds, tool, parent };
			[reply, asker] = [expect("evaluate", await sidecar.call("evaluate", params), EVALUATE), sidecar.starts];
		} catch (err) {
			return failClosed(ctx, call, err);
		}
		if (reply.sandbox) sandbox = expect("evaluate", reply.sandbox, SANDBOX); // the workspace changed under the plan
		if (reply.file) {
			const file = expect("evaluate", reply.file, JUDGED);
			judged.set(file.path, file.real), judgedByCall.set(event.toolCallId, file.path);
		}
		if (!replaying && existsSync(join(HERE, SPOOL))) replayLater();
		if (!registered.size) loadTools().catch(() => undefined); // the sidecar was down at start
		if (reply.action !== "allow" && reply.action !== "confirm" && reply.action !== "wait") return blocked(ctx, call.toolName, String(reply.blockReason));
		if (call.toolName === "bash" && !runnable(sandbox)) {
			// Before any dialog: no sandbox, no bash (unless the user's policy opted out). Not planned yet: ask once more.
			const why = sandbox ? "" : await planSandbox().then(() => "", (err: unknown) => message(err));
			if (!runnable(sandbox)) {
				// Counted like every block: audited now, or kept for the next sidecar.
				const declined = { ...call, reason: "sandbox-unavailable" };
				void sidecar.call("audit.declined", declined).catch((err: unknown) => (err instanceof RpcError ? undefined : spool({ kind: "declined", ...declined })));
				return blocked(ctx, "bash", sandbox?.blockReason ?? noSandbox(why || "no usable plan"));
			}
		}
		if (reply.action === "allow" && reply.record) {
			// A grant of this session covered it: no dialog, but evidence of its own, as after a Yes.
			const record = expect("evaluate", reply.record, RECORD);
			if (record.decision !== "recorded" || !record.envelope) return blocked(ctx, call.toolName, `operator-guard blocked this call: no evidence recorded (${record.summary})`);
			pi.appendEntry(EVIDENCE_ENTRY, record.envelope);
			evidenceByCall.set(event.toolCallId, record.evidenceId);
			if (has(reply.covered, GRANT)) ctx.ui.notify(`operator-guard: covered by grant ${reply.covered.grantId} (${reply.covered.label})`, "info");
		}
		if (reply.action === "allow") return void judgedInputs.set(event.toolCallId, canon(event.input));
		// The same question is open on every screen (a second terminal: pi-guard approvals; the page); the first
		// answer wins. No UI here: the policy waits (`wait`) for another screen, or the call is not asked at all.
		// A select, not ctx.ui.confirm (whose "Yes" is preselected): "No" comes first, so a stray
		// Enter declines, and so do Esc and the timeout. "Details…" shows the rest, then asks again.
		const waits = reply.action === "wait";
		const approval = waits ? expect("evaluate", reply.approval, APPROVAL) : has(reply.approval, APPROVAL) ? reply.approval : undefined;
		const dialog = waits ? undefined : expect("evaluate", reply.dialog, DIALOG); // thrown: pi blocks the call
		const choices = dialog ? expect("evaluate", dialog.choices, CHOICES) : undefined;
		const grants = choices?.grants.map(String) ?? [];
		const options = choices ? [choices.no, choices.noWithReason, choices.stop, choices.yes, ...grants, choices.details] : [];
		const decide = (c: string) => (c === choices?.yes ? { decision: "yes" as const } : grants.includes(c) ? { decision: "yes" as const, grant: grants.indexOf(c) } : { decision: "no" as const });
		const shown = dialog && choices ? { title: dialog.title, message: dialog.message, options, more: { choice: choices.details, text: dialog.details } } : undefined;
		const notice = reply.waitNotice ?? "operator-guard: this call waits for the operator (pi-guard approvals)";
		const said = await ask(waits ? undefined : ctx.ui, { approval, to: asker, timeoutMs: cfg.confirmTimeoutMs, dialog: shown, notice, decide });
		if (said.decision === "gone") return failClosed(ctx, call, said.failed);
		if (said.failed !== undefined && said.decision === "yes") return failClosed(ctx, call, said.failed, "confirmed-unrecorded"); // kept for the next sidecar
		if (said.by !== "pi-dialog" && said.by !== "nobody" && ctx.hasUI) ctx.ui.notify(`operator-guard: answered ${said.decision} from ${said.by}`, "info");
		const answered = approval ? { approvalId: approval.id } : {}; // the sidecar closes the question
		if (said.choice === choices?.stop && said.by === "pi-dialog") return stopTurn(ctx, call, approval && { approvalId: approval.id });
		if (said.decision !== "yes") {
			const reason = said.decision === "timeout" ? "timeout" : "declined";
			const withReason = dialog && said.by === "pi-dialog" && said.choice === choices?.noWithReason;
			const why = withReason ? await ctx.ui.input(dialog.reasonTitle, dialog.reasonPlaceholder, { timeout: cfg.confirmTimeoutMs }) : said.said;
			return settle(ctx, call, { yes: false, reason, said: why, answered });
		}
		return settle(ctx, call, { yes: true, answered, to: asker, ...(said.grant !== undefined ? { grant: said.grant } : {}) });
	});

	/** The operator's answer, whichever screen gave it: a No is audited and blocks; a Yes is recorded
	 * as evidence (kept in the session) and lets the call run. */
	type Settled = { yes: boolean; reason?: "declined" | "timeout"; said?: string; answered: { approvalId?: string }; grant?: number; to?: number };
	const settle = async (ctx: ExtensionContext, call: Call, how: Settled): Promise<ToolCallEventResult | undefined> => {
		if (!how.yes) {
			const reason = how.reason ?? "declined";
			const operatorReason = how.said?.trim() ? how.said.slice(0, MAX_REASON_CHARS) : undefined;
			try {
				const declined = await sidecar!.call("audit.declined", { ...call, reason, operatorReason, confirmTimeoutMs: cfg!.confirmTimeoutMs, ...how.answered });
				return blocked(ctx, call.toolName, expect("audit.declined", declined, { blockReason: "string" }).blockReason);
			} catch (err) {
				if (!(err instanceof RpcError)) spool({ kind: "declined", reason, ...call, ...(operatorReason ? { operatorReason } : {}) });
				return blocked(ctx, call.toolName, `operator-guard blocked this call (${reason}); the audit failed: ${message(err)}`);
			}
		}
		let record: Of<typeof RECORD>;
		try {
			const chosen = how.grant !== undefined ? { grant: how.grant } : {};
			record = expect("record", await sidecar!.call("record", { ...call, confirmed: true, ttlSeconds: cfg!.ttlSeconds, ...chosen, ...how.answered }, { to: how.to }), RECORD);
		} catch (err) {
			return failClosed(ctx, call, err, "confirmed-unrecorded"); // a Yes without evidence: blocked, and kept
		}
		if (record.decision !== "recorded" || !record.envelope) {
			return blocked(ctx, call.toolName, `operator-guard blocked this call: no evidence recorded (${record.summary})`);
		}
		pi.appendEntry(EVIDENCE_ENTRY, record.envelope);
		evidenceByCall.set(call.toolCallId, record.evidenceId);
		if (has(record.grant, GRANT)) ctx.ui.notify(`operator-guard: grant ${record.grant.grantId} kept: ${record.grant.label} (/guard revoke ${record.grant.grantId})`, "info");
		judgedInputs.set(call.toolCallId, canon(call.input));
		return undefined;
	};

	// "No, and stop the agent": the turn ends, and every call it still makes is declined with one reason.
	let stopped = false;
	const stopTurn = async (ctx: ExtensionContext, call: Call, approval?: { approvalId: string }): Promise<ToolCallEventResult> => {
		stopped = true;
		ctx.abort();
		return declineStopped(ctx, call, approval);
	};
	const stopTexts = new Map<string, string>(); // each call of the stopped turn: what the model reads
	const declineStopped = async (ctx: ExtensionContext, call: Call, approval?: { approvalId: string }): Promise<ToolCallEventResult> => {
		let text: string;
		try {
			const declined = await sidecar!.call("audit.declined", { ...call, reason: "stopped", ...(approval ? { approvalId: approval.approvalId } : {}) });
			text = expect("audit.declined", declined, { blockReason: "string" }).blockReason;
		} catch (err) {
			if (!(err instanceof RpcError)) spool({ kind: "declined", reason: "stopped", ...call });
			text = `operator-guard blocked this call (stopped by the operator); the audit failed: ${message(err)}`;
		}
		stopTexts.set(call.toolCallId, text);
		return blocked(ctx, call.toolName, text);
	};
	/** A call of the stopped turn the guard has not declined (pi queued it, or aborted it asking no extension): declined now. */
	const stopQueued = async (ctx: ExtensionContext, toolCallId: string, toolName: string, input: unknown): Promise<string> =>
		stopTexts.get(toolCallId) ?? String((await declineStopped(ctx, { toolName, input, cwd: ctx.cwd, toolCallId })).reason);
	const turnCalls = new Map<string, unknown>(); // the arguments of the latest turn's calls
	pi.on("agent_start", async () => {
		stopped = false; // the operator prompted again
		stopTexts.clear(), turnCalls.clear();
	});
	// pi's own result of a stopped turn's call ("Operation aborted") becomes the guard's: the model reads who stopped it.
	pi.on("message_end", async (event, ctx) => {
		const m: unknown = event.message, id = String(get(m, "toolCallId"));
		if (get(m, "role") === "assistant") for (const c of (get(m, "content") as unknown[] | undefined) ?? []) if (get(c, "type") === "toolCall") turnCalls.set(String(get(c, "id")), get(c, "arguments"));
		if (!stopped || get(m, "role") !== "toolResult") return undefined;
		const text = await stopQueued(ctx, id, String(get(m, "toolName")), turnCalls.get(id) ?? {});
		return { message: { ...event.message, content: [{ type: "text" as const, text }], isError: true } as typeof event.message };
	});

	pi.on("tool_result", async (event, ctx) => {
		reaching.delete(event.toolCallId);
		const evidenceId = evidenceByCall.get(event.toolCallId);
		evidenceByCall.delete(event.toolCallId);
		const file = judgedByCall.get(event.toolCallId);
		judgedByCall.delete(event.toolCallId);
		if (file !== undefined && ![...judgedByCall.values()].includes(file)) judged.delete(file);
		if (stopTexts.has(event.toolCallId)) return undefined; // refused unrun: declined as stopped
		// event.input is the input as executed: a later extension may have changed it.
		// Not awaited: auditing (an fsync) must not slow the tool loop; stop() drains it.
		const call = { toolCallId: event.toolCallId, toolName: event.toolName, input: event.input, cwd: ctx.cwd };
		void sidecar
			?.call("audit.toolExecuted", { ...call, isError: event.isError, evidenceId }, { restart: false })
			.catch((err: unknown) => {
				// No sidecar took it: kept for the next one (a refusal is the sidecar's word: not kept).
				if (!(err instanceof RpcError)) spool({ kind: "executed", isError: event.isError, ...(evidenceId ? { evidenceId } : {}), ...call });
			});
		return undefined;
	});

	pi.registerCommand("guard", {
		description: "operator-guard: key, home, counts, audit verify; `/guard grants`, `/guard revoke ID|all`",
		handler: async (args, ctx) => {
			if (!sidecar) return ctx.ui.notify(configError, "error");
			const [verb, what] = (args ?? "").trim().split(/\s+/);
			if (verb === "grants" || verb === "revoke") {
				try {
					const params = verb === "grants" ? {} : what === "all" ? { all: true } : { grantId: what ?? "" };
					const reply = expect(`grants.${verb === "grants" ? "list" : "revoke"}`, await sidecar.call(verb === "grants" ? "grants.list" : "grants.revoke", params), { text: "string" });
					return ctx.ui.notify(reply.text, "info");
				} catch (err) {
					return ctx.ui.notify(`operator-guard: ${message(err)}`, "error");
				}
			}
			try {
				const down = sidecar.down(); // a dead sidecar is started again for this status, and /guard says so
				const status = expect("status", await sidecar.call("status", { tools: everyTool() }), { text: "string", auditIntact: "boolean" });
				ctx.ui.notify(`${down ? `operator-guard: the sidecar was down (${down}); a new one started.\n` : ""}${status.text}`, status.auditIntact ? "info" : "error");
			} catch (err) {
				ctx.ui.notify(`operator-guard: sidecar unavailable (${message(err)})`, "error");
			}
		},
	});
}
