"""Fixtures shared by every test package."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import freezegun
import pytest
import structlog
from hypothesis import settings

from tools.pi.harness import FLAVORS, NEWEST, PINNED, Flavor, PinnedPi, ensure_pi
from tools.postgres import PostgresMissing, PostgresServer

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

REPO = Path(__file__).resolve().parent.parent
T = TypeVar("T")

# The warm start is off in the suite but where a test turns it on (tests/guard/warm and
# tests/e2e/test_warm_e2e.py, which check that a forked sidecar judges as a cold one does):
# every pi session starts in a home of its own test, most homes see one session, and each
# would start a fork server that nobody uses (about half a CPU-second each).
os.environ.setdefault("PI_OPERATOR_GUARD_WARM_IDLE", "0")

# In CI the property tests explore a fixed set of examples, so a run is reproducible;
# on a developer's machine they keep exploring new ones.
settings.register_profile("ci", derandomize=True, print_blob=True)
# `make fuzz`: fresh randomness and FUZZ_SCALE (default 20) times each test's own max_examples.
settings.register_profile("fuzz", derandomize=False, print_blob=True, deadline=None)
# `make mutants`: few, fixed examples, so each mutant's verdict is reproducible and cheap.
settings.register_profile("mutants", derandomize=True, deadline=None, database=None)
_PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "")
if _PROFILE:
    settings.load_profile(_PROFILE)

MUTANTS_MAX_EXAMPLES = 20

# pytest times each test with time.perf_counter, which a frozen clock replaces: a test that
# ticks its frozen clock by two hours was timed at two hours, and mutmut (which orders mutants
# and sets each one's CPU limit from those times) then allowed a looping mutant ten hours.
# freezegun's own default list names "_pytest.runner." with a dot, which misses the module.
freezegun.configure(extend_ignore_list=["_pytest.runner"])


def _scaled(own: settings) -> settings | None:
    """A test's own @settings under the fuzz or mutants profile (None: keep them)."""
    if _PROFILE == "fuzz":
        scale = int(os.environ.get("FUZZ_SCALE", "20"))
        return settings(own, max_examples=own.max_examples * scale, derandomize=False)
    if _PROFILE == "mutants":
        return settings(
            own, max_examples=min(own.max_examples, MUTANTS_MAX_EXAMPLES), derandomize=True
        )
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    dropped = _older_pis_run_the_contract_only(items)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]
    # A test's explicit @settings(max_examples=...) wins over any profile, so the fuzz and
    # mutants profiles rescale each property test's own settings here.
    for item in items:
        # Each pinned pi comes from npm on first use: `make check` leaves such tests out.
        fixtures = getattr(item, "fixturenames", ())
        if "pinned_pi" in fixtures:
            item.add_marker(pytest.mark.npm)
        # A real PostgreSQL or browser is never part of `make check`.
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("backend") if callspec is not None else None
        if "postgres" in fixtures or "browser" in fixtures or backend == "postgresql":
            item.add_marker(pytest.mark.integration)
        test = getattr(item, "obj", None)
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if isinstance(own, settings):
            scaled = _scaled(own)
            if scaled is not None:
                test._hypothesis_internal_use_settings = scaled  # type: ignore[union-attr]
    items[:] = dealt(sorted(items, key=_longest_first), _xdist_workers())


def _xdist_workers() -> int:
    """How many xdist workers share the run (1 without xdist); every worker sees the same."""
    return max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


def dealt(ordered: Sequence[T], hands: int) -> list[T]:
    """``ordered`` dealt round-robin into ``hands`` contiguous hands, each keeping the order.

    xdist's work stealing first gives each worker one contiguous share of the collection and
    steals from the end of a queue: with the longest tests (the real pi, then the slow ones)
    first and dealt, every worker starts on its share of them, and what is stolen late is
    short. Sorted but not dealt, they all went to the first worker and ran last.
    """
    return [item for hand in range(hands) for item in ordered[hand::hands]]


def _older_pis_run_the_contract_only(items: list[pytest.Item]) -> list[pytest.Item]:
    """Every test that takes ``pinned_pi`` runs on the newest pinned pi; on the older ones,
    only the tests marked ``every_pi``, and of those marked ``variants_on_newest_pi`` too,
    only the first of their own parameters.

    The shim is one code path for every pi, and every decision is made in Python: what
    differs between the pis is pi's side of the contract (its events, dialogs and keys, its
    tools' inputs, its install, start and exit), and the ``every_pi`` tests cover each of
    those on every pinned pi. A scenario that varies only what the guard decides (a
    spelling, an effect, a grant) gains nothing from running on each pi, and a session of
    the real pi costs seconds of CPU.
    """
    seen: set[tuple[str, object]] = set()
    dropped: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        flavor = callspec.params.get("pinned_pi", NEWEST) if callspec is not None else NEWEST
        if flavor == NEWEST:
            continue
        if item.get_closest_marker("every_pi") is None:
            dropped.append(item)
            continue
        if item.get_closest_marker("variants_on_newest_pi") is None:
            continue
        key = (item.nodeid.partition("[")[0], flavor)
        if key in seen:
            dropped.append(item)
        seen.add(key)
    return dropped


def _longest_first(item: pytest.Item) -> int:
    if item.get_closest_marker("e2e") is not None:
        return 0
    return 1 if item.get_closest_marker("slow") is not None else 2


@pytest.fixture(scope="session", params=FLAVORS, ids=[f"{f}-{PINNED[f][1]}" for f in FLAVORS])
def pinned_pi(request: pytest.FixtureRequest) -> PinnedPi:
    """Each pinned pi in turn (legacy, current): a test that uses it runs once per version.

    Installed into the ignored ``.cache/pi-<flavor>`` on first use (file-locked), with Node 22
    into ``.cache/node`` when the machine's node is too old for it.
    """
    flavor: Flavor = request.param
    return ensure_pi(REPO, flavor)


@pytest.fixture(scope="session")
def bwrap_required() -> None:
    """bubblewrap is a requirement (README): without it the sandbox tests fail, never skip."""
    from guard._sandbox import probe
    from guard._sandbox.collect import find_bwrap

    found = probe(find_bwrap())
    if not found.ok:
        pytest.fail(
            f"bubblewrap cannot start a sandbox here ({found.status}): install it "
            "(apt-get install bubblewrap) — it is a requirement of the guard and its tests"
        )


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL on 127.0.0.1 for the whole run (tools/postgres.py), never a mock.

    Its binaries are a requirement of the tests (README): without them this fails, never
    skips, and says how to install them.
    """
    try:
        server = PostgresServer().start()
    except PostgresMissing as missing:
        pytest.fail(str(missing), pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(postgres: PostgresServer) -> Iterator[str]:
    """The URL of a fresh, empty database on the run's server (one per test, dropped after)."""
    import psycopg

    name = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(postgres.url(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}".encode())
    yield postgres.url(name)
    with psycopg.connect(postgres.url(), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)".encode())


@pytest.fixture
def pg_role(postgres: PostgresServer, pg_url: str) -> Callable[[str], str]:
    """``pg_role("writer")``: a login role in ``pg_url``'s database with exactly the grants
    of docs/deployment-postgresql.md's ``<!-- grants:writer -->`` (or ``auditor``) block,
    after the schema exists; returns its URL. The guide's SQL is what is tested."""
    import psycopg

    from guard._storage.pg_ledger import PgLedger

    PgLedger.open(pg_url, source="schema").close()
    text = (REPO / "docs" / "deployment-postgresql.md").read_text(encoding="utf-8")
    database = pg_url.rsplit("/", 1)[1]

    def make(block: str) -> str:
        sql = text.split(f"<!-- grants:{block} -->", 1)[1].split("```sql", 1)[1]
        statements = [s.strip() for s in sql.split("```", 1)[0].split(";") if s.strip()]
        role, password = f"{block}_{secrets.token_hex(4)}", secrets.token_hex(12)
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'".encode())
            for statement in statements:
                admin.execute(statement.replace(f"guard_{block}", role).encode())
        return f"postgresql://{role}:{password}@127.0.0.1:{postgres.port}/{database}"

    return make


CHROMIUM_HINT = (
    "chromium not found on PATH: install it with `apt-get install chromium` (Debian/Ubuntu); "
    "the approval page's tests drive it headless"
)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """The system's chromium, headless, driven by Playwright, for the whole run.

    Always the machine's own ``chromium`` (Debian's package), never a browser Playwright
    downloads. It is a requirement of the tests (README): without it this fails, never skips,
    and says how to install it. Playwright starts it with ``--no-sandbox`` (its default, and
    what chromium needs as root, as in CI).
    """
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail(CHROMIUM_HINT, pytrace=False)
    playwright = sync_playwright().start()
    try:
        launched = playwright.chromium.launch(executable_path=executable, headless=True)
        try:
            yield launched
        finally:
            launched.close()
    finally:
        playwright.stop()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page in its own browser context (no cookies or storage from another test),
    closed after the test; every wait gives up after 10 seconds."""
    context = browser.new_context()
    context.set_default_timeout(10_000)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture(autouse=True)
def _structlog_restored() -> Iterator[None]:
    """Each test gets structlog as it found it: ``serve`` configures it for the process
    (warning level, stderr), which would otherwise filter the log events later tests read."""
    configured = structlog.is_configured()
    saved = structlog.get_config()
    yield
    if configured:
        structlog.configure(**saved)
    else:
        structlog.reset_defaults()


@pytest.fixture
def logs() -> Iterator[list[MutableMapping[str, Any]]]:
    """Every structlog event the test causes, at every level (``structlog.testing``)."""
    structlog.reset_defaults()  # no level filter while capturing; restored after the test
    with structlog.testing.capture_logs() as captured:
        yield captured
