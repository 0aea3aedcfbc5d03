"""Differential tests: the Python side and the TypeScript verifier on thousands of mutants.

Every valid shared vector (checkpoints, proof files, envelopes) is mutated at random — a
character deleted, doubled or replaced by one of the characters these formats are made of or
fail on, two lines swapped, a number changed — and both implementations must give the same
decision and reason code on every mutant, not only on the vectors someone thought of. The seed
is fixed (``VERIFIER_FUZZ_SEED`` picks another; ``VERIFIER_FUZZ_SCALE`` multiplies the count).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.audit.tlog_vectors import checkpoint_result, proof_result
from tests.audit.tlog_vectors import load as load_tlog
from tests.guard.evidence.envelope_vectors import envelope_result, keyring
from tests.guard.evidence.envelope_vectors import load as load_envelopes
from tools.pi.harness import ensure_pi

REPO = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("VERIFIER_FUZZ_SEED", "14"))
SCALE = int(os.environ.get("VERIFIER_FUZZ_SCALE", "1"))
PER_VECTOR = 40 * SCALE

NOTE_CHARS = [
    "\n",
    " ",
    "\u2014",
    "+",
    "/",
    "=",
    "0",
    "1",
    "9",
    "A",
    "a",
    "\r",
    "\t",
    "\x00",
    "\x7f",
    "\u00a0",
    "\u0085",
    "\u2028",
    "\ufeff",
    "-",
    "_",
    "\u0663",
    "\n\n",
]
JSON_CHARS = [
    '"',
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "0",
    "1",
    "-",
    " ",
    "e",
    ".",
    "\\",
    "u",
    "n",
    "t",
    "\u0000",
    "\u00e9",
    "\U0001f600",
    "\\u0000",
    "\\ud800",
    "NaN",
    "1e999",
]


def _mutate(text: str, rng: random.Random, chars: list[str]) -> str:
    if not text:
        return rng.choice(chars)
    op = rng.randrange(6)
    i = rng.randrange(len(text))
    if op == 0:
        return text[:i] + text[i + 1 :]
    if op == 1:
        return text[:i] + text[i] + text[i:]
    if op == 2:
        return text[:i] + rng.choice(chars) + text[i + 1 :]
    if op == 3:
        return text[:i] + rng.choice(chars) + text[i:]
    if op == 4:
        lines = text.split("\n")
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[a], lines[b] = lines[b], lines[a]
        return "\n".join(lines)
    digits = [k for k, ch in enumerate(text) if ch.isdigit()]
    if not digits:
        return text
    k = rng.choice(digits)
    return text[:k] + str((int(text[k]) + rng.randrange(1, 10)) % 10) + text[k + 1 :]


def _cases() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    cases: list[dict[str, Any]] = []
    for v in load_tlog("checkpoints.json")["vectors"]:
        if v["expected"]["decision"] == "verified" and "note" in v and len(v["note"]) < 4096:
            for _ in range(PER_VECTOR):
                note = v["note"]
                for _ in range(rng.randrange(1, 3)):
                    note = _mutate(note, rng, NOTE_CHARS)
                cases.append({**v, "type": "checkpoint", "note": note})
    for v in load_tlog("proofs.json")["vectors"]:
        if v["expected"]["decision"] == "valid":
            for _ in range(PER_VECTOR // 2):
                cases.append({**v, "type": "proof", "file": _mutate(v["file"], rng, JSON_CHARS)})
            for _ in range(PER_VECTOR // 2):
                proof = json.loads(v["file"])
                inner = "checkpoint" if proof["kind"] == "inclusion" else rng.choice(["old", "new"])
                proof[inner] = _mutate(proof[inner], rng, NOTE_CHARS)
                cases.append({**v, "type": "proof", "file": json.dumps(proof, ensure_ascii=False)})
    for v in load_envelopes()["vectors"]:
        if v["expected"]["decision"] == "match" and "envelope" in v and len(v["envelope"]) < 4096:
            for _ in range(PER_VECTOR // 2):
                cases.append(
                    {**v, "type": "envelope", "envelope": _mutate(v["envelope"], rng, JSON_CHARS)}
                )
    return cases


def _python(case: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    if case["type"] == "checkpoint":
        return checkpoint_result(case)
    if case["type"] == "proof":
        return proof_result(case)
    return envelope_result(case, keyring(load_envelopes()), tmp_path)


@pytest.mark.npm  # Node >= 22 comes from npm when the machine's is older
def test_both_implementations_agree_on_every_mutant(tmp_path: Path) -> None:
    cases = _cases()
    node = ensure_pi(REPO, "current").node
    done = subprocess.run(
        [str(node), "verifier/test/answer.ts"],
        cwd=REPO,
        input=json.dumps({"keyring": load_envelopes()["keyring"], "cases": cases}),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    typescript = json.loads(done.stdout)
    assert len(typescript) == len(cases) > 1000
    disagreements = []
    outcomes: Counter[str] = Counter()
    for case, ts in zip(cases, typescript, strict=True):
        py = _python(case, tmp_path)
        outcomes[f"{case['type']}:{py['decision']}:{','.join(py['reasons'])}"] += 1
        if py != ts:
            disagreements.append(
                (
                    case["type"],
                    case["id"],
                    py,
                    ts,
                    case.get("note") or case.get("file") or case.get("envelope"),
                )
            )
    assert not disagreements, "\n".join(repr(d)[:600] for d in disagreements[:10])
    # The mutants reach far more than one outcome of each kind.
    kinds = {k.split(":")[0] for k in outcomes}
    assert kinds == {"checkpoint", "proof", "envelope"}
    assert len(outcomes) >= 20, outcomes
