/**
 * Checkpoints as C2SP signed notes (c2sp.org/signed-note, c2sp.org/tlog-checkpoint), Ed25519
 * only, parsed as strictly as the Python side (`audit.tlog._note`), with the same reason codes:
 * `note-malformed`, `checkpoint-malformed`, `origin-mismatch`, `signature-invalid`,
 * `no-trusted-signature`, `vkey-malformed`.
 *
 *     <origin>\n<tree size>\n<base64 root>\n\n— <key name> <base64(key id || signature)>\n
 *
 * key id = SHA-256(key name || 0x0A || 0x01 || public key)[:4];
 * vkey = <key name>+<8 hex key id>+<base64(0x01 || public key)>.
 */

import { createHash, type KeyObject } from "node:crypto";

import { b64StdDecode, b64StdEncode, bytesEqual, hex } from "./base64.ts";
import { ed25519PublicKey, ed25519Verify } from "./ed25519.ts";

export const MAX_NOTE_BYTES = 64 * 1024;
export const MAX_SIGNATURES = 100;
export const ORIGIN_PREFIX = "pi-operator-guard/audit/";
const DASH = "\u2014 ";
const ED25519 = 0x01;
// What Python's `str.isspace()` (and its regex `\s`) calls white space: the key-name and origin
// rules use it, so both sides must agree on exactly this set.
const PY_SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const NAME = new RegExp(`^[^${PY_SPACE}+]+$`, "u");
const STRIPPABLE = new RegExp(`^[${PY_SPACE}]|[${PY_SPACE}]$`, "u");
const SIZE = /^(?:0|[1-9][0-9]{0,18})$/;
// C2SP signed-note: no control characters other than LF anywhere in the note.
const BAD_TEXT = /[\x00-\x09\x0b-\x1f\x7f]/;
const TWO_63 = 1n << 63n;

export class NoteError extends Error {
  readonly code: string;
  constructor(code: string, detail: string) {
    super(`${code}: ${detail}`);
    this.code = code;
  }
}

function keyIdFor(name: string, publicKey: Uint8Array): Uint8Array {
  const digest = createHash("sha256")
    .update(Buffer.from(name, "utf8"))
    .update(Uint8Array.of(0x0a, ED25519))
    .update(publicKey)
    .digest();
  return new Uint8Array(digest.subarray(0, 4));
}

/** A named Ed25519 verifier key of the signed-note format. */
export class NoteKey {
  readonly name: string;
  readonly keyId: Uint8Array;
  readonly publicKey: Uint8Array;
  private readonly key: KeyObject;

  private constructor(name: string, publicKey: Uint8Array) {
    this.name = name;
    this.publicKey = publicKey;
    this.keyId = keyIdFor(name, publicKey);
    try {
      this.key = ed25519PublicKey(publicKey);
    } catch {
      throw new NoteError("vkey-malformed", "not an Ed25519 public key");
    }
  }

  /** The note key called `name` for 32 raw public-key bytes. */
  static forPublic(name: string, publicKey: Uint8Array): NoteKey {
    if (!NAME.test(name) || publicKey.length !== 32) {
      throw new NoteError("vkey-malformed", "a key name has no spaces or '+', a key 32 bytes");
    }
    return new NoteKey(name, publicKey);
  }

  /** Parse `<name>+<hex key id>+<base64(0x01 || key)>`; the key id must match. */
  static fromVkey(vkey: string): NoteKey {
    const trimmed = vkey.replace(new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, "gu"), "");
    const first = trimmed.indexOf("+");
    const second = first < 0 ? -1 : trimmed.indexOf("+", first + 1);
    if (first < 0 || second < 0) throw new NoteError("vkey-malformed", "a vkey is <name>+<key id>+<base64 key>");
    const name = trimmed.slice(0, first);
    const hexId = trimmed.slice(first + 1, second);
    const encoded = trimmed.slice(second + 1);
    if (!NAME.test(name)) throw new NoteError("vkey-malformed", "a vkey is <name>+<key id>+<base64 key>");
    const blob = b64StdDecode(encoded);
    if (blob === null) throw new NoteError("note-malformed", "the vkey's key is not canonical standard base64");
    if (blob.length !== 33 || blob[0] !== ED25519) {
      throw new NoteError("vkey-malformed", "the vkey is not an Ed25519 key (type 0x01)");
    }
    const key = NoteKey.forPublic(name, blob.subarray(1));
    if (hexId !== hex(key.keyId)) throw new NoteError("vkey-malformed", "the vkey's key id does not match its key");
    return key;
  }

  vkey(): string {
    const blob = new Uint8Array(33);
    blob[0] = ED25519;
    blob.set(this.publicKey, 1);
    return `${this.name}+${hex(this.keyId)}+${b64StdEncode(blob)}`;
  }

  verify(message: Uint8Array, signature: Uint8Array): boolean {
    return ed25519Verify(this.key, message, signature);
  }
}

export interface Checkpoint {
  origin: string;
  size: bigint;
  root: Uint8Array;
}

export interface NoteSignature {
  name: string;
  keyId: Uint8Array;
  signature: Uint8Array;
}

export interface ParsedCheckpoint {
  checkpoint: Checkpoint;
  /** The signed text: the three checkpoint lines, each with its LF. */
  text: Uint8Array;
  signatures: NoteSignature[];
}

export interface SignedCheckpoint extends ParsedCheckpoint {
  signer: NoteKey;
}

function decodeNote(note: Uint8Array | string): string {
  if (typeof note === "string") {
    if (!note.isWellFormed()) throw new NoteError("note-malformed", "the note is not UTF-8");
    if (Buffer.byteLength(note, "utf8") > MAX_NOTE_BYTES) {
      throw new NoteError("note-malformed", `the note is over ${MAX_NOTE_BYTES} bytes`);
    }
    return note;
  }
  if (note.length > MAX_NOTE_BYTES) throw new NoteError("note-malformed", `the note is over ${MAX_NOTE_BYTES} bytes`);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(note);
  } catch {
    throw new NoteError("note-malformed", "the note is not UTF-8");
  }
}

function decodeB64(text: string, what: string): Uint8Array {
  const raw = b64StdDecode(text);
  if (raw === null) throw new NoteError("note-malformed", `${what} is not canonical standard base64`);
  return raw;
}

/** Split and parse a signed note holding a checkpoint, without checking any signature. */
export function parseCheckpoint(note: Uint8Array | string): ParsedCheckpoint {
  const whole = decodeNote(note);
  const split = whole.lastIndexOf("\n\n");
  if (split < 0) throw new NoteError("note-malformed", "no blank line between the text and its signatures");
  const text = whole.slice(0, split + 1);
  const sigs = whole.slice(split + 2);
  if (BAD_TEXT.test(whole) || text.includes("\n\n")) {
    throw new NoteError("note-malformed", "control characters or blank lines in the note");
  }
  if (!sigs.endsWith("\n")) throw new NoteError("note-malformed", "the signature lines do not end with a line feed");
  const signatures: NoteSignature[] = [];
  for (const line of sigs.slice(0, -1).split("\n")) {
    if (!line.startsWith(DASH)) throw new NoteError("note-malformed", "a signature line does not start with an em dash");
    const fields = line.slice(DASH.length).split(" ");
    const [name, encoded] = fields;
    if (fields.length !== 2 || name === undefined || encoded === undefined || !NAME.test(name)) {
      throw new NoteError("note-malformed", "a signature line is not '\u2014 <name> <base64>'");
    }
    const blob = decodeB64(encoded, "a signature");
    if (blob.length < 5) throw new NoteError("note-malformed", "a signature is too short");
    signatures.push({ name, keyId: blob.subarray(0, 4), signature: blob.subarray(4) });
    if (signatures.length > MAX_SIGNATURES) throw new NoteError("note-malformed", `more than ${MAX_SIGNATURES} signatures`);
  }
  const lines = text.slice(0, -1).split("\n");
  const [origin, sizeText, rootText] = lines;
  if (lines.length !== 3 || origin === undefined || sizeText === undefined || rootText === undefined) {
    throw new NoteError("checkpoint-malformed", "a checkpoint is origin, size and root hash (no extension lines)");
  }
  if (origin === "" || STRIPPABLE.test(origin)) {
    throw new NoteError("checkpoint-malformed", "the origin line is empty or padded");
  }
  if (!SIZE.test(sizeText) || BigInt(sizeText) >= TWO_63) {
    throw new NoteError("checkpoint-malformed", "the tree size is not a plain decimal number");
  }
  const root = decodeB64(rootText, "the root hash");
  if (root.length !== 32) throw new NoteError("checkpoint-malformed", "the root hash is not 32 bytes");
  return {
    checkpoint: { origin, size: BigInt(sizeText), root },
    text: new Uint8Array(Buffer.from(text, "utf8")),
    signatures,
  };
}

/**
 * The trusted keys of a note: a list, or a function of the checkpoint's origin (a keyring of
 * bare public keys names each of them after the origin: see `PublicKeyring.noteKeys`).
 */
export type NoteKeys = readonly NoteKey[] | ((origin: string) => readonly NoteKey[]);

/**
 * Parse `note` and verify that one of `keys` whose name is the checkpoint's origin signed it.
 * Every signature line by a known key (name and key id) must verify; lines by unknown keys
 * (a witness's cosignature, say) are ignored. With `origin`, the checkpoint must be of that log.
 */
export function openCheckpoint(
  note: Uint8Array | string,
  keys: NoteKeys,
  options: { origin?: string } = {},
): SignedCheckpoint {
  const parsed = parseCheckpoint(note);
  const { checkpoint, text, signatures } = parsed;
  if (options.origin !== undefined && checkpoint.origin !== options.origin) {
    throw new NoteError("origin-mismatch", "the checkpoint is of another log");
  }
  const known = typeof keys === "function" ? keys(checkpoint.origin) : keys;
  let signer: NoteKey | undefined;
  for (const sig of signatures) {
    for (const key of known) {
      if (key.name === sig.name && bytesEqual(key.keyId, sig.keyId)) {
        if (!key.verify(text, sig.signature)) {
          throw new NoteError("signature-invalid", `the signature by ${key.name} is bad`);
        }
        if (key.name === checkpoint.origin && signer === undefined) signer = key;
      }
    }
  }
  if (signer === undefined) throw new NoteError("no-trusted-signature", "no signature by the log's key verifies");
  return { ...parsed, signer };
}
