"""The ``table-controller`` command.

Each sub-command lives in its own module under ``table_controller.cli`` with a
``register(subparsers)`` function; heavy imports (OpenCV, ZeroMQ) happen inside
the command's own code so that ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from firmware_interfaces.errors import DeviceError
from table_controller import __version__
from table_controller.errors import TableError

#: Modules that add sub-commands, in the order ``--help`` lists them.
COMMAND_MODULES = (
    "table_controller.cli.rules_cmd",
    "table_controller.cli.sim_cmd",
    "table_controller.cli.run_cmd",
    "table_controller.cli.config_cmd",
    "table_controller.cli.deck_check_cmd",
    "table_controller.cli.supervise_cmd",
    "table_controller.cli.par_cmd",
    "table_controller.cli.journal_cmd",
    "table_controller.cli.shoe_cmd",
    "table_controller.cli.keys_cmd",
    "table_controller.cli.proxy_cmd",
    "table_controller.cli.display_cmd",
    "table_controller.cli.calibrate_cmd",
    "table_controller.cli.camera_cmd",
    "table_controller.cli.soak_cmd",
    "table_controller.cli.archive_cmd",
    "table_controller.cli.studio_cmd",
    "table_controller.cli.service_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="table-controller",
        description="Card-table controller for live-dealer casino studios.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def _command(argv: list[str]) -> str | None:
    """The sub-command's name: the first word that is no option (the global options,
    ``-v``, ``--version``, ``-h``, take no values)."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    # `run` promises a clean stop on SIGTERM at any moment: its handler goes in before
    # anything else (building the parser alone imports every sub-command, hundreds of ms).
    stops = _command(words) == "run"
    if stops:
        from table_controller.cli.stop_signals import STOP, Terminated
        from table_controller.service.stacks import dump_stacks_on_signal

        try:
            STOP.arm()  # a stop that came while the interpreter started is delivered here
            if argv is None:  # a process of its own (not a caller's, whose handlers they are)
                dump_stacks_on_signal()  # a table that hangs can be asked where (SIGUSR1)
            return _main(words)
        except Terminated:
            return 0  # stopped during start-up: what was built is closed, the journal whole
        except Exception as e:
            if _stopped(e):
                return 0  # the same stop, wrapped by Python on its way out (see _stopped)
            raise
        finally:
            if argv is None:
                STOP.running()  # the process exits: a later signal has nothing to interrupt
            else:
                STOP.disarm()  # called from Python (tests): give the handlers back
    return _main(words)


def _stopped(error: BaseException) -> bool:
    """Whether ``error`` was caused by a stop signal during start-up (``Terminated`` in its
    chain of causes): Python 3.11 wraps what a class's ``__set_name__`` raises in a
    RuntimeError, so a SIGTERM that lands while an import builds a dataclass (seen in CI at
    0.25 s: "Error calling __set_name__ on 'Field' instance 'items' in 'StreamRecord'") comes out
    as one, and the stop must still exit 0."""
    from table_controller.cli.stop_signals import Terminated

    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, Terminated):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from table_controller.service.logs import configure

    configure(logging.WARNING - 10 * min(args.verbose, 2), sys.stderr)
    try:
        return int(args.func(args) or 0)
    except (TableError, DeviceError) as e:  # a driver's own errors, e.g. a shoe that does not answer
        print(f"table-controller: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
