"""The behaviour suite against a real shoe, when SHOE_DEVICE names one (skipped otherwise).

    SHOE_DEVICE=/dev/ttyUSB0 python -m pytest tests/test_shoe_real.py
    SHOE_DEVICE=socket://10.0.0.7:4001 python -m pytest tests/test_shoe_real.py
"""

from __future__ import annotations

import os

import pytest

from firmware_interfaces.shoe import Gate, Hello, ShoeDriver, ShoeStatus, open_url
from firmware_interfaces.shoe.testing import EventRecorder

DEVICE = os.environ.get("SHOE_DEVICE")
pytestmark = pytest.mark.skipif(not DEVICE, reason="set SHOE_DEVICE to test a real shoe")


def test_real_shoe_anchors_a_session_and_answers_lock_and_status() -> None:
    assert DEVICE is not None
    rec = EventRecorder()
    with ShoeDriver(open_url(DEVICE), listener=rec) as driver:
        assert rec.wait_for_type(Hello, 10.0), "no HELLO answering our RESET"
        driver.lock()
        assert rec.wait_for(lambda ev: any(isinstance(e, Gate) and e.is_locked for e in ev), 5.0)
        driver.status()
        assert rec.wait_for_type(ShoeStatus, 5.0)
        assert rec.of_type(ShoeStatus)[-1].gate_locked is True
