"""``keys generate`` and ``proxy`` from the shell."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import zmq
from fake_table import FakeTable

from table_controller.cli import main
from table_controller.events import decode
from table_controller.publish import EventPublisher, load_keypair

ROOT = Path(__file__).resolve().parents[1]


def test_keys_generate_writes_a_loadable_pair(tmp_path, capsys):
    assert main(["keys", "generate", "--name", "table-T01", "--dir", str(tmp_path), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    public, secret = load_keypair(tmp_path / "table-T01.key_secret", need_secret=True)
    assert printed["public_key"] == public.decode()
    assert printed["secret_file"] == str(tmp_path / "table-T01.key_secret")
    assert (tmp_path / "table-T01.key_secret").stat().st_mode & 0o777 == 0o600


def test_keys_generate_refuses_to_overwrite(tmp_path, capsys):
    assert main(["keys", "generate", "--name", "d", "--dir", str(tmp_path)]) == 0
    assert main(["keys", "generate", "--name", "d", "--dir", str(tmp_path)]) == 2
    assert f"{tmp_path / 'd.key'} already exists" in capsys.readouterr().err


def test_proxy_command_forwards_and_stops_on_sigterm():
    proxy = subprocess.Popen(
        [sys.executable, "-m", "table_controller", "proxy", "--frontend", "tcp://127.0.0.1:0",
         "--backend", "tcp://127.0.0.1:0", "--json"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    context = zmq.Context()
    try:
        bound = json.loads(proxy.stdout.readline())
        sub = context.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.subscribe(b"T07.")
        sub.connect(bound["backend"])
        with EventPublisher("T07", f"connect:{bound['frontend']}", "tcp://127.0.0.1:0",
                            context=context) as publisher:
            table = FakeTable(publisher, table="T07")
            for _ in range(300):
                table.heartbeat()
                if sub.poll(20):
                    break
            while sub.poll(50):
                sub.recv_multipart()
            event = table.emit("table.state", state="paused", reason="dealer change")
            assert decode(sub.recv_multipart()) == event
        sub.close(linger=0)
        proxy.send_signal(signal.SIGTERM)
        assert proxy.wait(10) == 0
    finally:
        if proxy.poll() is None:
            proxy.kill()
        context.term()
