"""The studio's HTTP service over the archive: round history, one round, the tables (see docs/studio.md)."""
