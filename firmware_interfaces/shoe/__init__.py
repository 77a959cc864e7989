"""The smart shoe: SLP/1 codec, controller-side driver, simulated shoe with fault injection.

Layers, each testable alone: :mod:`.codec` (bytes <-> frames), :mod:`.link`
and :mod:`.device_link` (the protocol's two ends as pure state machines),
:mod:`.driver` and :mod:`.sim` (threads and transports). See docs/shoe.md.
"""

from firmware_interfaces.shoe.codec import (
    CODECS,
    Codec,
    CodecCounters,
    Frame,
    SLP1Codec,
    codec_by_name,
    crc16,
)
from firmware_interfaces.shoe.device_link import DeviceLink, ShoeInfo
from firmware_interfaces.shoe.driver import ShoeDriver, open_url
from firmware_interfaces.shoe.errors import (
    FaultPlanError,
    MalformedFrame,
    ShoeError,
    ShoeLinkDown,
    ShoeProtocolError,
    ShoeScriptError,
)
from firmware_interfaces.shoe.events import (
    CardDrawn,
    CutCard,
    Fault,
    Gate,
    Hello,
    Lid,
    LinkDown,
    LinkState,
    LinkUp,
    NewShoe,
    NoRead,
    ShoeEmpty,
    ShoeEvent,
    ShoeStatus,
    event_to_dict,
)
from firmware_interfaces.shoe.faults import FaultPlan, FaultyTransport
from firmware_interfaces.shoe.guarantees import LINE_READER, SMART_SHOE, ReaderGuarantees
from firmware_interfaces.shoe.link import ControllerLink
from firmware_interfaces.shoe.ports import FdPort, PtyPort, SerialPort, TcpPort, open_pty_pair
from firmware_interfaces.shoe.protocols import SHOE_PROTOCOLS, ShoeBackend, open_shoe
from firmware_interfaces.shoe.sim import SimulatedShoe
from firmware_interfaces.shoe.stats import LinkStats
from firmware_interfaces.shoe.timing import DEFAULT_TIMING, LinkTiming

__all__ = [
    "CODECS", "CardDrawn", "Codec", "CodecCounters", "ControllerLink", "CutCard", "DEFAULT_TIMING",
    "DeviceLink", "Fault", "FaultPlan", "FaultPlanError", "FaultyTransport", "FdPort", "Frame",
    "Gate",
    "Hello", "Lid", "LinkDown", "LinkState", "LinkStats", "LinkTiming", "LinkUp", "MalformedFrame",
    "NewShoe", "NoRead", "PtyPort", "SLP1Codec", "SerialPort", "ShoeDriver", "ShoeEmpty",
    "ShoeError", "ShoeEvent", "ShoeInfo", "ShoeLinkDown", "ShoeProtocolError", "ShoeScriptError",
    "ShoeStatus", "SimulatedShoe", "TcpPort", "codec_by_name", "crc16", "event_to_dict",
    "open_pty_pair", "open_url", "SHOE_PROTOCOLS", "ShoeBackend", "open_shoe", "ReaderGuarantees",
    "LINE_READER", "SMART_SHOE",
]
