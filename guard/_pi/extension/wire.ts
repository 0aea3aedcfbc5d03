/** The sidecar's wire as the shim reads it: run-time shapes of its replies (generated from the Python models),
 * the checks that narrow a reply to its shape, and the error a refusal or a malformed reply becomes. */
export type Call = { toolName: string; input: unknown; cwd: string; toolCallId: string };
export type JsonObject = { [key: string]: unknown };

export type Kinds = { string: string; boolean: boolean; number: number; object: JsonObject; list: readonly unknown[] };
export type Shape = Record<string, keyof Kinds | `${keyof Kinds}?`>;
export type Of<S extends Shape> = { [K in keyof S]: S[K] extends `${infer T extends keyof Kinds}?` ? Kinds[T] | null | undefined : Kinds[S[K] & keyof Kinds] };
// <wire shapes: the sidecar's replies, checked at run time; generated from guard/_sidecar/wire.py by `python -m tools.pi.wire_shapes`>
export const TOOL = { name: "string", label: "string", description: "string", planner: "string", parameters: "object" } as const;
export const EVALUATE = { action: "string", dialog: "object?", blockReason: "string?", sandbox: "object?", file: "object?", record: "object?", covered: "object?", approval: "object?", waitNotice: "string?" } as const;
export const APPROVAL = { id: "string", digest: "string" } as const;
export const ANSWER = { decision: "string", approver: "string", reason: "string?", grant: "number?" } as const;
export const JUDGED = { path: "string", real: "string" } as const;
export const DIALOG = { title: "string", message: "string", details: "string", choices: "object", reasonTitle: "string", reasonPlaceholder: "string" } as const;
export const CHOICES = { no: "string", noWithReason: "string", stop: "string", yes: "string", grants: "list", details: "string" } as const;
export const GRANT = { grantId: "string", label: "string" } as const;
export const HEALTH = { ok: "boolean", statusText: "string" } as const;
export const RECORD = { decision: "string", evidenceId: "string?", envelope: "object?", summary: "string", grant: "object?" } as const;
export const REPLAY = { delivered: "list", duplicates: "list", skipped: "list", rejected: "list" } as const;
export const SANDBOX = { state: "string", prefix: "string?", unsetEnv: "list", notice: "string?", noticeLevel: "string", blockReason: "string?", effects: "string" } as const;
export const EFFECTS_REVIEW = { decision: "string", summary: "string", note: "string?", dialog: "object?", hint: "string?", approval: "object?" } as const;
export const EFFECTS_DIALOG = { title: "string", message: "string", discard: "string", apply: "string", preselect: "string" } as const;
export const EFFECTS_RESOLVE = { decision: "string", note: "string" } as const;
// </wire shapes>

export const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
export const isKind = (v: unknown, kind: string): boolean =>
	kind.endsWith("?") ? v == null || isKind(v, kind.slice(0, -1)) : kind === "object" ? isObject(v) : kind === "list" ? Array.isArray(v) : typeof v === kind;
export const has = <const S extends Shape>(v: unknown, shape: S): v is JsonObject & Of<S> =>
	isObject(v) && Object.entries(shape).every(([key, kind]) => isKind(v[key], kind));
export const isTool = (v: unknown): v is Of<typeof TOOL> => has(v, TOOL);
export const get = (v: unknown, key: string): unknown => (isObject(v) ? v[key] : undefined);
export const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
export const parse = (line: string): unknown => { try { return JSON.parse(line); } catch { return undefined; } };

/** The sidecar answered with a JSON-RPC error: it is alive but refused this request. */
export class RpcError extends Error { constructor(msg: string, readonly reason: string) { super(msg); } }

/** The sidecar's reply to `method`, narrowed to `shape`; a reply of another shape fails like a refusal. */
export const malformed = (method: string) => new RpcError(`sidecar sent a malformed ${method} reply`, "malformed-reply");
export function expect<const S extends Shape>(method: string, reply: unknown, shape: S): Of<S> {
	if (has(reply, shape)) return reply;
	throw malformed(method);
}
