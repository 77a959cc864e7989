"""Floor displays of the event stream: the display model, a terminal display and a web display."""

from table_controller.display.model import TableView

__all__ = ["TableView"]
