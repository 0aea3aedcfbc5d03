/**
 * Evidence envelopes v1: checks 1 to 5 of the monitor consumer's check (the guide, "The
 * consumer's checks and reason codes"), in the same order and with the same decisions and
 * reason codes as the Python `guard.evidence.check_and_consume`:
 *
 *     1 structure  -> malformed       (the reason is the parse or schema problem)
 *     2 key        -> untrusted       unknown-key | key-retired
 *     3 signature  -> untrusted       signature-invalid  (malformed: not-canonicalizable)
 *     4 origin     -> untrusted       origin-untrusted
 *    (4a operator  -> untrusted       operator-*: only when the envelope carries `operatorSignature`)
 *     5 time       -> expired | not-yet-valid   ttl-out-of-range | created-in-future | expired
 *     6 call id    -> mismatch        tool-call-id-mismatch | call-id-required (the call's id only)
 *    (6a dialog    -> not-dialog      grant-covered: only with `requireDialog`)
 *    (6b operator  -> not-operator-signed   no-operator-signature: only with `requireOperatorSignature`)
 *
 * Evidence a scoped grant covered (`origin: "runtime-grant"`) names the grant in `coveredBy`
 * (`grantId`, `use`, `grantEvidenceId`), inside the signed details; the origin and `coveredBy`
 * must agree (check 1). With `requireDialog`, such evidence is `not-dialog` once checks 1 to 5
 * pass: the guard puts that check after its exact match (6) and before single use (7), so
 * there it also means nothing was consumed.
 *
 * `approver`, when present, says which screen the operator answered on (`pi-dialog`, `cli`,
 * `web`), signed with the rest; any other value, `null` included, is malformed (check 1).
 * Envelopes without it verify as they always did.
 *
 * `operatorSignature`, when present, is the operator's own WebAuthn assertion over the
 * envelope's approval statement (`credentialId`, `authenticatorData`, `clientDataJson`,
 * `signature`: exactly these, each unpadded base64url; never `null`), signed with the rest.
 * Check 4a verifies it against the keyring's enrolled `operators` (./operator.ts): the guard's
 * key alone, even stolen, cannot make one. With `requireOperatorSignature`, evidence without one
 * is `not-operator-signed` once checks 1 to 6a pass (the guard: before single use, so nothing
 * is consumed). A `match` says `operatorSignature: "verified"` or `"none"`.
 *
 * Check 6 is the guard's exact match against the pending call; the part of it this verifier can
 * do without the call is its id. Evidence bound to a call (`toolCallId` in the signed details)
 * is `mismatch` when the consumer's `toolCallId` differs (`tool-call-id-mismatch`) and, by
 * default, when the consumer gives none (`call-id-required`): a consumer that ties the evidence
 * to the pending call some other way says so with `callCheckedElsewhere: true`.
 *
 * The signature is Ed25519 over `"pi-operator-guard/evidence/v1\n" + JCS(details without
 * "signature")`, computed over the details exactly as they arrived. Checks 6 (the exact match
 * against the recomputed pending call, beyond its id) and 7 (single use) need the pending call
 * and a ledger: they are the consumer's, not this verifier's. Evidence never authorizes anything.
 */

import { b64UrlDecode } from "./base64.ts";
import { CanonicalizationError, canonicalBytes } from "./jcs.ts";
import { type JsonObject, type JsonValue, JsonInputError, isJsonObject, loadJson } from "./json.ts";
import { ed25519Verify } from "./ed25519.ts";
import type { PublicKeyring } from "./keyring.ts";
import { type OperatorCheck, type OperatorSignature, checkOperatorSignature } from "./operator.ts";
import { parseIsoMillis } from "./time.ts";

export const EVIDENCE_SCHEMA = "pi-operator-guard/evidence/v1";
export const EVIDENCE_CUSTOM_TYPE = "operator-confirmation-evidence";
export const MAX_ENVELOPE_BYTES = 16 * 1024;
export const MAX_TTL_SECONDS = 600;
export const DEFAULT_SKEW_SECONDS = 5;
export const ORIGINS: readonly string[] = ["runtime-ui-confirm", "operator-contract-review", "runtime-effects-confirm", "runtime-grant"];
export const TRUSTED_ORIGINS: readonly string[] = ORIGINS;
/** The origin of evidence a scoped grant covered, rather than a dialog of its own. */
export const GRANT_ORIGIN = "runtime-grant";
export const MAX_GRANT_USES = 1000;
/** Which screen the operator answered on: pi's dialog, `pi-guard approvals`, the local page. */
export const APPROVERS: readonly string[] = ["pi-dialog", "cli", "web"];
const DOMAIN = new TextEncoder().encode("pi-operator-guard/evidence/v1\n");

export type EnvelopeDecision =
  | "match"
  | "missing"
  | "malformed"
  | "untrusted"
  | "expired"
  | "not-yet-valid"
  | "mismatch"
  | "not-dialog"
  | "not-operator-signed";

/**
 * Whether evidence carries the operator's own verified signature: `"verified"` or `"none"` on a
 * match (as the guard's `ConsumeResult.operatorSignature` on consumed evidence), `null` otherwise.
 */
export type OperatorSigned = "verified" | "none";

/** What checks 1 to 5 say. `decision: "match"` means all five passed; it authorizes nothing. */
export interface EnvelopeResult {
  decision: EnvelopeDecision;
  reasons: string[];
  evidenceId: string | null;
  operatorSignature: OperatorSigned | null;
  dispatchAllowed: false;
  canOverrideMonitorBlock: false;
  authorization: "none";
}

export interface EnvelopeOptions {
  keyring: PublicKeyring;
  /** Milliseconds since the epoch. */
  now: number;
  skewSeconds?: number;
  maxTtlSeconds?: number;
  trustedOrigins?: readonly string[];
  /** The pending call's id: evidence bound to another call is `mismatch` (`tool-call-id-mismatch`). */
  toolCallId?: string;
  /**
   * Without `toolCallId`, evidence bound to a call is `mismatch` (`call-id-required`) unless this
   * says the consumer ties the evidence to the pending call some other way; default false.
   */
  callCheckedElsewhere?: boolean;
  /** Refuse evidence a scoped grant covered (`not-dialog`, `grant-covered`); default false. */
  requireDialog?: boolean;
  /** Refuse evidence without the operator's own signature (`not-operator-signed`, `no-operator-signature`); default false. */
  requireOperatorSignature?: boolean;
}

function result(decision: EnvelopeDecision, reasons: string[], evidenceId: string | null, operatorSignature: OperatorSigned | null = null): EnvelopeResult {
  return { decision, reasons, evidenceId, operatorSignature, dispatchAllowed: false, canOverrideMonitorBlock: false, authorization: "none" };
}

/** The exact bytes signed: the domain prefix and the JCS of `details` minus `signature`. */
export function signingMessage(details: JsonObject): Uint8Array {
  const unsigned: JsonObject = {};
  for (const [key, value] of Object.entries(details)) if (key !== "signature") unsigned[key] = value;
  const body = canonicalBytes(unsigned);
  const out = new Uint8Array(DOMAIN.length + body.length);
  out.set(DOMAIN);
  out.set(body, DOMAIN.length);
  return out;
}

class Malformed extends Error {
  readonly code: string;
  constructor(code: string, detail: string) {
    super(`${code}: ${detail}`);
    this.code = code;
  }
}

type FieldCheck = (value: JsonValue) => boolean;

/** Length in code points, as Python counts a `str`. */
function chars(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

const str =
  (min: number, max: number, pattern?: RegExp): FieldCheck =>
  (v) =>
    typeof v === "string" && v.isWellFormed() && chars(v) >= min && chars(v) <= max && (pattern === undefined || pattern.test(v));
const literal =
  (...allowed: (string | boolean)[]): FieldCheck =>
  (v) =>
    (typeof v === "string" || typeof v === "boolean") && allowed.includes(v);
const orNull =
  (check: FieldCheck): FieldCheck =>
  (v) =>
    v === null || check(v);
const iso: FieldCheck = (v) => typeof v === "string" && parseIsoMillis(v) !== null;
/** A JSON integer in [min, max]: decoded text holds integers as `bigint` (`1.0` and `true` are not integers). */
const integer =
  (min: number, max: number, decodedNumbers: boolean): FieldCheck =>
  (v) =>
    (typeof v === "bigint" && v >= BigInt(min) && v <= BigInt(max)) ||
    (decodedNumbers && typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max);

interface Field {
  check: FieldCheck;
  required: boolean;
}

const DETAILS: Record<string, Field> = {
  schema: { check: literal(EVIDENCE_SCHEMA), required: true },
  evidenceId: { check: str(0, Infinity, /^oce_[A-Za-z0-9_-]{22,64}$/), required: true },
  origin: { check: literal(...ORIGINS), required: true },
  trusted: { check: literal(true), required: true },
  actionKind: { check: literal("destructive", "protected"), required: true },
  toolName: { check: str(1, 256), required: true },
  path: { check: orNull(str(0, 4096)), required: false },
  scope: { check: orNull(str(0, 4096)), required: false },
  payloadHash: { check: str(0, Infinity, /^sha256:[0-9a-f]{64}$/), required: true },
  toolCallId: { check: orNull(str(1, 256)), required: false },
  coveredBy: { check: orNull(isJsonObject), required: false }, // its members: coveredByFields
  approver: { check: literal(...APPROVERS), required: false }, // absent or a value, never null
  operatorSignature: { check: isJsonObject, required: false }, // absent or an object, never null: OPERATOR_SIGNATURE
  createdAtIso: { check: iso, required: true },
  expiresAtIso: { check: iso, required: true },
  dispatchAllowed: { check: literal(false), required: false },
  canOverrideMonitorBlock: { check: literal(false), required: false },
  authorization: { check: literal("none"), required: false },
  keyId: { check: str(0, Infinity, /^ed25519:[0-9a-f]{64}$/), required: true },
  signature: { check: str(0, Infinity, /^[A-Za-z0-9_-]{86}$/), required: true },
};

/**
 * `details.coveredBy`. Its `use` must be an integer: text decodes integers as `bigint`, so
 * `1.0` is refused as the Python side refuses it; an envelope given already decoded (by
 * `JSON.parse`, which cannot tell `1` from `1.0`) may hold it as a safe-integer `number`.
 */
function coveredByFields(decodedNumbers: boolean): Record<string, Field> {
  return {
    grantId: { check: str(0, Infinity, /^grant_[A-Za-z0-9_-]{22}$/), required: true },
    use: { check: integer(1, MAX_GRANT_USES, decodedNumbers), required: true },
    grantEvidenceId: { check: str(0, Infinity, /^oce_[A-Za-z0-9_-]{22,64}$/), required: true },
  };
}

/** `details.operatorSignature`: exactly these members, each unpadded base64url (up to 4096 characters). */
const B64URL = str(1, 4096, /^[A-Za-z0-9_-]+$/);
const OPERATOR_SIGNATURE: Record<string, Field> = {
  credentialId: { check: B64URL, required: true },
  authenticatorData: { check: B64URL, required: true },
  clientDataJson: { check: B64URL, required: true },
  signature: { check: B64URL, required: true },
};

const ENVELOPE: Record<string, Field> = {
  customType: { check: literal(EVIDENCE_CUSTOM_TYPE), required: false },
  content: { check: str(0, 2048), required: true },
  display: { check: literal(false), required: false },
  details: { check: isJsonObject, required: true },
};

function checkShape(obj: JsonObject, fields: Record<string, Field>, where: string): void {
  for (const key of Object.keys(obj)) {
    if (!(key in fields)) throw new Malformed("schema-violation", `${where}${key}: extra inputs are not permitted`);
  }
  for (const [key, field] of Object.entries(fields)) {
    const value = obj[key];
    if (value === undefined) {
      if (field.required) throw new Malformed("schema-violation", `${where}${key}: field required`);
    } else if (!field.check(value)) {
      throw new Malformed("schema-violation", `${where}${key}: invalid value`);
    }
  }
}

/** Check 1: strictly parse an envelope (text, bytes or decoded JSON); returns its details. */
export function parseEnvelope(raw: Uint8Array | string | JsonValue): JsonObject {
  let obj: JsonValue;
  const text = typeof raw === "string" || raw instanceof Uint8Array;
  if (text) {
    try {
      obj = loadJson(raw, { maxBytes: MAX_ENVELOPE_BYTES });
    } catch (exc) {
      if (exc instanceof JsonInputError) throw new Malformed(exc.code, exc.message);
      throw exc;
    }
  } else {
    obj = raw;
    if (isJsonObject(obj)) {
      let size: number;
      try {
        size = canonicalBytes(obj).length;
      } catch (exc) {
        if (exc instanceof CanonicalizationError) throw new Malformed("not-canonicalizable", exc.code);
        throw exc;
      }
      if (size > MAX_ENVELOPE_BYTES) throw new Malformed("too-large", `${size} bytes > ${MAX_ENVELOPE_BYTES}`);
    }
  }
  if (!isJsonObject(obj)) throw new Malformed("not-an-object", "the envelope is not a JSON object");
  const customType = obj["customType"];
  if (customType !== undefined && customType !== EVIDENCE_CUSTOM_TYPE) {
    throw new Malformed("wrong-custom-type", "customType is not operator-confirmation-evidence");
  }
  const details = obj["details"];
  if (isJsonObject(details)) {
    const schema = details["schema"];
    if (schema !== undefined && schema !== null && schema !== EVIDENCE_SCHEMA) {
      throw new Malformed("unsupported-schema", "details.schema is not pi-operator-guard/evidence/v1");
    }
  }
  checkShape(obj, ENVELOPE, "");
  if (!isJsonObject(details)) throw new Malformed("schema-violation", "details: not an object");
  checkShape(details, DETAILS, "details.");
  const coveredBy = details["coveredBy"];
  if (isJsonObject(coveredBy)) checkShape(coveredBy, coveredByFields(!text), "details.coveredBy.");
  const operatorSignature = details["operatorSignature"];
  if (isJsonObject(operatorSignature)) checkShape(operatorSignature, OPERATOR_SIGNATURE, "details.operatorSignature.");
  // A grant's evidence names its grant, and only a grant's evidence does (null is absent).
  if ((details["origin"] === GRANT_ORIGIN) !== isJsonObject(coveredBy)) {
    throw new Malformed("schema-violation", "details: origin runtime-grant needs coveredBy, and coveredBy needs it");
  }
  return details;
}

/** Checks 1 to 5 of an envelope (with 4a, the call id of 6, 6a and 6b); never throws for any input. */
export function verifyEnvelope(raw: Uint8Array | string | JsonValue | null | undefined, options: EnvelopeOptions): EnvelopeResult {
  const skew = (options.skewSeconds ?? DEFAULT_SKEW_SECONDS) * 1000;
  const maxTtl = (options.maxTtlSeconds ?? MAX_TTL_SECONDS) * 1000;
  const trustedOrigins = options.trustedOrigins ?? TRUSTED_ORIGINS;
  const now = options.now;
  if (raw === null || raw === undefined || raw === "" || (raw instanceof Uint8Array && raw.length === 0)) {
    return result("missing", ["no-evidence"], null);
  }
  if (!(raw instanceof Uint8Array) && isJsonObject(raw) && Object.keys(raw).length === 0) {
    return result("missing", ["no-evidence"], null);
  }
  // 1. structure
  let details: JsonObject;
  try {
    details = parseEnvelope(raw);
  } catch (exc) {
    if (exc instanceof Malformed) return result("malformed", [exc.code], null);
    throw exc;
  }
  // The shape check guarantees these are the strings the schema describes.
  const eid = details["evidenceId"] as string;
  const keyId = details["keyId"] as string;
  const created = parseIsoMillis(details["createdAtIso"] as string) as number;
  const expires = parseIsoMillis(details["expiresAtIso"] as string) as number;
  // 2. key (a retired key verifies only evidence created before its retirement; the claimed
  // createdAt is covered by the signature checked next)
  const key = options.keyring.usableKey(keyId, now, created);
  if (key === null) {
    return result("untrusted", [options.keyring.keys.has(keyId) ? "key-retired" : "unknown-key"], eid);
  }
  // 3. signature
  const signature = b64UrlDecode(details["signature"] as string, 64);
  let message: Uint8Array;
  try {
    message = signingMessage(details);
  } catch (exc) {
    if (exc instanceof CanonicalizationError) return result("malformed", ["not-canonicalizable"], eid);
    throw exc;
  }
  if (signature === null || !ed25519Verify(key, message, signature)) {
    return result("untrusted", ["signature-invalid"], eid);
  }
  // 4. origin
  if (!trustedOrigins.includes(details["origin"] as string)) return result("untrusted", ["origin-untrusted"], eid);
  // 4a. the operator's own signature, when the envelope carries one (the shape check made it
  // an object of four base64url strings)
  let operator: OperatorCheck | null = null;
  const operatorSignature = details["operatorSignature"];
  if (isJsonObject(operatorSignature)) {
    operator = checkOperatorSignature(details, operatorSignature as unknown as OperatorSignature, options.keyring.operators);
    if (operator.reason !== null) return result("untrusted", [operator.reason], eid);
  }
  // 5. time
  const lifetime = expires - created;
  if (lifetime <= 0 || lifetime > maxTtl) return result("expired", ["ttl-out-of-range"], eid);
  if (now < created - skew) return result("not-yet-valid", ["created-in-future"], eid);
  if (now >= expires) return result("expired", ["expired"], eid);
  // 6. the call id (the rest of the exact match needs the pending call: the consumer's)
  const boundTo = details["toolCallId"];
  if (typeof boundTo === "string") {
    if (options.toolCallId !== undefined && options.toolCallId !== boundTo) return result("mismatch", ["tool-call-id-mismatch"], eid);
    if (options.toolCallId === undefined && options.callCheckedElsewhere !== true) return result("mismatch", ["call-id-required"], eid);
  }
  // 6a. a dialog of its own, when asked for (the guard: after its exact match, before single use)
  if (options.requireDialog === true && details["origin"] === GRANT_ORIGIN) return result("not-dialog", ["grant-covered"], eid);
  // 6b. the operator's own signature, when asked for (the guard: before single use)
  if (options.requireOperatorSignature === true && operator === null) return result("not-operator-signed", ["no-operator-signature"], eid);
  return result("match", [], eid, operator === null ? "none" : "verified");
}
