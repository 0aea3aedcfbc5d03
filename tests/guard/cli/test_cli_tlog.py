"""``audit checkpoint|prove|prove-consistency|verify-proof|anchor`` and ``verify --against``
(in process, ``tests.cli_runner``): outputs, exit codes, and the attacks each must catch."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.guard.cli.test_cli import RM, one_line_error, record, run

pytestmark = pytest.mark.integration


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "project"
    p.mkdir()
    return p


def consume(home: Path, project: Path, envelope: dict[str, Any]) -> None:
    proc = run(
        home,
        "consume",
        "--envelope",
        "-",
        "--tool",
        "bash",
        "--input",
        RM,
        "--cwd",
        str(project),
        stdin=json.dumps(envelope),
    )
    assert proc.returncode == 0, proc.stderr


def _log(home: Path) -> Path:
    return home / "audit.jsonl"


def _approved(home: Path, project: Path) -> str:
    recorded = record(home, project)
    consume(home, project, recorded["envelope"])
    return str(recorded["evidenceId"])


def test_checkpoint_prints_the_signed_note_and_its_vkey(home: Path, project: Path) -> None:
    _approved(home, project)
    note = run(home, "audit", "checkpoint")
    assert note.returncode == 0, note.stderr
    lines = note.stdout.split("\n")
    assert lines[0].startswith("pi-operator-guard/audit/log_")
    assert int(lines[1]) == len(_log(home).read_bytes().splitlines())
    assert lines[3] == ""
    assert lines[4].startswith("\u2014 " + lines[0] + " ")
    vkey = run(home, "audit", "checkpoint", "--vkey").stdout.strip()
    assert vkey.startswith(lines[0] + "+")
    as_json = json.loads(run(home, "audit", "checkpoint", "--json").stdout)
    assert (as_json["treeSize"], as_json["vkey"], as_json["note"]) == (
        int(lines[1]),
        vkey,
        note.stdout,
    )


def test_prove_and_verify_proof_with_only_the_vkey(
    home: Path, project: Path, tmp_path: Path
) -> None:
    evidence = _approved(home, project)
    vkey = tmp_path / "log.vkey"
    vkey.write_text(run(home, "audit", "checkpoint", "--vkey").stdout)
    proof = tmp_path / "proof.json"
    made = run(home, "audit", "prove", evidence, "--out", str(proof))
    assert made.returncode == 0, made.stderr
    assert "confirmation.recorded" in made.stdout and "evidence.consumed" in made.stdout
    # an auditor with nothing but the proof file and the vkey (no home, no log)
    elsewhere = tmp_path / "auditor"
    elsewhere.mkdir()
    checked = run(elsewhere / "none", "audit", "verify-proof", str(proof), "--key", str(vkey))
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.startswith("valid: inclusion: 2 record(s)")
    inline = run(elsewhere / "none", "audit", "verify-proof", str(proof), "--key", vkey.read_text())
    assert inline.returncode == 0
    result = json.loads(
        run(
            elsewhere / "none", "audit", "verify-proof", str(proof), "--key", str(vkey), "--json"
        ).stdout
    )
    assert [e["event"] for e in result["entries"]] == ["confirmation.recorded", "evidence.consumed"]
    assert {e["evidenceId"] for e in result["entries"]} == {evidence}


def _edited(proof: Path, target: Path, edit: Any) -> Path:
    data = json.loads(proof.read_text())
    edit(data)
    target.write_text(json.dumps(data))
    return target


def _swap_hash(data: dict[str, Any]) -> None:
    h = data["entries"][0]["hashes"][0]
    data["entries"][0]["hashes"][0] = ("A" if h[0] != "A" else "B") + h[1:]


def _other_line(data: dict[str, Any]) -> None:
    data["entries"][0]["line"] = data["entries"][0]["line"].replace("destructive", "local-safe")


def _other_index(data: dict[str, Any]) -> None:
    data["entries"][0]["leafIndex"] += 1


def _drop_hash(data: dict[str, Any]) -> None:
    data["entries"][0]["hashes"].pop()


def _other_size(data: dict[str, Any]) -> None:
    lines = data["checkpoint"].split("\n")
    lines[1] = str(int(lines[1]) + 1)
    data["checkpoint"] = "\n".join(lines)


def _forged_line(data: dict[str, Any]) -> None:
    # the same leaf index, a record written without the key (its own hash recomputed)
    from audit.wire import canonical_json, sha256_prefixed

    rec = json.loads(data["entries"][0]["line"])
    rec["data"]["toolName"] = "write"
    body = {k: v for k, v in rec.items() if k != "hash"}
    rec["hash"] = sha256_prefixed(canonical_json(body))
    data["entries"][0]["line"] = canonical_json(rec).decode()


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (_swap_hash, "root-mismatch"),
        (_other_line, "record-hash-mismatch"),
        (_forged_line, "root-mismatch"),
        (_other_index, "leaf-mismatch"),
        (_drop_hash, "proof-too-short"),
        (_other_size, "signature-invalid"),
    ],
)
def test_a_doctored_proof_is_invalid(
    home: Path, project: Path, tmp_path: Path, edit: Any, reason: str
) -> None:
    evidence = _approved(home, project)
    vkey = run(home, "audit", "checkpoint", "--vkey").stdout.strip()
    proof = tmp_path / "proof.json"
    assert run(home, "audit", "prove", evidence, "--out", str(proof)).returncode == 0
    bad = _edited(proof, tmp_path / "bad.json", edit)
    checked = run(home, "audit", "verify-proof", str(bad), "--key", vkey, "--json")
    assert checked.returncode == 4, checked.stderr
    assert reason in json.loads(checked.stdout)["reasons"]


def test_a_proof_checked_with_another_logs_key_is_invalid(
    home: Path, project: Path, tmp_path: Path
) -> None:
    evidence = _approved(home, project)
    proof = tmp_path / "proof.json"
    assert run(home, "audit", "prove", evidence, "--out", str(proof)).returncode == 0
    other = tmp_path / "other"
    _approved(other, project)
    other_vkey = run(other, "audit", "checkpoint", "--vkey").stdout.strip()
    checked = run(home, "audit", "verify-proof", str(proof), "--key", other_vkey, "--json")
    assert checked.returncode == 4
    assert json.loads(checked.stdout)["reasons"] == ["no-trusted-signature"]


@pytest.mark.parametrize(
    ("content", "key", "what"),
    [
        ("not json", None, "JSON"),
        ('{"kind": "other"}', None, "not a proof file"),
        ('{"schema": "pi-operator-guard/proof/v1", "kind": "inclusion"}', None, "checkpoint"),
        (None, "nonsense-without-plus", "--key"),
        (None, "name+00000000+AAAA", "vkey"),
    ],
)
def test_bad_proof_files_and_keys_are_one_line_exit_2(
    home: Path, project: Path, tmp_path: Path, content: str | None, key: str | None, what: str
) -> None:
    evidence = _approved(home, project)
    proof = tmp_path / "proof.json"
    assert run(home, "audit", "prove", evidence, "--out", str(proof)).returncode == 0
    if content is not None:
        proof.write_text(content)
    vkey = key if key is not None else run(home, "audit", "checkpoint", "--vkey").stdout.strip()
    checked = run(home, "audit", "verify-proof", str(proof), "--key", vkey)
    assert checked.returncode == 2, checked.stdout
    assert what in one_line_error(checked)


def test_prove_an_unknown_evidence_id_is_exit_2(home: Path, project: Path) -> None:
    _approved(home, project)
    proc = run(home, "audit", "prove", "oce_" + "x" * 22)
    assert proc.returncode == 2
    assert "no record in the log names it" in one_line_error(proc)


def test_prove_over_a_tampered_log_is_exit_4(home: Path, project: Path) -> None:
    evidence = _approved(home, project)
    log = _log(home)
    log.write_bytes(log.read_bytes().replace(b"destructive", b"local-safe", 1))
    proc = run(home, "audit", "prove", evidence)
    assert proc.returncode == 4
    assert "no proof" in proc.stderr


def _put(log: Path, head: Path, content: bytes, note: bytes) -> None:
    log.write_bytes(content)
    head.write_bytes(note)


def _resigned_fork(home: Path, content: bytes) -> tuple[bytes, bytes]:
    """The key holder rewrites record 2 and re-signs: same log id, another history."""
    from audit.tlog import Checkpoint, leaf_hash, root_of, sign_checkpoint
    from audit.wire import canonical_json, sha256_prefixed
    from guard.evidence import KeyStore

    signer = KeyStore.open(home).load_signer()
    records = [json.loads(line) for line in content.splitlines()]
    records[2]["data"]["toolName"] = "write"
    out = []
    prev = records[0]["prev"]
    for rec in records:
        body = {k: v for k, v in rec.items() if k != "hash"} | {"prev": prev}
        prev = sha256_prefixed(canonical_json(body))
        out.append(canonical_json({**body, "hash": prev}))
    origin = "pi-operator-guard/audit/" + records[0]["data"]["logId"]
    checkpoint = Checkpoint(origin, len(out), root_of([leaf_hash(line) for line in out]))
    note = sign_checkpoint(checkpoint, signer.public_key, signer.sign)
    return b"".join(line + b"\n" for line in out), note


def test_verify_against_catches_rollback_fork_truncation_and_edits(
    home: Path, project: Path, tmp_path: Path
) -> None:
    _approved(home, project)
    log, head = _log(home), home / "audit.jsonl.head"
    old_log, old_head = log.read_bytes(), head.read_bytes()
    _approved(home, project)
    new_log, new_head = log.read_bytes(), head.read_bytes()
    kept_old = tmp_path / "old.checkpoint"
    kept_old.write_bytes(old_head)
    kept_new = tmp_path / "new.checkpoint"
    kept_new.write_bytes(new_head)
    ok = run(home, "audit", "verify", "--against", str(kept_old))
    assert ok.returncode == 0, ok.stdout
    old_size = old_head.split(b"\n")[1].decode()
    assert f"extends the checkpoint of {old_size} records" in ok.stdout

    def verdict(kept: Path) -> tuple[int, str | None]:
        proc = run(home, "audit", "verify", "--against", str(kept), "--json")
        return proc.returncode, json.loads(proc.stdout)["fault"]

    # rollback: log and head together put back to the older signed state
    _put(log, head, old_log, old_head)
    assert run(home, "audit", "verify").returncode == 0  # alone it looks fine
    assert verdict(kept_new) == (4, "rolled-back")
    # fork: the key holder rewrote history and re-signed a checkpoint of the same log
    forked_log, forked_note = _resigned_fork(home, new_log)
    _put(log, head, forked_log, forked_note)
    assert run(home, "audit", "verify").returncode == 0  # alone it looks fine
    assert verdict(kept_old) == (4, "checkpoint-fork")
    # a single record edited under the current head
    _put(log, head, new_log.replace(b"destructive", b"local-safe", 1), new_head)
    assert verdict(kept_old) == (4, "hash-mismatch")
    # truncation of the log only
    _put(log, head, b"".join(new_log.splitlines(keepends=True)[:-2]), new_head)
    assert verdict(kept_old) == (4, "records-missing-at-end")
    # back to the real state
    _put(log, head, new_log, new_head)
    assert verdict(kept_old) == (0, None)
    assert verdict(kept_new) == (0, None)


def test_verify_against_a_bad_checkpoint_file(home: Path, project: Path, tmp_path: Path) -> None:
    _approved(home, project)
    missing = run(home, "audit", "verify", "--against", str(tmp_path / "nope"))
    assert missing.returncode == 2
    assert "--against" in one_line_error(missing)
    garbage = tmp_path / "garbage"
    garbage.write_text("not a note")
    proc = run(home, "audit", "verify", "--against", str(garbage), "--json")
    assert proc.returncode == 4
    assert json.loads(proc.stdout)["fault"] == "checkpoint-untrusted"


def test_anchor_then_verify_uses_the_latest_anchor(
    home: Path, project: Path, tmp_path: Path
) -> None:
    anchors = tmp_path / "anchors"
    _approved(home, project)
    first = run(home, "audit", "anchor", "--to", str(anchors))
    assert first.returncode == 0 and first.stdout.startswith("anchored:"), first.stderr
    again = run(home, "audit", "anchor", "--to", str(anchors))
    assert again.stdout.startswith("already anchored:")
    _approved(home, project)
    assert run(home, "audit", "anchor", "--to", str(anchors)).returncode == 0
    _approved(home, project)
    proc = run(home, "audit", "verify", "--anchor", str(anchors), "--json")
    result = json.loads(proc.stdout)
    assert proc.returncode == 0
    assert result["againstSize"] is not None and result["firstLine"] == result["againstSize"]
    full = json.loads(
        run(home, "audit", "verify", "--anchor", str(anchors), "--full", "--json").stdout
    )
    assert (full["firstLine"], full["root"]) == (1, result["root"])
    # the owner rolls log and head back to before the last anchor: caught
    log, head = _log(home), home / "audit.jsonl.head"
    saved_log, saved_head = log.read_bytes(), head.read_bytes()
    log.write_bytes(b"".join(saved_log.splitlines(keepends=True)[:3]))
    head.unlink()
    rolled = run(home, "audit", "verify", "--anchor", str(anchors), "--json", "--allow-unanchored")
    assert rolled.returncode == 4
    log.write_bytes(saved_log)
    head.write_bytes(saved_head)


def test_anchor_from_the_environment_and_into_git(
    home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    anchors = tmp_path / "git-anchors"
    anchors.mkdir()
    subprocess.run(["git", "init", "-q", str(anchors)], check=True)
    monkeypatch.setenv("PI_OPERATOR_GUARD_ANCHOR_DIR", str(anchors))
    _approved(home, project)
    made = run(home, "audit", "anchor")
    assert made.returncode == 0, made.stderr
    assert "(committed to git)" in made.stdout
    log = subprocess.run(
        ["git", "-C", str(anchors), "log", "--oneline"], capture_output=True, text=True, check=True
    )
    assert "checkpoint log_" in log.stdout
    assert run(home, "audit", "verify").returncode == 0  # uses the anchor from the environment


def test_a_forged_file_in_the_anchor_is_skipped_with_a_warning(
    home: Path, project: Path, tmp_path: Path
) -> None:
    anchors = tmp_path / "anchors"
    _approved(home, project)
    assert run(home, "audit", "anchor", "--to", str(anchors)).returncode == 0
    (log_dir,) = anchors.iterdir()
    (log_dir / "000000009999.checkpoint").write_text("forged\n")
    proc = run(home, "audit", "verify", "--anchor", str(anchors))
    assert proc.returncode == 0
    assert "skipped 000000009999.checkpoint" in proc.stderr


def test_anchor_without_a_directory_is_exit_2(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PI_OPERATOR_GUARD_ANCHOR_DIR", raising=False)
    _approved(home, project)
    proc = run(home, "audit", "anchor")
    assert proc.returncode == 2
    assert "no anchor directory" in one_line_error(proc)


def test_prove_consistency_and_verify_it(home: Path, project: Path, tmp_path: Path) -> None:
    _approved(home, project)
    old = tmp_path / "old.checkpoint"
    old.write_bytes((home / "audit.jsonl.head").read_bytes())
    _approved(home, project)
    proof = tmp_path / "consistency.json"
    made = run(home, "audit", "prove-consistency", str(old), "--out", str(proof))
    assert made.returncode == 0, made.stderr
    vkey = run(home, "audit", "checkpoint", "--vkey").stdout.strip()
    checked = run(home, "audit", "verify-proof", str(proof), "--key", vkey)
    assert checked.returncode == 0 and checked.stdout.startswith("valid: consistency")
    data = json.loads(proof.read_text())
    data["old"], data["new"] = data["new"], data["old"]
    swapped = tmp_path / "swapped.json"
    swapped.write_text(json.dumps(data))
    assert run(home, "audit", "verify-proof", str(swapped), "--key", vkey).returncode == 4
