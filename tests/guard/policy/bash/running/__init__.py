"""The bash analysis's running floor (guard/_policy/bash/running/), module by module."""
