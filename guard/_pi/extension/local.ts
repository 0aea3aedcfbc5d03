/** What the shim does on this machine, apart from the sidecar: its configuration (guard.json), pi's package and
 * tools as the sidecar's facts, the spool of audit events no sidecar took, the judged file opens, one guard per pi. */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { randomBytes } from "node:crypto";
import { closeSync, constants, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, realpathSync, renameSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { get, has, isObject, type JsonObject, message, parse } from "./wire.ts";

export const SPOOL = "spool.jsonl"; // in this directory: read-only inside the sandbox
export const CLAIMED = /^spool\.[0-9]+\.[A-Za-z0-9_-]+\.claimed$/; // a spool a replay took over
export const MAX_SPOOL_BYTES = 8 << 20;
export const MAX_BATCH_BYTES = 768 << 10; // one audit.replay request stays well under the sidecar's 1 MiB line
export const MAX_BATCH_EVENTS = 1000;
export const MAX_REASON_CHARS = 4096; // what the sidecar accepts; it keeps a redacted line of 200
export const SHIM_VERSION = "2";
export const ACTIVE = Symbol.for("pi-operator-guard.active"); // one pi process, one guard
export const HERE = typeof __dirname === "string" ? __dirname : dirname(fileURLToPath(import.meta.url));

export type GuardConfig = ReturnType<typeof loadConfig>;
export function loadConfig() {
	const raw: unknown = JSON.parse(readFileSync(join(HERE, "guard.json"), "utf8"));
	if (!has(raw, { python: "string", args: "list" })) throw new Error("guard.json lacks python/args");
	const [home, n] = [typeof raw.home === "string" ? raw.home : null, (key: string, missing: number) => Number(raw[key]) || missing];
	return { python: raw.python, args: raw.args.map(String), home, confirmTimeoutMs: n("confirmTimeoutMs", 60_000), requestTimeoutMs: n("requestTimeoutMs", 10_000),
		startTimeoutMs: n("startTimeoutMs", 30_000), ttlSeconds: n("ttlSeconds", 30) };
}

/** pi's own package (its directory and version), found upward from pi's entry script. */
export function piPackage(): { dir: string; version: string } | undefined {
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
export const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];
export const short = (a: unknown): a is string => typeof a === "string" && a.length > 0 && a.length <= 256;
export function toolFacts(all: readonly unknown[], name: string): JsonObject | undefined {
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
export type Spoolable = { kind: "declined"; reason: string; operatorReason?: string } | { kind: "executed"; isError: boolean; evidenceId?: string | null };

/** pi's session when an event was kept: a late record names the session it happened in. */
export const spoolSession: { sessionId?: string; sessionFile?: string } = {};

/** Keep an event no sidecar could take: one JSON line with a unique id and the time, fsynced. */
export function spool(event: Spoolable & JsonObject): void {
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
export function claimSpool(): string[] {
	const path = join(HERE, SPOOL);
	try {
		if (existsSync(path)) renameSync(path, join(HERE, `spool.${process.pid}.${randomBytes(6).toString("base64url")}.claimed`));
	} catch {
		// another pi claimed it first
	}
	return readdirSync(HERE).flatMap((name) => (CLAIMED.test(name) ? [join(HERE, name)] : []));
}
/** A claimed spool's events in batches that fit one request; lines that do not parse (a torn write) are dropped. */
export function batches(text: string): unknown[][] {
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
export const posixQuote = (text: string): string => {
	if (text.includes("\0")) throw new Error("operator-guard: a command with a NUL byte cannot be run");
	return `'${text.replaceAll("'", `'"'"'`)}'`;
};
export const noSandbox = (why: string) =>
	`operator-guard blocked this bash call: the OS sandbox of this session is unknown (${why}). Nothing was run. [reason: sandbox-unavailable]`;

/** Open `path` as pi's read/write/edit would, but only if it is the file the guard judged (`real`): a link a
 * parallel call swapped in after the decision is refused, never followed. The check is on the open descriptor
 * (Linux `/proc/self/fd`), so nothing can change between the check and the read or write. A new file is made
 * through the already checked directory's descriptor, O_EXCL: never in another place, never through a link. */
export const fdPath = (fd: number): string => (existsSync(`/proc/self/fd/${fd}`) ? readlinkSync(`/proc/self/fd/${fd}`) : "");
export const refused = (path: string, opened: string, real: string, write: boolean): Error =>
	new Error(`operator-guard refused this file access: ${path} now leads to ${opened || "another file"}, not to ${real} as when the guard decided. Nothing was ${write ? "written" : "read"}. [reason: path-changed-after-decision]`);
export function openJudged(path: string, real: string | undefined, write: boolean): number {
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
export const judgedRead = (path: string, real: string | undefined): Buffer => {
	const fd = openJudged(path, real, false);
	try {
		const chunks: Buffer[] = [];
		for (let chunk = Buffer.alloc(1 << 16), n = readSync(fd, chunk); n > 0; chunk = Buffer.alloc(1 << 16), n = readSync(fd, chunk)) chunks.push(chunk.subarray(0, n));
		return Buffer.concat(chunks);
	} finally {
		closeSync(fd);
	}
};
export const judgedWrite = (path: string, real: string | undefined, content: string): void => {
	const fd = openJudged(path, real, true);
	try {
		ftruncateSync(fd, 0), writeSync(fd, content, 0, "utf8");
	} finally {
		closeSync(fd);
	}
};

/** Claim this pi process for this copy; returns the copy that already holds it, if another one does. */
export const registry = globalThis as unknown as Record<symbol, unknown>;
export function elect(): { path: string; version: string } | undefined {
	const held = registry[ACTIVE];
	if (has(held, { path: "string", version: "string" }) && held.path !== HERE) return held;
	registry[ACTIVE] = { path: HERE, version: SHIM_VERSION };
	return undefined;
}
export function release(): void {
	if (get(registry[ACTIVE], "path") === HERE) delete registry[ACTIVE];
}

/** The TUI owns the terminal; every other mode (print, JSON, RPC: stdout is the protocol) can take a stderr line.
 * `ctx.mode` is new in pi 0.8x; older pi: a UI on a terminal is the TUI. */
export const isTui = (ctx: ExtensionContext & { mode?: unknown }): boolean =>
	ctx.mode !== undefined ? ctx.mode === "tui" : ctx.hasUI && process.stdout.isTTY === true;
export const say = (ctx: ExtensionContext, text: string, level: "warning" | "error"): void => {
	if (!isTui(ctx)) process.stderr.write(`${text.replaceAll("\n", " ")}\n`);
	if (ctx.hasUI) ctx.ui.notify(text, level);
};
