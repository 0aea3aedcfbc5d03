/**
 * pi-operator-guard: the pi extension shim (installed by `pi-guard install`). This module: pi's events; `ask.ts`: the one
 * way to ask the operator; `sidecar.ts`: the client of the sidecar; `wire.ts`: its replies' shapes; `local.ts`: the rest.
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
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ask } from "./ask.ts";
import { batches, claimSpool, elect, type GuardConfig, HERE, loadConfig, noSandbox, openJudged, judgedRead, judgedWrite, piPackage, posixQuote, release, say, SPOOL, spool, spoolSession, toolFacts } from "./local.ts";
import { Sidecar } from "./sidecar.ts";
import { APPROVAL, CHOICES, type Call, DIALOG, EFFECTS_DIALOG, EFFECTS_RESOLVE, EFFECTS_REVIEW, EVALUATE, expect, get, GRANT, has, HEALTH, isObject, isTool, JUDGED, type JsonObject, malformed, message, type Of, RECORD, REPLAY, RpcError, SANDBOX, TOOL } from "./wire.ts";

const LAYER_ENV = "PI_OPERATOR_GUARD_LAYER"; // names a command's copy-on-write layer (guard/_effects)
const EVIDENCE_ENTRY = "operator-confirmation-evidence";
const STATUS_KEY = "operator-guard";
const MAX_REASON_CHARS = 4096; // what the sidecar accepts; it keeps a redacted line of 200

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
	const status = (text: string) => { try { ui?.setStatus(STATUS_KEY, text); } catch { /* a context pi has since replaced */ } };
	const probe = () => sidecar?.call("health", {}, { restart: false }).then((reply) => expect("health", reply, HEALTH)).then((health) => (status(health.statusText), health));
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
			const said = await ask(sidecar!, hasUi ? ui : undefined, { approval, to, timeoutMs: timeout, dialog: { title: dialog.title, message: dialog.message, options }, notice, decide });
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
		Object.assign(spoolSession, { sessionId: session.sessionId, sessionFile: session.sessionFile });
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
		const said = await ask(sidecar, waits ? undefined : ctx.ui, { approval, to: asker, timeoutMs: cfg.confirmTimeoutMs, dialog: shown, notice, decide });
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
