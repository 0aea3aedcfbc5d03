/**
 * RFC 9162 section 2.1 Merkle tree hashing and proof verification (SHA-256).
 *
 * leaf hash = SHA-256(0x00 || leaf), node hash = SHA-256(0x01 || left || right); the tree of
 * n leaves splits at the largest power of two below n. Indices and sizes are `bigint` (a tree
 * size is below 2**63). Failures throw {@link ProofError} with the reason codes the Python side
 * uses: `index-out-of-range`, `size-out-of-range`, `proof-too-long`, `proof-too-short`,
 * `root-mismatch`, `old-root-mismatch` (and `proof-malformed` for a leaf hash that is not 32 bytes).
 */

import { createHash } from "node:crypto";

import { bytesEqual } from "./base64.ts";

export class ProofError extends Error {
  readonly code: string;
  constructor(code: string, detail: string) {
    super(`${code}: ${detail}`);
    this.code = code;
  }
}

function sha256(...parts: Uint8Array[]): Uint8Array {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
}

/** MTH({}) = SHA-256 of the empty string. */
export const EMPTY_ROOT: Uint8Array = sha256();

export function leafHash(leaf: Uint8Array): Uint8Array {
  return sha256(Uint8Array.of(0), leaf);
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256(Uint8Array.of(1), left, right);
}

function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH over already-hashed leaves (RFC 9162 section 2.1.1). */
export function rootOf(leaves: readonly Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return EMPTY_ROOT;
  return subtree(leaves, 0, leaves.length);
}

function subtree(leaves: readonly Uint8Array[], start: number, end: number): Uint8Array {
  if (end - start === 1) {
    const leaf = leaves[start];
    if (leaf === undefined) throw new RangeError("leaf index");
    return leaf;
  }
  const k = split(end - start);
  return nodeHash(subtree(leaves, start, start + k), subtree(leaves, start + k, end));
}

/** RFC 9162 section 2.1.3.2: `leaf` is at `index` in the tree of `size` leaves with `root`. */
export function verifyInclusion(
  index: bigint,
  size: bigint,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): void {
  if (index < 0n || index >= size) {
    throw new ProofError("index-out-of-range", `leaf ${index} is not in a tree of ${size}`);
  }
  // As the reference (transparency-dev/merkle) does: a leaf hash is a SHA-256 hash.
  if (leaf.length !== 32) throw new ProofError("proof-malformed", "the leaf hash is not 32 bytes");
  let fn = index;
  let sn = size - 1n;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) throw new ProofError("proof-too-long", "the inclusion proof has extra hashes");
    if ((fn & 1n) === 1n || fn === sn) {
      r = nodeHash(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new ProofError("proof-too-short", "the inclusion proof is missing hashes");
  if (!bytesEqual(r, root)) throw new ProofError("root-mismatch", "the inclusion proof leads to a different root");
}

/** RFC 9162 section 2.1.4.2: the tree (`newSize`, `newRoot`) extends (`oldSize`, `oldRoot`). */
export function verifyConsistency(
  oldSize: bigint,
  newSize: bigint,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): void {
  if (oldSize < 1n || oldSize > newSize) {
    throw new ProofError("size-out-of-range", `no consistency from size ${oldSize} to size ${newSize}`);
  }
  if (oldSize === newSize) {
    if (proof.length > 0) throw new ProofError("proof-too-long", "equal sizes need an empty proof");
    if (!bytesEqual(oldRoot, newRoot)) throw new ProofError("root-mismatch", "equal sizes with different roots");
    return;
  }
  if (proof.length === 0) throw new ProofError("proof-too-short", "the consistency proof is empty");
  // Step 1: if the old size is an exact power of two, prepend the old root to the path.
  const path = (oldSize & (oldSize - 1n)) === 0n ? [oldRoot, ...proof] : [...proof];
  let fn = oldSize - 1n;
  let sn = newSize - 1n;
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  const first = path[0];
  if (first === undefined) throw new ProofError("proof-too-short", "the consistency proof is empty");
  let fr = first;
  let sr = first;
  for (const c of path.slice(1)) {
    if (sn === 0n) throw new ProofError("proof-too-long", "the consistency proof has extra hashes");
    if ((fn & 1n) === 1n || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new ProofError("proof-too-short", "the consistency proof is missing hashes");
  if (!bytesEqual(fr, oldRoot)) throw new ProofError("old-root-mismatch", "the proof does not lead to the old root");
  if (!bytesEqual(sr, newRoot)) throw new ProofError("root-mismatch", "the proof does not lead to the new root");
}
