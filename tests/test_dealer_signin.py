"""Dealer sign-in: journaled as a ``dealer`` event, carried by every round started after it,
kept over a restart, signed out; through the control socket only with the supervisor token."""

from __future__ import annotations

from table_controller import event_types as ev
from table_controller.rules import load_game
from table_controller.table import inputs as i
from table_controller.table.machine import TableMachine


def _machine() -> TableMachine:
    return TableMachine(load_game("baccarat"), table="T01", betting_seconds=10, burns=False)


def test_a_dealer_signed_in_is_carried_by_every_round_until_signed_out() -> None:
    machine = _machine()
    journal: list[ev.Event] = []
    started = [e for e in machine.handle(i.StartRound(), 1.0) if isinstance(e, ev.RoundStarted)]
    assert started[0].dealer is ev.UNSET  # nobody signed in yet
    journal += machine.handle(i.SupervisorVoid(by="s"), 2.0)
    signed = machine.handle(i.DealerSignIn("D042", by="supervisor ana (token)"), 3.0)
    assert [(type(e).__name__, e.dealer, e.by) for e in signed if isinstance(e, ev.DealerChanged)] == [
        ("DealerChanged", "D042", "supervisor ana (token)")]
    journal += signed
    assert machine.state == "idle"  # signing in changes nothing else
    started = [e for e in machine.handle(i.StartRound(), 4.0) if isinstance(e, ev.RoundStarted)]
    assert started[0].dealer == "D042"
    # mid-round the next dealer takes over: the round in play keeps its start, the next round has her
    machine.handle(i.DealerSignIn("D007", by="badge"), 5.0)
    machine.handle(i.SupervisorVoid(by="s"), 6.0)
    assert [e.dealer for e in machine.handle(i.StartRound(), 7.0) if isinstance(e, ev.RoundStarted)] == ["D007"]
    machine.handle(i.SupervisorVoid(by="s"), 8.0)
    machine.handle(i.DealerSignIn(None, by="supervisor ana (token)"), 9.0)
    assert [e.dealer for e in machine.handle(i.StartRound(), 10.0) if isinstance(e, ev.RoundStarted)] == [ev.UNSET]


def test_a_restarted_table_still_knows_its_dealer() -> None:
    machine = _machine()
    events: list[ev.Event] = []
    events += machine.handle(i.DealerSignIn("D042", by="badge"), 1.0)
    events += machine.handle(i.StartRound(), 2.0)
    stamped = [ev.numbered(ev.stamped(e, table="T01", game="baccarat", ts=2.0), n + 1) for n, e in enumerate(events)]
    restored = _machine()
    restored.restore(stamped)
    assert restored.dealer == "D042"
    restored.handle(i.SupervisorVoid(by="s"), 3.0)
    assert [e.dealer for e in restored.handle(i.StartRound(), 4.0) if isinstance(e, ev.RoundStarted)] == ["D042"]


def test_the_dealer_event_decodes_and_refuses_an_empty_or_overlong_id() -> None:
    import msgspec
    import pytest

    good = ev.numbered(ev.stamped(ev.DealerChanged(dealer="D042", by="badge"), table="T01", game="baccarat",
                                  ts=1.0), 5)
    assert ev.decode_event(msgspec.json.encode(good)) == good
    for bad in ("", "x" * 65):
        body = msgspec.json.encode(good).replace(b'"D042"', msgspec.json.encode(bad))
        with pytest.raises(ev.EventError):
            ev.decode_event(body)
