/**
 * An independent verifier, in TypeScript with Node's built-in `crypto` only, of what
 * pi-operator-guard writes: evidence envelopes (RFC 8785 JCS + Ed25519, and the operator's own
 * WebAuthn signature when they carry one), checkpoints (C2SP
 * signed notes), RFC 9162 inclusion and consistency proofs and the guard's proof files.
 */

export { b64StdDecode, b64StdEncode, b64UrlBytes, b64UrlDecode, b64UrlEncode, bytesEqual, hex } from "./base64.ts";
export { ed25519PublicKey, ed25519Verify } from "./ed25519.ts";
export {
  APPROVERS,
  DEFAULT_SKEW_SECONDS,
  EVIDENCE_CUSTOM_TYPE,
  EVIDENCE_SCHEMA,
  GRANT_ORIGIN,
  MAX_ENVELOPE_BYTES,
  MAX_GRANT_USES,
  MAX_TTL_SECONDS,
  ORIGINS,
  TRUSTED_ORIGINS,
  parseEnvelope,
  signingMessage,
  verifyEnvelope,
  type EnvelopeDecision,
  type EnvelopeOptions,
  type EnvelopeResult,
  type OperatorSigned,
} from "./envelope.ts";
export { CanonicalizationError, canonicalBytes, canonicalize, serializeNumber } from "./jcs.ts";
export { JsonInputError, isJsonObject, loadJson, type JsonObject, type JsonValue } from "./json.ts";
export { KeyringError, PublicKeyring, RETIRED_KEY_GRACE_SECONDS, evidenceKeyId, type KeyringKey } from "./keyring.ts";
export { verifyLog, type LogResult } from "./log.ts";
export {
  CoseKeyError,
  OPERATOR_ALGORITHMS,
  OPERATOR_REASONS,
  STATEMENT_FIELDS,
  STATEMENT_SCHEMA,
  approvalStatement,
  checkOperatorSignature,
  coseKeyObject,
  decodeCoseKey,
  statementChallenge,
  verifyOperatorSignature,
  type CoseAlgorithm,
  type OperatorCheck,
  type OperatorCredential,
  type OperatorReason,
  type OperatorSignature,
} from "./operator.ts";
export { EMPTY_ROOT, ProofError, leafHash, nodeHash, rootOf, verifyConsistency, verifyInclusion } from "./merkle.ts";
export {
  MAX_NOTE_BYTES,
  NoteError,
  NoteKey,
  ORIGIN_PREFIX,
  openCheckpoint,
  parseCheckpoint,
  type Checkpoint,
  type NoteKeys,
  type NoteSignature,
  type ParsedCheckpoint,
  type SignedCheckpoint,
} from "./note.ts";
export { PROOF_SCHEMA, verifyProofFile, type EntryResult, type ProofResult } from "./proof.ts";
export { RecordFault, checkRecordLine } from "./record.ts";
export { formatIsoMillis, parseIsoMillis } from "./time.ts";
