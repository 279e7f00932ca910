"""The engine, in rooms by job (docs/architecture.md lists them); no re-exports."""
