"""Keys retire for real, and the keyring cannot be extended behind the guard's back.

Attacks from a hostile same-user process on the real files: move the signing key away
(a stolen key), add, edit or re-sign keyring entries, strip signatures, put back an old
keyring; and spend evidence signed by a retired key.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from freezegun import freeze_time

from audit.verify import read_records
from audit.wire import b64url_encode
from guard import Guard, KeyringError
from guard._evidence.envelope import mint_envelope
from guard._evidence.keys import Keyring, KeyringEntry, Signer, key_id_for
from guard.evidence import KeyStore
from tests.cli_runner import invoke

CALL = {"command": "rm -rf build"}
T0 = datetime(2026, 11, 22, 1, 0, 0, tzinfo=UTC)


def _steal_key(home: Path, to: Path) -> Signer:
    """Move signing.key out of the home (as a thief would) and load it from there."""
    to.mkdir(mode=0o700)
    shutil.move(home / "signing.key", to / "signing.key")
    return KeyStore(to).load_signer()


def _forge(g: Guard, signer: Signer, project: Path, at: datetime) -> dict[str, Any]:
    fp = g.evaluate("bash", CALL, project).fingerprint
    assert fp is not None
    env = mint_envelope(signer, fp, origin="runtime-ui-confirm", ttl_seconds=600, now=at)
    return env.model_dump(mode="json")


def _attacker_entry(status: str = "active") -> dict[str, Any]:
    public = Ed25519PrivateKey.generate().public_key()
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    entry: dict[str, Any] = {
        "keyId": key_id_for(public),
        "publicKey": b64url_encode(raw),
        "status": status,
        "createdAtIso": "2026-11-22T00:00:00.000Z",
    }
    if status == "retired":
        entry["retiredAtIso"] = "2099-01-01T00:00:00.000Z"
    return entry


def _edit_keyring(home: Path, edit: Any) -> None:
    path = home / "keyring.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


# -- the key file disappears ----------------------------------------------------


def test_moved_away_key_is_retired_and_logged(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    with freeze_time(T0):
        with Guard.open(home) as g:
            old_id = g.key_id
        _steal_key(home, tmp_path / "stolen")
    with freeze_time(T0 + timedelta(seconds=60)), Guard.open(home) as g:
        assert g.key_created and g.key_id != old_id
        statuses = {e.key_id: (e.status, e.retired_at_iso) for e in g.keyring().keys}
        assert statuses == {
            old_id: ("retired", "2026-11-22T01:01:00.000Z"),
            g.key_id: ("active", None),
        }
        records = list(read_records(g.audit.path))
    retired = [r for r in records if r.event == "key.retired"]
    assert [r.data for r in retired] == [
        {
            "keyId": old_id,
            "newKeyId": g.key_id,
            "retiredAtIso": "2026-11-22T01:01:00.000Z",
            "reason": "key-file-missing",
        }
    ]


@pytest.mark.parametrize("after", [0, 1, 30, 599, 604, 3600, 86400 * 30])
def test_stolen_key_cannot_sign_evidence_created_after_retirement(
    tmp_path: Path, after: int
) -> None:
    home = tmp_path / "guard"
    with freeze_time(T0):
        Guard.open(home).close()
        stolen = _steal_key(home, tmp_path / "stolen")
    with freeze_time(T0 + timedelta(seconds=60)):
        Guard.open(home).close()  # the new key; the stolen one retired at T0 + 60 s
    at = T0 + timedelta(seconds=60 + after)
    with freeze_time(at), Guard.open(home) as g:
        result = g.consume(_forge(g, stolen, tmp_path, at), "bash", CALL, tmp_path)
    assert (result.match.decision, result.reasons) == ("untrusted", ("key-retired",))


@pytest.mark.parametrize(
    ("now_after", "ok"), [(10, True), (599, True), (600, False), (606, False), (86400, False)]
)
def test_backdated_evidence_from_a_stolen_key_dies_with_the_max_ttl(
    tmp_path: Path, now_after: int, ok: bool
) -> None:
    home = tmp_path / "guard"
    retired_at = T0 + timedelta(seconds=60)
    with freeze_time(T0):
        Guard.open(home).close()
        stolen = _steal_key(home, tmp_path / "stolen")
    with freeze_time(retired_at):
        Guard.open(home).close()
    now = retired_at + timedelta(seconds=now_after)
    created = retired_at - timedelta(milliseconds=1)  # the latest a thief can backdate to
    with freeze_time(now), Guard.open(home) as g:
        result = g.consume(_forge(g, stolen, tmp_path, created), "bash", CALL, tmp_path)
    if ok:
        assert result.decision == "consumed"
    else:
        assert result.reasons in (("key-retired",), ("expired",))


def test_evidence_minted_before_the_key_vanished_still_consumes(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    with freeze_time(T0), Guard.open(home) as g:
        rec = g.record("bash", CALL, tmp_path, confirmed=True)
        assert rec.envelope is not None
        env = rec.envelope.model_dump(mode="json")
    with freeze_time(T0):
        _steal_key(home, tmp_path / "stolen")
    with freeze_time(T0 + timedelta(seconds=5)), Guard.open(home) as g:
        assert g.consume(env, "bash", CALL, tmp_path).decision == "consumed"


def test_key_vanishes_twice_every_old_key_stays_retired(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    ids = []
    for n in range(3):
        with freeze_time(T0 + timedelta(minutes=n)), Guard.open(home) as g:
            ids.append(g.key_id)
        if n < 2:
            (home / "signing.key").unlink()
    with Guard.open(home) as g:
        statuses = {e.key_id: e.status for e in g.keyring().keys}
    assert statuses == {ids[0]: "retired", ids[1]: "retired", ids[2]: "active"}


def test_key_vanishes_after_keyring_tampering_refuses_to_generate(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    Guard.open(home).close()
    (home / "signing.key").unlink()
    _edit_keyring(home, lambda d: d["keys"].append(_attacker_entry("retired")))
    with pytest.raises(KeyringError):
        Guard.open(home)
    assert not (home / "signing.key").exists()


# -- the keyring is signed ----------------------------------------------------


def _add_active(d: dict[str, Any]) -> None:
    d["keys"].append(_attacker_entry("active"))


def _add_retired(d: dict[str, Any]) -> None:
    d["keys"].append(_attacker_entry("retired"))


def _strip_signatures(d: dict[str, Any]) -> None:
    d["signatures"] = []


def _drop_signatures_field(d: dict[str, Any]) -> None:
    del d["signatures"]


def _extend_retirement(d: dict[str, Any]) -> None:
    for e in d["keys"]:
        e["createdAtIso"] = "2020-01-01T00:00:00.000Z"


def _duplicate_signature(d: dict[str, Any]) -> None:
    d["signatures"] = d["signatures"] * 2


def _garble_signature(d: dict[str, Any]) -> None:
    sig = d["signatures"][0]["signature"]
    d["signatures"][0]["signature"] = ("B" if sig[0] == "A" else "A") + sig[1:]


def _replace_active_key(d: dict[str, Any]) -> None:
    d["keys"] = [_attacker_entry("active")]


def _demote_active(d: dict[str, Any]) -> None:
    d["keys"][0]["status"] = "retired"
    d["keys"][0]["retiredAtIso"] = "2099-01-01T00:00:00.000Z"


TAMPERS = {
    f.__name__.lstrip("_"): f
    for f in (
        _add_active,
        _add_retired,
        _strip_signatures,
        _drop_signatures_field,
        _extend_retirement,
        _duplicate_signature,
        _garble_signature,
        _replace_active_key,
        _demote_active,
    )
}


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_tampered_keyring_is_refused(tmp_path: Path, tamper: str) -> None:
    home = tmp_path / "guard"
    Guard.open(home).close()
    _edit_keyring(home, TAMPERS[tamper])
    with pytest.raises(KeyringError):
        Guard.open(home)


def test_added_key_resigned_by_the_attacker_is_refused(tmp_path: Path) -> None:
    """The attacker signs a keyring holding the real key and theirs with their own key."""
    home = tmp_path / "guard"
    Guard.open(home).close()
    private = Ed25519PrivateKey.generate()
    attacker = Signer(private, key_id_for(private.public_key()))
    raw = private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    ring = KeyStore(home).keyring()
    entry = KeyringEntry(
        key_id=attacker.key_id,
        public_key=b64url_encode(raw),
        status="active",
        created_at_iso="2026-11-22T00:00:00.000Z",
    )
    forged = Keyring(keys=(*ring.keys, entry)).signed(attacker)
    (home / "keyring.json").write_text(json.dumps(forged.model_dump(mode="json")))
    with pytest.raises(KeyringError):
        Guard.open(home)


def test_tampering_while_open_is_refused_at_the_next_call(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    with Guard.open(home) as g:
        _edit_keyring(home, _add_active)
        with pytest.raises(KeyringError):
            g.evaluate("bash", CALL, tmp_path)


def test_old_keyring_put_back_after_rotation_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    Guard.open(home).close()
    old = (home / "keyring.json").read_bytes()
    with Guard.open(home) as g:
        g.rotate_key()
    (home / "keyring.json").write_bytes(old)
    with pytest.raises(KeyringError):
        Guard.open(home)


def test_rotation_is_countersigned_by_the_retired_key(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    with Guard.open(home) as g:
        old, new = g.rotate_key()
        ring = g.keyring()
    assert {s.key_id for s in ring.signatures} == {old, new}
    with Guard.open(home) as g:  # and it verifies
        assert g.key_id == new


def test_cli_tampered_keyring_is_exit_6(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    Guard.open(home).close()
    _edit_keyring(home, _add_active)
    proc = invoke("keys", "list", home=home)
    assert proc.returncode == 6
    assert "keyring" in proc.stderr


def test_keygen_trust_keyring_adopts_an_unsigned_keyring_only_if_it_is_ours(
    tmp_path: Path,
) -> None:
    home = tmp_path / "guard"
    Guard.open(home).close()
    _edit_keyring(home, _drop_signatures_field)  # as an older version wrote it
    assert invoke("keygen", home=home).returncode == 6
    proc = invoke("keygen", "--trust-keyring", home=home)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["keyringSigned"] is True
    Guard.open(home).close()
    # A keyring whose active key is not ours is never adopted.
    _edit_keyring(home, _add_active)
    _edit_keyring(home, _drop_signatures_field)
    assert invoke("keygen", "--trust-keyring", home=home).returncode == 6


def test_auditor_keyring_is_a_trust_root(tmp_path: Path) -> None:
    """`audit verify --keyring` takes the auditor's file as given (no signature needed)."""
    home = tmp_path / "guard"
    with Guard.open(home) as g:
        g.record("bash", CALL, tmp_path, confirmed=True)
    auditor = tmp_path / "auditor.json"
    data = json.loads((home / "keyring.json").read_text())
    del data["signatures"]
    auditor.write_text(json.dumps(data))
    proc = invoke("audit", "verify", "--keyring", str(auditor), home=home)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_second_retirement_keeps_the_first_ones_time(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    ids = []
    for n in range(3):
        with freeze_time(T0 + timedelta(minutes=n)), Guard.open(home) as g:
            ids.append(g.key_id)
        if n < 2:
            (home / "signing.key").unlink()
    with Guard.open(home) as g:
        retired = {e.key_id: e.retired_at_iso for e in g.keyring().keys}
    # each key retired when the guard found its key gone: the next open after it vanished
    assert retired == {
        ids[0]: "2026-11-22T01:01:00.000Z",
        ids[1]: "2026-11-22T01:02:00.000Z",
        ids[2]: None,
    }


def test_rotation_writes_the_keyring_world_readable_and_the_key_private(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    with Guard.open(home) as g:
        g.rotate_key()
    assert (home / "keyring.json").stat().st_mode & 0o777 == 0o644
    assert (home / "signing.key").stat().st_mode & 0o777 == 0o600


def test_the_keyring_file_is_sorted_two_space_json_for_a_readable_diff(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    with Guard.open(home) as g:
        g.rotate_key()
    raw = (home / "keyring.json").read_text(encoding="utf-8")
    assert raw == json.dumps(json.loads(raw), indent=2, sort_keys=True) + "\n"
    assert raw.startswith('{\n  "keys": [\n    {\n')
