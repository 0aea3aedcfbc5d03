"""Wrappers: the programs that run another command (``sudo``, ``env``, ``xargs``, ``uv run`` …).

A wrapper's card says in ``wraps`` how the command it runs is found; ``running/wrappers``
follows it:

* **Unwrapped** (``time``, ``nice``, ``timeout``, ``command``, ``exec``, ``npx`` …): every
  option is known (which take a value, which are flags); the command after them is judged
  as if typed alone. An option the card does not know asks.
* **Asking** (``sudo``, ``su``, ``ssh``, ``strace``, ``unshare``, ``watch`` …): it changes
  user, namespaces, tracing or lifetime, or the analysis does not follow it precisely. It
  asks; the options taking a value guide the look at what it runs, so a block rule inside
  still blocks. Some take words before the command (a user, a root, a host: ``leading``);
  some are no wrapper without a command (``ssh-agent -s``).
* **Runners** (``uv run``, ``poetry run``, ``npm exec`` …): only their ``subcommands`` run a
  command; their cards are the package managers' where they have one (``packages``).
* ``env`` (assignments, ``-S``, ``-C``), ``xargs`` (its input) and ``busybox`` (an applet)
  each have a reader of their own.

What a wrapper's own words name is read as its row always was: ``env`` names no paths, the
others read theirs.
"""

from __future__ import annotations

from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.programs.card import Card, Wraps, words

__all__ = ["APPLETS", "ASKING", "ENV", "RUNNERS", "UNWRAPPED", "XARGS"]

_READ = Use(read=True, write=False)
_READS = Shape(operands=_READ, values=_READ, assignments=True)


def _unwraps(
    names: str,
    short_values: str = "",
    long_values: str = "",
    short_flags: str = "",
    long_flags: str = "",
    *,
    reads: bool = False,
) -> Card:
    wraps = Wraps(
        how="unwraps",
        short_values=short_values,
        long_values=words(long_values),
        short_flags=short_flags,
        long_flags=words(long_flags),
    )
    return Card(names=words(names), paths=_READS if reads else None, wraps=wraps)


def _asks(
    names: str,
    short_values: str = "",
    long_values: str = "",
    *,
    leading: tuple[int, ...] = (0,),
    command_optional: bool = False,
    reads: bool = False,
) -> Card:
    wraps = Wraps(
        how="asks",
        short_values=short_values,
        long_values=words(long_values),
        leading=leading,
        command_optional=command_optional,
    )
    return Card(names=words(names), paths=_READS if reads else None, wraps=wraps)


def runner(subcommands: str, short_values: str = "", long_values: str = "") -> Wraps:
    """How a runner finds its command: after one of ``subcommands`` and its options."""
    return Wraps(
        how="subcommand",
        subcommands=tuple(subcommands.split()),
        short_values=short_values,
        long_values=words(long_values),
    )


UNWRAPPED: tuple[Card, ...] = (
    _unwraps(
        "time", "fo", "--format --output", "pvaq", "--portability --verbose --append", reads=True
    ),
    _unwraps("nohup", reads=True),
    _unwraps(
        "timeout",
        "sk",
        "--signal --kill-after",
        "v",
        "--preserve-status --foreground --verbose",
        reads=True,
    ),
    _unwraps("nice", "n", "--adjustment", "0123456789", reads=True),
    _unwraps("ionice", "cnpPu", "--class --classdata --pid --pgid --uid", "t", "--ignore"),
    _unwraps("stdbuf", "ioe", "--input --output --error"),
    _unwraps("command", short_flags="pvV"),
    _unwraps("builtin"),
    _unwraps("exec", "a", short_flags="cl"),
    _unwraps("chronic", short_flags="evb"),
    _unwraps("unbuffer", short_flags="p"),
    _unwraps("coproc"),
    _unwraps("taskset", short_flags="acp", long_flags="--all-tasks --cpu-list --pid"),
    _unwraps("npx", "pc", "--package --call", "yq", "--yes --no --quiet --no-install", reads=True),
    _unwraps("bunx", "p", "--package", long_flags="--bun --silent"),
    _unwraps(
        "uvx",
        "p",
        "--from --with --python --with-requirements --index",
        "q",
        "--quiet --isolated --no-cache --offline",
    ),
)
"""The wrappers the analysis unwraps precisely: their options, short and long, taking a
value or not."""

_ONE_BEFORE = (0, 1)
"""A user, a root, a host or a lock file may come before the command: both readings."""

ASKING: tuple[Card, ...] = (
    _asks(
        "sudo",
        "ugpCDhrtTU",
        """
        --user --group --prompt --chdir --close-from --role --type --command-timeout
        --other-user --host
        """,
        reads=True,
    ),
    _asks("doas", "uC"),
    _asks("su", "cgGs", "--command --group --supp-group --shell", leading=_ONE_BEFORE),
    _asks(
        "runuser",
        "cgGsu",
        "--command --group --supp-group --shell --user",
        leading=_ONE_BEFORE,
    ),
    _asks("pkexec", long_values="--user"),
    _asks("watch", "nqd", "--interval --chgexit", reads=True),
    _asks("ssh", "bcDEeFIiJLlmOoPpQRSWw", leading=_ONE_BEFORE, reads=True),
    _asks("strace", "abeEIoOpPsSuUX"),
    _asks("ltrace", "aAeEfFlnopsSuTx"),
    _asks("script", "cEIOBT", "--command --echo --log-in --log-out --log-io --log-timing"),
    _asks("chroot", long_values="--userspec --groups", leading=_ONE_BEFORE),
    _asks("nsenter", "tSGmuinpUCTr"),
    _asks("setarch", leading=_ONE_BEFORE),
    _asks("flock", "wEnc", "--timeout --conflict-exit-code --command", leading=_ONE_BEFORE),
    _asks("perf", "eo", "--event --output", leading=_ONE_BEFORE),
    _asks("faketime", "f", leading=_ONE_BEFORE),
    _asks("sg", "c", leading=_ONE_BEFORE),
    _asks("gosu su-exec setuidgid", leading=_ONE_BEFORE),
    _asks("tmux", "cfLSt", leading=_ONE_BEFORE, command_optional=True),
    _asks("screen", "cSX", leading=_ONE_BEFORE, command_optional=True),
    _asks("ssh-agent", "atE", command_optional=True),
    _asks("direnv pyenv rbenv nodenv", leading=(1, 2)),
    _asks("""
        setsid unshare setpriv linux32 linux64 numactl valgrind fakechroot firejail bwrap
        dbus-run-session dbus-launch catchsegv entr nq tsp start-stop-daemon
        flatpak-spawn
        """),
    _asks("prlimit", "p", "--pid"),
    _asks("cgexec", "g"),
    _asks("chrt", "T", "--sched-runtime --sched-period --sched-deadline"),
    _asks("fakeroot", "is"),
    _asks("proot", "rbwq"),
    _asks("systemd-run", "upEM"),
    _asks("torsocks", "aPu"),
    _asks("proxychains proxychains4", "f"),
    _asks("xvfb-run", "nsfe"),
    _asks("chpst", "ugUenlmdopftc"),
    _asks("parallel", "jSa"),
    _asks("watchexec", "ewi"),
    _asks("nodemon", "xew", "--exec --watch --ext"),
    _asks("at", "fqt"),
    _asks("batch", "f"),
    _asks("daemonize", "aceEoplu"),
    _asks("expect", "c"),
    _asks("hyperfine", "prwmMcs"),
    _asks("caffeinate", "tw"),
    _asks("nix-shell", "pI", "--run --command --packages"),
)
"""The wrappers that ask, and what guides the look at what they run."""

RUNNERS: tuple[Card, ...] = (
    Card(
        names=words("uv"),
        wraps=runner(
            "run",
            "p",
            """
            --with --python --project --directory --env-file --extra --group --package --index
            --from --with-requirements --with-editable --only-group
            """,
        ),
    ),
    Card(names=words("poetry"), wraps=runner("run", "C", "--directory --project")),
    Card(names=words("pipenv rye"), wraps=runner("run")),
    Card(names=words("pdm"), wraps=runner("run", "p", "--project")),
    Card(names=words("hatch"), wraps=runner("run", "e", "--env")),
    Card(names=words("mamba"), wraps=runner("run", "np", "--name --prefix --cwd")),
    Card(names=words("pipx"), wraps=runner("run", long_values="--spec --python")),
    Card(
        names=words("bun"),
        wraps=runner("x", "ep", "--eval --print"),
        code_options=words("-e --eval -p --print"),
        runs_files=True,
    ),
)
"""The runners without a card of their own elsewhere (conda, npm, pnpm and yarn have one
in ``packages``)."""

ENV = Card(
    names=words("env"),
    paths=Shape(),
    wraps=Wraps(
        how="env",
        short_values="uCS",
        long_values=words("--unset --chdir --split-string"),
        short_flags="i0v",
        long_flags=words("--ignore-environment --null --debug"),
    ),
)
"""``env``: ``NAME=VALUE`` words, then the command; ``-S`` splits a string into one."""

XARGS = Card(
    names=words("xargs"),
    paths=_READS,
    wraps=Wraps(
        how="xargs",
        short_values="adEILnPs",
        # --eof, --replace and --max-lines take a value only as --eof=VALUE
        long_values=words(
            "--arg-file --delimiter --max-args --max-procs --max-chars --process-slot-var"
        ),
    ),
)
"""``xargs``: runs its command on arguments it reads from stdin."""

APPLETS = Card(names=words("busybox toybox"), wraps=Wraps(how="applet"))
"""``busybox``, ``toybox``: their first word is the program they run."""
