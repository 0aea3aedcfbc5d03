"""A monitor consumer: check the operator's evidence in a pi session against a pending call.

    python examples/monitor_consume.py --session SESSION.jsonl --tool-call-id call_1 \\
        --tool bash --input '{"command": "rm -rf build"}' --cwd /path/to/project

Prints the consume result as JSON; exits 0 when the evidence was consumed and 3 when
it was rejected. Either way it authorizes nothing: the result is a report
(``dispatchAllowed`` is always false), and the guard's audit log records it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from guard import Guard, GuardError, session_envelopes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--session", type=Path, required=True, help="pi session JSONL file")
    parser.add_argument("--tool-call-id", required=True, help="the pending call's id")
    parser.add_argument("--tool", required=True, help="the pending call's tool name")
    parser.add_argument("--input", required=True, help="the pending call's input (JSON)")
    parser.add_argument("--cwd", type=Path, required=True, help="the workspace root")
    parser.add_argument("--home", type=Path, default=None, help="guard home (default: pi's)")
    args = parser.parse_args()
    try:
        pending_input = json.loads(args.input)
        envelopes = session_envelopes(args.session, tool_call_id=args.tool_call_id)
        with Guard.open(args.home) as guard:
            # The newest envelope for this call; none at all is a "missing" rejection.
            result = guard.consume(
                envelopes[-1] if envelopes else None,
                args.tool,
                pending_input,
                args.cwd,
                tool_call_id=args.tool_call_id,  # evidence for another call is refused
            )
    except (GuardError, OSError, ValueError) as exc:
        print(f"monitor: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result.model_dump(mode="json"), indent=2))
    return 0 if result.decision == "consumed" else 3


if __name__ == "__main__":
    sys.exit(main())
