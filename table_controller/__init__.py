"""Card-table controller for live-dealer casino studios."""

__version__ = "0.1.0"
