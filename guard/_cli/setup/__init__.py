"""``pi-guard`` commands that set the guard up and look at it: the pi install, doctor, the
sandbox, the policy, the read-only planner and the demo."""
