/** The shim's one line to Python: a JSON-RPC 2.0 client of the sidecar over its stdio (`pi-guard serve`). */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import type { GuardConfig } from "./local.ts";
import { ANSWER, get, has, isObject, type JsonObject, type Of, parse, RpcError } from "./wire.ts";

const ANSWERED = "approvals.answered"; // the sidecar's one notification: another screen answered a question first
const KEEP_ANSWERS = 64; // answers heard before their question's asker listens (the reply and the answer cross)

export type Answer = Of<typeof ANSWER>;
/** JSON-RPC 2.0 client over the sidecar's stdio: LF framing, ids, per-request timeouts.
 * `onChange` hears when a sidecar goes down (why) and when a replacement starts (no text).
 * A message without an id is the sidecar's notification `approvals.answered` (another screen answered a question
 * first): only on this sidecar's own stdout pipe, which no sandboxed command can reach; `answered` hears it. */
export class Sidecar {
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
