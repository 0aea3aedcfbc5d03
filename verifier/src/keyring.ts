/**
 * The guard's public keyring file (`keyring.json`, schema `pi-operator-guard/keyring/v1`): every
 * Ed25519 key the guard has signed with, `active` or `retired` (with when). An auditor's or a
 * monitor's copy of it is their trust root: this module checks that each entry's `keyId` is
 * `ed25519:` + hex SHA-256 of its public key, as the Python `PublicKeyring` does; it does not
 * check the keyring's own signatures (neither does the Python verifier: the file is the root).
 */

import { createHash, type KeyObject } from "node:crypto";

import { b64UrlDecode } from "./base64.ts";
import { type JsonValue, isJsonObject, loadJson } from "./json.ts";
import { ed25519PublicKey } from "./ed25519.ts";
import { NoteKey } from "./note.ts";
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

export class PublicKeyring {
  readonly keys: ReadonlyMap<string, KeyringKey>;

  constructor(keys: Iterable<KeyringKey>) {
    this.keys = new Map([...keys].map((k) => [k.keyId, k]));
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
    return new PublicKeyring(keys);
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
