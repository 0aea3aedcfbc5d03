"""Run as a separate process by the audit tests: append records to one log.

Usage: python appender_child.py LOG SEED_HEX COUNT TAG
Prints ``<seq> <hash>`` for every append once it has returned (it is durable then).
"""

from __future__ import annotations

import sys

from audit_testkit import FixedSigner, executed

from audit.log import AuditLog


def main() -> None:
    path, seed_hex, count, tag = sys.argv[1:5]
    signer = FixedSigner(bytes.fromhex(seed_hex))
    with AuditLog.open(path, signer, signer.keys) as log:
        for i in range(int(count)):
            rec = log.append("tool.executed", executed(f"{tag}-{i}", f"{tag} {i}"))
            sys.stdout.write(f"{rec.seq} {rec.hash}\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
