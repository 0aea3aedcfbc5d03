"""The real pi for ``make demo`` and the end-to-end tests: install, drive, script a model."""
