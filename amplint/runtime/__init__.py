"""The runtime harness. Imports torch lazily: nothing here is on the linter's import path."""
