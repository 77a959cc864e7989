"""Fault plans: parsing with clear errors, and what each fault does to a frame."""

from __future__ import annotations

import pytest

from firmware_interfaces.shoe import FaultPlan, FaultyTransport, SLP1Codec
from firmware_interfaces.shoe.errors import FaultPlanError

FRAME = b"$17,CARD,TS,RO,143*2252\r\n"


def test_parse_the_issue_example() -> None:
    plan = FaultPlan.parse("drop=0.05,corrupt=0.05,dup=0.05,garbage=0.01,unplug-every=30")
    assert (plan.drop, plan.corrupt, plan.dup, plan.garbage) == (0.05, 0.05, 0.05, 0.01)
    assert (plan.unplug_every, plan.unplug_for) == (30.0, 3.0)
    assert plan.describe() == (
        "drop=0.05,corrupt=0.05,dup=0.05,garbage=0.01,unplug-every=30,unplug-for=3"
    )


def test_empty_spec_is_a_clean_plan() -> None:
    plan = FaultPlan.parse("")
    assert plan.is_clean and plan.apply(FRAME) == FRAME and plan.describe() == "none"


@pytest.mark.parametrize("spec,message", [
    ("jitter=1", "unknown fault 'jitter': known faults are "
                 "drop, corrupt, dup, garbage, unplug-every, unplug-for"),
    ("drop", "fault 'drop': expected key=value, e.g. drop=0.05"),
    ("drop=lots", "fault drop='lots': not a number"),
    ("drop=nan", "fault drop='nan': not a finite number"),
    ("corrupt=1.2", "fault corrupt=1.2: a probability must be in 0..1"),
    ("unplug-every=0", "fault unplug-every=0.0: must be > 0 seconds"),
])
def test_bad_specs_name_the_key(spec: str, message: str) -> None:
    with pytest.raises(FaultPlanError) as e:
        FaultPlan.parse(spec)
    assert str(e.value) == message


def test_each_fault_at_probability_one() -> None:
    assert FaultPlan(drop=1).apply(FRAME) == b""
    assert FaultPlan(dup=1).apply(FRAME) == FRAME + FRAME
    corrupted = FaultPlan(corrupt=1, seed=3).apply(FRAME)
    assert len(corrupted) == len(FRAME) and sum(a != b for a, b in zip(corrupted, FRAME, strict=True)) == 1
    garbage = FaultPlan(garbage=1, seed=3).apply(FRAME)
    assert garbage.endswith(FRAME) and 1 <= len(garbage) - len(FRAME) <= 40


def test_seeded_plans_repeat_exactly() -> None:
    spec = "drop=0.2,corrupt=0.2,dup=0.2,garbage=0.2"
    a, b = FaultPlan.parse(spec, seed=9), FaultPlan.parse(spec, seed=9)
    assert [a.apply(FRAME) for _ in range(50)] == [b.apply(FRAME) for _ in range(50)]


class Sink:
    def __init__(self) -> None:
        self.data = b""
        self.timeout = None

    def write(self, data: bytes) -> int:
        self.data += data
        return len(data)


def test_faulty_transport_faults_each_frame_of_a_write_separately() -> None:
    sink = Sink()
    transport = FaultyTransport(sink, FaultPlan(dup=1))
    codec = SLP1Codec()
    two = codec.encode(1, "ACK", ("5F3A9C01",)) + codec.encode(7, "LOCK")
    transport.write(two)
    assert [f.seq for f in codec.feed(sink.data)] == [1, 1, 7, 7]
    transport.timeout = 0.5  # attributes pass through to the wrapped transport
    assert sink.timeout == 0.5
