"""A checkpoint the guard really wrote, verified by independent implementations.

``pi-guard`` (real processes) keeps a log; its signed head ``audit.jsonl.head`` is a C2SP
checkpoint. The TypeScript verifier opens it (with the log's vkey, and with nothing but the
public keyring), and so does aics-tlog, an existing C2SP library; proofs that every record is
in it, and that an earlier head is a prefix of it, verify in the TypeScript verifier and in
aics-tlog. One edited byte in a record and the proof of that record fails.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import aics_tlog
import pytest

from audit.tlog import NoteKey, consistency_proof, inclusion_proof, leaf_hash, origin_for, root_of
from tests.cli_runner import invoke
from tools.pi.harness import ensure_pi

# Node >= 22 comes from npm (.cache/node) when the machine's is older: not in make check.
pytestmark = pytest.mark.npm

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "verifier" / "src" / "cli.ts"
SCHEMA = "pi-operator-guard/proof/v1"


def _guard(home: Path, *args: str) -> None:
    done = invoke(*args, home=home, env={**os.environ, "PI_OPERATOR_GUARD_HOME": ""})
    assert done.returncode == 0, done.stderr


def _record(home: Path, cwd: Path, command: str, answer: str) -> None:
    _guard(
        home,
        "record",
        "--tool",
        "bash",
        "--input",
        json.dumps({"command": command}),
        "--cwd",
        str(cwd),
        answer,
    )


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("guard")
    home, cwd = root / "home", root / "work"
    cwd.mkdir()
    _guard(home, "keygen")
    _record(home, cwd, "rm -rf build", "--confirmed")
    old_head = (home / "audit.jsonl.head").read_bytes()
    _record(home, cwd, "git push --force", "--declined")
    _record(home, cwd, "rm -rf dist", "--confirmed")
    lines = (home / "audit.jsonl").read_bytes().decode().splitlines()
    origin = origin_for(json.loads(lines[0])["data"]["logId"])
    keyring = json.loads((home / "keyring.json").read_text())
    (active,) = [k for k in keyring["keys"] if k["status"] == "active"]
    public = base64.urlsafe_b64decode(active["publicKey"] + "=")
    return {
        "home": home,
        "lines": lines,
        "origin": origin,
        "vkey": NoteKey.for_public(origin, public).vkey(),
        "head": (home / "audit.jsonl.head").read_bytes(),
        "old_head": old_head,
    }


@pytest.fixture(scope="module")
def node() -> Path:
    return ensure_pi(REPO, "current").node


def _cli(node: Path, *args: str, stdin: str | None = None) -> tuple[int, Any]:
    done = subprocess.run(
        [str(node), str(CLI), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else done.stderr


def test_the_guards_head_is_a_checkpoint_over_its_records(node: Path, home: dict[str, Any]) -> None:
    leaves = [leaf_hash(line.encode()) for line in home["lines"]]
    head = str(home["home"] / "audit.jsonl.head")
    for keys in (["--key", home["vkey"]], ["--keyring", str(home["home"] / "keyring.json")]):
        status, out = _cli(node, "verify-checkpoint", head, *keys, "--origin", home["origin"])
        assert status == 0, out
        assert out["treeSize"] == len(home["lines"])
        assert out["vkey"] == home["vkey"]
        assert out["root"] == base64.b64encode(root_of(leaves)).decode()
        assert out["signer"] == out["origin"] == home["origin"]


def test_aics_tlog_verifies_the_guards_head(home: dict[str, Any]) -> None:
    key = aics_tlog.parse_vkey(home["vkey"])
    note = aics_tlog.parse_note(home["head"])
    result = aics_tlog.verify_checkpoint(note, key, expected_origin=home["origin"])
    assert result.ok, result.error
    assert result.size == len(home["lines"])


def _inclusion(home: dict[str, Any], lines: list[str]) -> str:
    leaves = [leaf_hash(line.encode()) for line in home["lines"]]
    entries = [
        {
            "leafIndex": i,
            "line": line,
            "hashes": [base64.b64encode(h).decode() for h in inclusion_proof(leaves, i)],
        }
        for i, line in enumerate(lines)
    ]
    return json.dumps(
        {
            "schema": SCHEMA,
            "kind": "inclusion",
            "checkpoint": home["head"].decode(),
            "entries": entries,
        }
    )


def test_every_record_is_proven_in_the_guards_checkpoint(node: Path, home: dict[str, Any]) -> None:
    status, out = _cli(
        node, "verify-proof", "-", "--key", home["vkey"], stdin=_inclusion(home, home["lines"])
    )
    assert status == 0, out
    assert [e["leafIndex"] for e in out["entries"]] == list(range(len(home["lines"])))
    assert out["entries"][0]["event"] == "log.created"
    assert any(e["evidenceId"] for e in out["entries"])
    vkey = home["vkey"]
    edited = [*home["lines"]]
    edited[2] = edited[2].replace('"seq":2', '"seq": 2', 1)  # no longer canonical
    status, out = _cli(node, "verify-proof", "-", "--key", vkey, stdin=_inclusion(home, edited))
    assert (status, out["reasons"]) == (4, ["record-malformed-line"])
    assert [e["valid"] for e in out["entries"]][:4] == [True, True, False, True]
    moved = [*home["lines"]]
    moved[2] = moved[3]  # a genuine record, at another place
    status, out = _cli(node, "verify-proof", "-", "--key", vkey, stdin=_inclusion(home, moved))
    assert (status, out["reasons"]) == (4, ["leaf-mismatch"])


def test_the_earlier_head_is_a_prefix_of_the_later(node: Path, home: dict[str, Any]) -> None:
    leaves = [leaf_hash(line.encode()) for line in home["lines"]]
    old_size = int(home["old_head"].split(b"\n")[1])
    assert 0 < old_size < len(leaves)
    hashes = [base64.b64encode(h).decode() for h in consistency_proof(leaves, old_size)]
    proof = {
        "schema": SCHEMA,
        "kind": "consistency",
        "old": home["old_head"].decode(),
        "new": home["head"].decode(),
        "hashes": hashes,
    }
    status, out = _cli(
        node,
        "verify-proof",
        "-",
        "--keyring",
        str(home["home"] / "keyring.json"),
        stdin=json.dumps(proof),
    )
    assert status == 0, out
    rollback = {**proof, "old": proof["new"], "new": proof["old"]}
    status, out = _cli(node, "verify-proof", "-", "--key", home["vkey"], stdin=json.dumps(rollback))
    assert (status, out["reasons"]) == (4, ["size-out-of-range"])
    old = aics_tlog.parse_checkpoint(aics_tlog.parse_note(home["old_head"]).text)
    new = aics_tlog.parse_checkpoint(aics_tlog.parse_note(home["head"]).text)
    raw = [base64.b64decode(h) for h in hashes]
    assert aics_tlog.verify_consistency(old.size, new.size, old.root, new.root, raw)


def _pi_guard(home: Path, *args: str) -> str:
    done = invoke(*args, home=home)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_guards_own_proof_files_verify_and_both_sides_say_the_same(
    node: Path, home: dict[str, Any], tmp_path: Path
) -> None:
    """``pi-guard audit prove`` / ``prove-consistency`` files, checked by both verifiers."""
    guard_home = home["home"]
    assert _pi_guard(guard_home, "audit", "checkpoint", "--vkey").strip() == home["vkey"]
    assert _pi_guard(guard_home, "audit", "checkpoint").encode() == home["head"]
    evidence = {json.loads(line)["data"].get("evidenceId") for line in home["lines"]} - {None}
    assert evidence
    old = tmp_path / "old.checkpoint"
    old.write_bytes(home["old_head"])
    files = []
    for n, evidence_id in enumerate(sorted(evidence)):
        out = tmp_path / f"inclusion-{n}.json"
        _pi_guard(guard_home, "audit", "prove", str(evidence_id), "--out", str(out))
        files.append(out)
    consistency = tmp_path / "consistency.json"
    _pi_guard(guard_home, "audit", "prove-consistency", str(old), "--out", str(consistency))
    files.append(consistency)
    # ... and each broken one way: a record edited, a hash flipped.
    inclusion = json.loads(files[0].read_text())
    inclusion["entries"][0]["line"] = inclusion["entries"][0]["line"].replace("bash", "sh", 1)
    (tmp_path / "edited.json").write_text(json.dumps(inclusion))
    files.append(tmp_path / "edited.json")
    flipped = json.loads(consistency.read_text())
    first = base64.b64decode(flipped["hashes"][0])
    flipped["hashes"][0] = base64.b64encode(bytes([first[0] ^ 1]) + first[1:]).decode()
    (tmp_path / "flipped.json").write_text(json.dumps(flipped))
    files.append(tmp_path / "flipped.json")
    decisions = []
    for path in files:
        python = json.loads(
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "guard",
                    "audit",
                    "verify-proof",
                    str(path),
                    "--key",
                    home["vkey"],
                    "--json",
                ],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            ).stdout
        )
        status, typescript = _cli(node, "verify-proof", str(path), "--key", home["vkey"])
        assert status == (0 if python["decision"] == "valid" else 4)
        python.pop("detail")
        assert typescript == python, path.name
        decisions.append(python["decision"])
    assert decisions == ["valid"] * (len(files) - 2) + ["invalid", "invalid"]
