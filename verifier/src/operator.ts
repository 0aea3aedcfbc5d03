/**
 * The operator's own key: a WebAuthn assertion (`navigator.credentials.get`) over an envelope's
 * approval statement, checked against the credentials the keyring enrolled (the guide, "The
 * operator's signature"). The same checks, in the same order and with the same reason codes, as
 * the Python `guard._operator.check_operator_signature` (W3C WebAuthn Level 2, section 7.2):
 *
 *     credential   -> operator-unknown-credential / operator-credential-removed
 *     encoding     -> operator-malformed          (canonical base64url, authenticatorData of at
 *                                                  least 37 bytes, clientDataJSON a JSON object)
 *     type         -> operator-wrong-type         (clientData.type is webauthn.get)
 *     challenge    -> operator-challenge-mismatch (SHA-256 of *this* envelope's statement)
 *     origin       -> operator-wrong-origin       (the enrolled origin; never cross-origin)
 *     RP id        -> operator-wrong-rp-id        (authenticatorData starts with SHA-256(rpId))
 *     presence     -> operator-not-present        (flag UP)
 *     verification -> operator-not-verified       (flag UV)
 *     sign count   -> operator-sign-count         (above the enrolled count, unless both are 0)
 *     signature    -> operator-signature-invalid  (over authenticatorData || SHA-256(clientDataJSON)
 *                                                  with the enrolled COSE key)
 *
 * The *approval statement* is `{"schema": "pi-operator-guard/approval-statement/v1"}` plus the
 * details' `evidenceId`, `actionKind`, `toolName`, `path`, `scope`, `payloadHash`, `toolCallId`,
 * `createdAtIso`, `expiresAtIso` and `keyId` when present and not `null`; the challenge is
 * SHA-256 of its RFC 8785 (JCS) bytes, so an assertion is bound to exactly one envelope.
 *
 * What the Python side's WebAuthn library also refuses is refused here as
 * `operator-signature-invalid`: a `tokenBinding` object without a `status` of `present` or
 * `supported`; authenticator data that is not exactly its parts (attested credential data when
 * flag AT is set, one CBOR item of extensions when flag ED is set, nothing after them); flag BS
 * (backed up) without BE (backup eligible).
 *
 * Keys: ES256 (-7, EC2 P-256, DER signatures), EdDSA (-8, OKP Ed25519) and RS256 (-257, RSA,
 * PKCS#1 v1.5 with SHA-256); the COSE_Key's `alg` must be the credential's `algorithm`. Node's
 * built-in `crypto` only: keys are imported as JWKs.
 */

import { constants, createHash, createPublicKey, verify, type KeyObject } from "node:crypto";

import { b64UrlBytes, b64UrlEncode, bytesEqual } from "./base64.ts";
import { ed25519PublicKey } from "./ed25519.ts";
import { canonicalBytes } from "./jcs.ts";
import type { JsonObject } from "./json.ts";

export const STATEMENT_SCHEMA = "pi-operator-guard/approval-statement/v1";
/** The envelope details' members an approval statement takes, in this order. */
export const STATEMENT_FIELDS: readonly string[] = [
  "evidenceId",
  "actionKind",
  "toolName",
  "path",
  "scope",
  "payloadHash",
  "toolCallId",
  "createdAtIso",
  "expiresAtIso",
  "keyId",
];

export type CoseAlgorithm = -7 | -8 | -257;
/** ES256, EdDSA (Ed25519) and RS256, as the guard enrols them. */
export const OPERATOR_ALGORITHMS: readonly CoseAlgorithm[] = [-7, -8, -257];

export type OperatorReason =
  | "operator-unknown-credential"
  | "operator-credential-removed"
  | "operator-malformed"
  | "operator-wrong-type"
  | "operator-challenge-mismatch"
  | "operator-wrong-origin"
  | "operator-wrong-rp-id"
  | "operator-not-present"
  | "operator-not-verified"
  | "operator-sign-count"
  | "operator-signature-invalid";
/** Every reason, in the order of the checks. */
export const OPERATOR_REASONS: readonly OperatorReason[] = [
  "operator-unknown-credential",
  "operator-credential-removed",
  "operator-malformed",
  "operator-wrong-type",
  "operator-challenge-mismatch",
  "operator-wrong-origin",
  "operator-wrong-rp-id",
  "operator-not-present",
  "operator-not-verified",
  "operator-sign-count",
  "operator-signature-invalid",
];

/** One enrolled credential of the keyring's `operators` list. */
export interface OperatorCredential {
  credentialId: string;
  /** The COSE_Key, unpadded base64url (decoded when a signature is checked). */
  publicKey: string;
  algorithm: CoseAlgorithm;
  signCount: number;
  label: string;
  rpId: string;
  origin: string;
  status: "active" | "removed";
  enrolledAtIso: string;
  removedAtIso: string | null;
}

/** An envelope's `operatorSignature`: each member unpadded base64url. */
export interface OperatorSignature {
  credentialId: string;
  authenticatorData: string;
  clientDataJson: string;
  signature: string;
}

/** What the operator's signature on one envelope proved: `reason` is `null` when it verified. */
export interface OperatorCheck {
  reason: OperatorReason | null;
  /** The enrolled credential it named, if any. */
  credential: OperatorCredential | null;
  /** The counter the authenticator reported (0 before the counter was read). */
  signCount: number;
}

const UP = 0x01; // authenticator data flags, WebAuthn section 6.1
const UV = 0x04;
const BE = 0x08;
const BS = 0x10;
const AT = 0x40;
const ED = 0x80;

function sha256(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(data).digest());
}

/** The statement an operator signs for the envelope whose signed details are `details`. */
export function approvalStatement(details: JsonObject): JsonObject {
  const statement: JsonObject = { schema: STATEMENT_SCHEMA };
  for (const name of STATEMENT_FIELDS) {
    const value = details[name];
    if (value !== undefined && value !== null) statement[name] = value;
  }
  return statement;
}

/** The WebAuthn challenge for `statement`: SHA-256 of its JCS bytes (32 bytes). */
export function statementChallenge(statement: JsonObject): Uint8Array {
  return sha256(canonicalBytes(statement));
}

// --- CBOR (RFC 8949), only as much as a COSE_Key and authenticator data need ----------------

export class CoseKeyError extends Error {}

const MAX_COSE_ENTRIES = 16;
const MAX_DEPTH = 16;

/** The head of a data item at `pos`: major type, argument, position after the head. */
function head(data: Uint8Array, pos: number): [number, bigint, number] {
  const initial = data[pos];
  if (initial === undefined) throw new CoseKeyError("truncated CBOR");
  const major = initial >> 5;
  const info = initial & 0x1f;
  if (info < 24) return [major, BigInt(info), pos + 1];
  const size = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : info === 27 ? 8 : 0;
  if (size === 0) throw new CoseKeyError("indefinite lengths and reserved values are refused");
  if (pos + 1 + size > data.length) throw new CoseKeyError("truncated CBOR");
  let arg = 0n;
  for (let i = 1; i <= size; i++) arg = (arg << 8n) | BigInt(data[pos + i] as number);
  return [major, arg, pos + 1 + size];
}

function span(data: Uint8Array, start: number, length: bigint): number {
  if (length > BigInt(data.length - start)) throw new CoseKeyError("truncated CBOR");
  return start + Number(length);
}

/**
 * A COSE_Key (RFC 9052, section 7): one definite-length CBOR map whose keys are integers (at
 * most 16, none twice) and whose values are integers or byte strings, and nothing after it.
 * Anything else is refused ({@link CoseKeyError}).
 */
export function decodeCoseKey(data: Uint8Array): Map<number, bigint | Uint8Array> {
  const [major, count, start] = head(data, 0);
  if (major !== 5) throw new CoseKeyError("a COSE_Key is a CBOR map");
  if (count > BigInt(MAX_COSE_ENTRIES)) throw new CoseKeyError("too many COSE_Key entries");
  const out = new Map<number, bigint | Uint8Array>();
  let pos = start;
  for (let i = 0n; i < count; i++) {
    const [keyMajor, keyArg, afterKey] = head(data, pos);
    if ((keyMajor !== 0 && keyMajor !== 1) || keyArg > 0xffffn) throw new CoseKeyError("COSE_Key labels are small integers");
    const label = keyMajor === 0 ? Number(keyArg) : -1 - Number(keyArg);
    if (out.has(label)) throw new CoseKeyError(`label ${label} twice`);
    const [valueMajor, valueArg, afterValue] = head(data, afterKey);
    if (valueMajor === 0) out.set(label, valueArg);
    else if (valueMajor === 1) out.set(label, -1n - valueArg);
    else if (valueMajor === 2) {
      const end = span(data, afterValue, valueArg);
      out.set(label, data.slice(afterValue, end));
      pos = end;
      continue;
    } else throw new CoseKeyError("COSE_Key values are integers or byte strings");
    pos = afterValue;
  }
  if (pos !== data.length) throw new CoseKeyError("bytes after the COSE_Key");
  return out;
}

/**
 * The position after one well-formed CBOR data item at `pos` (definite lengths; integers,
 * byte and UTF-8 text strings, arrays, maps, tags, false, true, null); throws otherwise.
 */
function skipItem(data: Uint8Array, pos: number, depth = 0): number {
  if (depth > MAX_DEPTH) throw new CoseKeyError("CBOR nested too deep");
  const [major, arg, after] = head(data, pos);
  switch (major) {
    case 0:
    case 1:
      return after;
    case 2:
      return span(data, after, arg);
    case 3: {
      const end = span(data, after, arg);
      try {
        new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(data.subarray(after, end));
      } catch {
        throw new CoseKeyError("CBOR text that is not UTF-8");
      }
      return end;
    }
    case 4:
    case 5: {
      const items = major === 4 ? arg : arg * 2n;
      if (items > BigInt(data.length - after)) throw new CoseKeyError("truncated CBOR");
      let next = after;
      for (let i = 0n; i < items; i++) next = skipItem(data, next, depth + 1);
      return next;
    }
    case 6:
      return skipItem(data, after, depth + 1);
    default:
      if (arg >= 20n && arg <= 22n && after === pos + 1) return after; // false, true, null
      throw new CoseKeyError("CBOR floats and other simple values are refused");
  }
}

/** Authenticator data that is exactly its parts: 37 bytes, attested credential data (AT), extensions (ED). */
function authenticatorDataWellFormed(authData: Uint8Array): boolean {
  const flags = authData[32] as number;
  let pos = 37;
  try {
    if (flags & AT) {
      if (authData.length < pos + 18) return false;
      const idLength = ((authData[pos + 16] as number) << 8) | (authData[pos + 17] as number);
      pos = span(authData, pos + 18, BigInt(idLength));
      pos = skipItem(authData, pos);
    }
    if (flags & ED) pos = skipItem(authData, pos);
  } catch (exc) {
    if (exc instanceof CoseKeyError) return false;
    throw exc;
  }
  return pos === authData.length;
}

// --- keys and signatures -------------------------------------------------------------------

/** Big-endian unsigned bytes without leading zeros (a JWK's form); `null` for zero or none. */
function unsigned(raw: Uint8Array): Uint8Array | null {
  let start = 0;
  while (start < raw.length && raw[start] === 0) start++;
  return start === raw.length ? null : raw.subarray(start);
}

/** A P-256 coordinate as exactly 32 bytes (leading zeros added or dropped, as an integer reads). */
function coordinate(raw: Uint8Array): Uint8Array {
  const digits = unsigned(raw) ?? new Uint8Array(0);
  if (digits.length > 32) throw new CoseKeyError("not a P-256 coordinate");
  const out = new Uint8Array(32);
  out.set(digits, 32 - digits.length);
  return out;
}

function integerAt(key: Map<number, bigint | Uint8Array>, label: number): bigint {
  const value = key.get(label);
  if (typeof value !== "bigint") throw new CoseKeyError(`COSE_Key label ${label} is not an integer`);
  return value;
}

function bytesAt(key: Map<number, bigint | Uint8Array>, label: number): Uint8Array {
  const value = key.get(label);
  if (!(value instanceof Uint8Array) || value.length === 0) throw new CoseKeyError(`COSE_Key label ${label} is not a byte string`);
  return value;
}

function bigFrom(raw: Uint8Array): bigint {
  return raw.length === 0 ? 0n : BigInt(`0x${Buffer.from(raw).toString("hex")}`);
}

/**
 * The public key of a COSE_Key for `algorithm`: `kty` 2 with `crv` 1 (P-256) for ES256, `kty`
 * 1 with `crv` 6 (Ed25519) for EdDSA, `kty` 3 for RS256; its `alg` must be `algorithm`. Throws
 * {@link CoseKeyError}.
 */
export function coseKeyObject(cose: Uint8Array, algorithm: CoseAlgorithm): KeyObject {
  const key = decodeCoseKey(cose);
  const kty = integerAt(key, 1);
  if (integerAt(key, 3) !== BigInt(algorithm)) throw new CoseKeyError(`the COSE_Key is not for algorithm ${algorithm}`);
  try {
    if (algorithm === -7) {
      if (kty !== 2n || integerAt(key, -1) !== 1n) throw new CoseKeyError("ES256 needs an EC2 P-256 key");
      const x = b64UrlEncode(coordinate(bytesAt(key, -2)));
      const y = b64UrlEncode(coordinate(bytesAt(key, -3)));
      return createPublicKey({ key: { kty: "EC", crv: "P-256", x, y }, format: "jwk" });
    }
    if (algorithm === -8) {
      if (kty !== 1n || integerAt(key, -1) !== 6n) throw new CoseKeyError("EdDSA needs an OKP Ed25519 key");
      const x = bytesAt(key, -2);
      if (x.length !== 32) throw new CoseKeyError("an Ed25519 key is 32 bytes");
      return ed25519PublicKey(x);
    }
    if (kty !== 3n) throw new CoseKeyError("RS256 needs an RSA key");
    const n = unsigned(bytesAt(key, -1));
    const e = unsigned(bytesAt(key, -2));
    if (n === null || e === null) throw new CoseKeyError("an RSA key's n and e are positive");
    const [nValue, eValue] = [bigFrom(n), bigFrom(e)];
    // What the Python side's `cryptography` requires of RSA public numbers.
    if (eValue < 3n || eValue >= nValue || eValue % 2n === 0n || nValue % 2n === 0n) throw new CoseKeyError("not an RSA public key");
    return createPublicKey({ key: { kty: "RSA", n: b64UrlEncode(n), e: b64UrlEncode(e) }, format: "jwk" });
  } catch (exc) {
    if (exc instanceof CoseKeyError) throw exc;
    throw new CoseKeyError(`the key does not import (${exc instanceof Error ? exc.message : "unknown"})`);
  }
}

/** A signature over `data` by `key` (ES256 DER, EdDSA raw 64 bytes, RS256 PKCS#1 v1.5); never throws. */
export function verifyOperatorSignature(algorithm: CoseAlgorithm, key: KeyObject, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    if (algorithm === -7) return verify("sha256", data, { key, dsaEncoding: "der" }, signature);
    if (algorithm === -8) return signature.length === 64 && verify(null, data, key, signature);
    return verify("sha256", data, { key, padding: constants.RSA_PKCS1_PADDING }, signature);
  } catch {
    return false;
  }
}

// --- the check -----------------------------------------------------------------------------

type ClientData = Record<string, unknown>;

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/** clientDataJSON as a JSON object (UTF-8, a byte order mark skipped as Python's json does); else `null`. */
function clientData(raw: Uint8Array): ClientData | null {
  const bytes = UTF8_BOM.every((b, i) => raw[i] === b) ? raw.subarray(3) : raw;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes));
  } catch {
    return null;
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as ClientData) : null;
}

function check(reason: OperatorReason | null, credential: OperatorCredential | null, signCount = 0): OperatorCheck {
  return { reason, credential, signCount };
}

function firstFailure(client: ClientData, authData: Uint8Array, count: number, challenge: Uint8Array, credential: OperatorCredential): OperatorReason | null {
  if (client["type"] !== "webauthn.get") return "operator-wrong-type";
  if (client["challenge"] !== b64UrlEncode(challenge)) return "operator-challenge-mismatch";
  if (client["origin"] !== credential.origin || client["crossOrigin"] === true) return "operator-wrong-origin";
  if (Object.hasOwn(client, "topOrigin") && client["topOrigin"] !== credential.origin) return "operator-wrong-origin";
  if (!bytesEqual(authData.subarray(0, 32), sha256(new TextEncoder().encode(credential.rpId)))) return "operator-wrong-rp-id";
  const flags = authData[32] as number;
  if (!(flags & UP)) return "operator-not-present";
  if (!(flags & UV)) return "operator-not-verified";
  if ((count !== 0 || credential.signCount !== 0) && count <= credential.signCount) return "operator-sign-count";
  return null;
}

/** What else the Python side's WebAuthn library refuses (all `operator-signature-invalid`). */
function libraryRefuses(client: ClientData, authData: Uint8Array): boolean {
  const binding = client["tokenBinding"];
  if (typeof binding === "object" && binding !== null && !Array.isArray(binding)) {
    const status = (binding as ClientData)["status"];
    if (status !== "present" && status !== "supported") return true;
  }
  if (!authenticatorDataWellFormed(authData)) return true;
  const flags = authData[32] as number;
  return (flags & BS) !== 0 && (flags & BE) === 0;
}

/**
 * Check `signature` against the approval statement of `details` (an envelope's signed details,
 * as they arrived) and the enrolled `credentials` (by credential id); see the module comment.
 * Never throws.
 */
export function checkOperatorSignature(
  details: JsonObject,
  signature: OperatorSignature,
  credentials: ReadonlyMap<string, OperatorCredential>,
): OperatorCheck {
  const credential = credentials.get(signature.credentialId);
  if (credential === undefined) return check("operator-unknown-credential", null);
  if (credential.status !== "active") return check("operator-credential-removed", credential);
  const authData = b64UrlBytes(signature.authenticatorData);
  const clientBytes = b64UrlBytes(signature.clientDataJson);
  if (authData === null || clientBytes === null || authData.length < 37) return check("operator-malformed", credential);
  const sig = b64UrlBytes(signature.signature);
  if (sig === null || b64UrlBytes(signature.credentialId) === null) return check("operator-malformed", credential);
  const client = clientData(clientBytes);
  if (client === null) return check("operator-malformed", credential);
  const count = Buffer.from(authData).readUInt32BE(33);
  const challenge = statementChallenge(approvalStatement(details));
  const failed = firstFailure(client, authData, count, challenge, credential);
  if (failed !== null) return check(failed, credential, count);
  if (libraryRefuses(client, authData)) return check("operator-signature-invalid", credential, count);
  const cose = b64UrlBytes(credential.publicKey);
  let key: KeyObject;
  try {
    if (cose === null) throw new CoseKeyError("the public key is not canonical base64url");
    key = coseKeyObject(cose, credential.algorithm);
  } catch (exc) {
    if (exc instanceof CoseKeyError) return check("operator-signature-invalid", credential, count);
    throw exc;
  }
  const signed = new Uint8Array(authData.length + 32);
  signed.set(authData);
  signed.set(sha256(clientBytes), authData.length);
  if (!verifyOperatorSignature(credential.algorithm, key, signed, sig)) return check("operator-signature-invalid", credential, count);
  return check(null, credential, count);
}
