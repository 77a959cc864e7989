"""Backends by name: one small lazy registry per kind of device, chosen by configuration keys."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from firmware_interfaces.camera.sources import CAMERA_SOURCES, ImageFolderSource, open_source
from firmware_interfaces.errors import BackendUnavailable, DeviceConfigError, UnknownBackend
from firmware_interfaces.registry import BackendRegistry
from firmware_interfaces.shoe.errors import ShoeProtocolError
from firmware_interfaces.shoe.protocols import protocol_class
from table_controller.config import parse_config
from table_controller.errors import ConfigError
from table_controller.panel import PIN_FACTORIES, PanelError, make_pin_factory
from tests.test_config import example, mutate


def test_an_unknown_name_is_refused_listing_the_known_ones() -> None:
    with pytest.raises(UnknownBackend, match=r"^unknown camera source 'usb'; known: files, opencv, sim$"):
        CAMERA_SOURCES.load("usb")
    with pytest.raises(ShoeProtocolError, match=r"^unknown card reader protocol 'acme'; known: lines, slp1$"):
        protocol_class("acme")
    assert PIN_FACTORIES.names() == ("lgpio", "mock", "native", "pigpio", "rpigpio")


def test_a_backend_whose_module_is_missing_is_named_with_the_cause() -> None:
    registry: BackendRegistry[object] = BackendRegistry("widget", {"gone": "no_such_module_xyz:Widget"})
    with pytest.raises(BackendUnavailable, match=r"^widget 'gone' cannot be loaded: No module named 'no_such"):
        registry.load("gone")


def test_a_registered_backend_is_imported_only_when_chosen() -> None:
    """Naming the registries imports no backend module: a table's unused backends need nothing."""
    probe = (
        "import sys\n"
        "from firmware_interfaces.shoe.protocols import SHOE_PROTOCOLS\n"
        "from table_controller.panel import PIN_FACTORIES\n"
        "assert 'firmware_interfaces.shoe.lines' not in sys.modules\n"
        "assert 'gpiozero.pins.mock' not in sys.modules, 'mock'\n"
        "PIN_FACTORIES.load('mock'); SHOE_PROTOCOLS.load('lines')\n"
        "assert 'gpiozero.pins.mock' in sys.modules and 'firmware_interfaces.shoe.lines' in sys.modules\n"
        "assert 'gpiozero.pins.lgpio' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_a_vendor_backend_registers_by_name_and_is_loaded_once() -> None:
    registry: BackendRegistry[object] = BackendRegistry("card reader protocol", {})
    registry.register("acme", "firmware_interfaces.shoe.driver:ShoeDriver")
    from firmware_interfaces.shoe.driver import ShoeDriver

    assert "acme" in registry and list(registry) == ["acme"]
    assert registry.load("acme") is ShoeDriver and registry.load("acme") is ShoeDriver
    with pytest.raises(ValueError, match="target 'ShoeDriver' is not 'module:attribute'"):
        registry.register("bad", "ShoeDriver")


def test_a_camera_source_is_opened_by_its_kind_not_by_what_the_target_looks_like(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    cv2.imwrite(str(tmp_path / "a.png"), np.zeros((4, 4, 3), np.uint8))
    assert isinstance(open_source("files", str(tmp_path)), ImageFolderSource)
    with pytest.raises(DeviceConfigError, match="cannot be opened"):
        open_source("opencv", str(tmp_path))  # a folder is not guessed to be "files"


def camera_table(**camera: object) -> dict:  # type: ignore[type-arg]
    data = example()
    data["sources"] = {"cards": ["shoe", "camera"]}
    data["camera"] = camera
    return data


def test_camera_kind_chooses_the_source() -> None:
    config = parse_config(camera_table(kind="files", source="frames/", calibration="cal"), "T01.toml")
    assert config.camera is not None and (config.camera.kind, config.camera.source) == ("files", "frames/")
    config = parse_config(camera_table(kind="sim"), "T01.toml")
    assert config.camera is not None and (config.camera.kind, config.camera.source) == ("sim", "svg-cards")
    config = parse_config(camera_table(source=0), "T01.toml")
    assert config.camera is not None and (config.camera.kind, config.camera.source) == ("opencv", "0")


def test_an_old_sim_prefix_is_read_as_kind_sim() -> None:
    config = parse_config(camera_table(source="sim:kde-oxygen"), "T01.toml")
    assert config.camera is not None and (config.camera.kind, config.camera.source) == ("sim", "kde-oxygen")


def test_an_unknown_camera_kind_or_a_sim_prefix_with_a_kind_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^T01.toml: camera.kind: must be one of files, opencv, sim, not 'usb'$"):
        parse_config(camera_table(kind="usb", source="0"), "T01.toml")
    with pytest.raises(ConfigError, match=r'^T01.toml: camera.source: with kind = "sim" the source is the deck'):
        parse_config(camera_table(kind="sim", source="sim:svg-cards"), "T01.toml")


def test_panel_gpio_names_a_registered_pin_factory() -> None:
    assert mutate(lambda d: d["panel"].update(gpio="wiringpi")) == (
        "T01.toml: panel.gpio: must be one of lgpio, mock, native, pigpio, rpigpio, not 'wiringpi'")
    data = example()
    data["panel"]["gpio"] = "lgpio"
    assert parse_config(data, "T01.toml").panel.gpio == "lgpio"


def test_a_pin_factory_is_made_by_name_and_an_unknown_one_is_a_panel_error() -> None:
    from gpiozero.pins.mock import MockFactory

    factory = make_pin_factory("mock")
    try:
        assert isinstance(factory, MockFactory)
    finally:
        factory.close()
    with pytest.raises(PanelError, match=r"panel.gpio: unknown panel pin factory 'x'; known: lgpio, mock"):
        make_pin_factory("x")
