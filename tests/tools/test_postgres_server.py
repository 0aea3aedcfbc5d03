"""tools/postgres.py: finding the server binaries, and the message when they are missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.postgres import INSTALL_HINT, PostgresMissing, PostgresServer, find_bin_dir


def test_missing_binaries_say_how_to_install_them(tmp_path: Path) -> None:
    with pytest.raises(PostgresMissing) as caught:
        find_bin_dir(path=str(tmp_path), debian_root=tmp_path / "none")
    assert str(caught.value) == INSTALL_HINT
    assert "apt-get install postgresql" in INSTALL_HINT


def test_the_newest_debian_version_is_found(tmp_path: Path) -> None:
    for version in ("9", "15", "13"):
        binaries = tmp_path / version / "bin"
        binaries.mkdir(parents=True)
        (binaries / "initdb").touch()
    assert (
        find_bin_dir(path=str(tmp_path / "empty"), debian_root=tmp_path) == tmp_path / "15" / "bin"
    )


def test_the_run_server_listens_on_loopback_with_a_password(postgres: PostgresServer) -> None:
    import psycopg

    with psycopg.connect(postgres.url(), autocommit=True) as db:
        (listen,) = db.execute("SHOW listen_addresses").fetchone() or ("",)
        (auth,) = db.execute("SHOW password_encryption").fetchone() or ("",)
    assert listen == "127.0.0.1"
    assert auth == "scram-sha-256"
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(postgres.url().replace(postgres.password, "wrong"), connect_timeout=5)
