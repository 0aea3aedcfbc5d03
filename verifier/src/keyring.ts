/**
 * The guard's public keyring file (`keyring.json`, schema `pi-operator-guard/keyring/v1`): every
 * Ed25519 key the guard has signed with, `active` or `retired` (with when), and, once the
 * operator enrolled an authenticator, the `operators` list: each WebAuthn credential (its COSE
 * public key, algorithm, sign count, RP id and origin), `active` or `removed`. An auditor's or a
 * monitor's copy of it is their trust root: this module checks that each entry's `keyId` is
 * `ed25519:` + hex SHA-256 of its public key, as the Python `PublicKeyring` does, and that each
 * operator credential has exactly the members the Python `OperatorCredential` allows (a
 * credential listed twice is refused too); it does not check the keyring's own signatures
 * (neither does the Python verifier: the file is the root).
 */

import { createHash, type KeyObject } from "node:crypto";

import { b64UrlDecode } from "./base64.ts";
import { type JsonObject, type JsonValue, isJsonObject, loadJson } from "./json.ts";
import { ed25519PublicKey } from "./ed25519.ts";
import { NoteKey } from "./note.ts";
import { OPERATOR_ALGORITHMS, type OperatorCredential } from "./operator.ts";
import { parseIsoMillis } from "./time.ts";

/** Evidence lives at most 600 s: a retired key verifies evidence created before its retirement for this long after it. */
export const RETIRED_KEY_GRACE_SECONDS = 605;
const KEY_ID = /^ed25519:[0-9a-f]{64}$/;

export class KeyringError extends Error {}

export interface KeyringKey {
  keyId: string;
  publicKey: Uint8Array;
  key: KeyObject;
  /** Milliseconds since the epoch, `null` for an active key. */
  retiredAt: number | null;
}

/** `ed25519:` + hex SHA-256 of the raw 32-byte public key. */
export function evidenceKeyId(publicKey: Uint8Array): string {
  return `ed25519:${createHash("sha256").update(publicKey).digest("hex")}`;
}

const B64URL = /^[A-Za-z0-9_-]{1,4096}$/;
const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?$/;
const OPERATOR_MEMBERS = new Set([
  "credentialId",
  "publicKey",
  "algorithm",
  "signCount",
  "label",
  "rpId",
  "origin",
  "status",
  "enrolledAtIso",
  "removedAtIso",
]);

/** Length in code points, as Python counts a `str`. */
function chars(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function text(value: JsonValue | undefined, min: number, max: number): value is string {
  return typeof value === "string" && value.isWellFormed() && chars(value) >= min && chars(value) <= max;
}

/** A JSON integer: text decodes integers as `bigint` (`1.0` and `true` are not integers). */
function integer(value: JsonValue | undefined): bigint | null {
  return typeof value === "bigint" ? value : null;
}

/** One entry of `operators`, exactly as the Python `OperatorCredential` reads it; throws {@link KeyringError}. */
function operatorCredential(entry: JsonValue): OperatorCredential {
  if (!isJsonObject(entry)) throw new KeyringError("an operator credential is not an object");
  const e: JsonObject = entry;
  const id = typeof e["credentialId"] === "string" ? e["credentialId"] : "?";
  const bad = (what: string): KeyringError => new KeyringError(`operator credential ${id}: ${what}`);
  for (const key of Object.keys(e)) if (!OPERATOR_MEMBERS.has(key)) throw bad(`unknown member ${key}`);
  const { credentialId, publicKey, label, rpId, origin, enrolledAtIso } = e;
  if (typeof credentialId !== "string" || !B64URL.test(credentialId)) throw bad("credentialId is not base64url");
  if (typeof publicKey !== "string" || !B64URL.test(publicKey)) throw bad("publicKey is not base64url");
  const algorithm = integer(e["algorithm"]);
  const known = OPERATOR_ALGORITHMS.find((a) => algorithm !== null && BigInt(a) === algorithm);
  if (known === undefined) throw bad(`algorithm is not one of ${OPERATOR_ALGORITHMS.join(", ")}`);
  const signCount = integer(e["signCount"]);
  if (signCount === null || signCount < 0n || signCount > 0xffffffffn) throw bad("signCount is not an integer in [0, 2^32)");
  if (!text(label, 1, 100)) throw bad("label is not 1 to 100 characters");
  if (!text(rpId, 1, 253)) throw bad("rpId is not 1 to 253 characters");
  if (typeof origin !== "string" || !ORIGIN.test(origin)) throw bad("origin is not http(s)://host[:port]");
  const status = e["status"] ?? "active";
  if (e["status"] === null || (status !== "active" && status !== "removed")) throw bad("status is not active or removed");
  if (typeof enrolledAtIso !== "string" || parseIsoMillis(enrolledAtIso) === null) throw bad("enrolledAtIso is not a timestamp");
  const removedAtIso = e["removedAtIso"] ?? null;
  if (removedAtIso !== null && (typeof removedAtIso !== "string" || parseIsoMillis(removedAtIso) === null)) {
    throw bad("removedAtIso is not a timestamp");
  }
  return {
    credentialId,
    publicKey,
    algorithm: known,
    signCount: Number(signCount),
    label,
    rpId,
    origin,
    status,
    enrolledAtIso,
    removedAtIso,
  };
}

export class PublicKeyring {
  readonly keys: ReadonlyMap<string, KeyringKey>;
  /** The operator's enrolled credentials by credential id, active and removed. */
  readonly operators: ReadonlyMap<string, OperatorCredential>;

  constructor(keys: Iterable<KeyringKey>, operators: Iterable<OperatorCredential> = []) {
    this.keys = new Map([...keys].map((k) => [k.keyId, k]));
    const listed = [...operators];
    this.operators = new Map(listed.map((c) => [c.credentialId, c]));
    if (this.operators.size !== listed.length) throw new KeyringError("an operator credential is listed twice");
  }

  /** Parse a keyring file's text or bytes; throws {@link KeyringError}. */
  static parse(data: Uint8Array | string): PublicKeyring {
    let doc: JsonValue;
    try {
      doc = loadJson(data);
    } catch (exc) {
      throw new KeyringError(`the keyring is not JSON (${exc instanceof Error ? exc.message : "unreadable"})`);
    }
    if (!isJsonObject(doc) || doc["schema"] !== "pi-operator-guard/keyring/v1" || !Array.isArray(doc["keys"])) {
      throw new KeyringError("not a pi-operator-guard/keyring/v1 keyring");
    }
    const keys: KeyringKey[] = [];
    for (const entry of doc["keys"]) {
      if (!isJsonObject(entry)) throw new KeyringError("a keyring entry is not an object");
      const { keyId, publicKey, status, retiredAtIso } = entry;
      if (typeof keyId !== "string" || !KEY_ID.test(keyId) || typeof publicKey !== "string") {
        throw new KeyringError("a keyring entry has no keyId or publicKey");
      }
      const raw = b64UrlDecode(publicKey, 32);
      if (raw === null) throw new KeyringError(`${keyId}: the public key is not canonical base64url of 32 bytes`);
      if (evidenceKeyId(raw) !== keyId) throw new KeyringError(`keyId ${keyId} does not match its public key`);
      let retiredAt: number | null = null;
      if (status === "retired") {
        retiredAt = typeof retiredAtIso === "string" ? parseIsoMillis(retiredAtIso) : null;
        if (retiredAt === null) throw new KeyringError(`retired key ${keyId} has no valid retiredAtIso`);
      } else if (status !== "active") {
        throw new KeyringError(`key ${keyId} has status ${String(status)}`);
      }
      keys.push({ keyId, publicKey: raw, key: ed25519PublicKey(raw), retiredAt });
    }
    const operators = doc["operators"];
    if (operators !== undefined && operators !== null && !Array.isArray(operators)) throw new KeyringError("operators is not a list");
    return new PublicKeyring(keys, (operators ?? []).map(operatorCredential));
  }

  /**
   * Every key of the keyring (active or retired, as for the guard's audit verifier) as a note
   * key named `origin`: the guard signs a log's checkpoints with its key under the log's origin.
   */
  noteKeys(origin: string): NoteKey[] {
    return [...this.keys.values()].map((k) => NoteKey.forPublic(origin, k.publicKey));
  }

  /**
   * The key to verify evidence created at `createdAt` with at `now` (both in ms), or `null`: the
   * key is unknown, or retired and the evidence was created at or after the retirement, or `now`
   * is past the retirement by the grace period.
   */
  usableKey(keyId: string, now: number, createdAt: number, graceSeconds = RETIRED_KEY_GRACE_SECONDS): KeyObject | null {
    const found = this.keys.get(keyId);
    if (found === undefined) return null;
    if (found.retiredAt !== null) {
      if (createdAt >= found.retiredAt) return null;
      if (now >= found.retiredAt + graceSeconds * 1000) return null;
    }
    return found.key;
  }
}
