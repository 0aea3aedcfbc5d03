"""The cards of the bash analysis (guard/_policy/bash/programs/), one test module per card."""
