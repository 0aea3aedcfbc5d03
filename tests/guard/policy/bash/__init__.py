"""The bash analysis, module by module (guard/_policy/bash/): what each part concludes."""
