"""The bash analysis's parsing floor (guard/_policy/bash/parsing/), module by module."""
