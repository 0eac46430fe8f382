"""The reviewer's page (`report.html`, `kcm trace show --html`): the messages derived from a known
counterexample, and the page opened in a real browser (headless Chromium, Debian's `chromium`):
no script, the lifelines in the DOM, the violating step highlighted in a screenshot."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys
import zlib

import pytest
from kcm.checker.engine.itf import read_itf
from kcm.checker.html_report import HIGHLIGHT, sequence_svg, trace_page
from kcm.checker.sequence import Event, step_events

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: The fill of the ZooKeeper lifeline's header box in the sequence diagram.
ZOOKEEPER_BOX = "#e6eefc"
#: The violating step of V6's counterexample: its last (`IsrNonEmpty` fails after 4 steps).
VIOLATING_STEP = 4


def _band(svg: str) -> tuple[int, int]:
    """Top and height of the red band of a sequence diagram."""
    band = re.findall(r'<rect class="violating-step" x="\d+" y="(\d+)" width="\d+" height="(\d+)"', svg)
    assert len(band) == 1, band
    return int(band[0][0]), int(band[0][1])


def _step_rows(svg: str) -> dict[int, int]:
    """Where each step's row is in a sequence diagram: the baseline of its number, left of the diagram."""
    rows = re.findall(r'<text x="8" y="(\d+)" font-weight="bold" fill="#[0-9a-f]+">(\d+)</text>', svg)
    assert len(rows) == VIOLATING_STEP, rows
    return {int(step): int(y) for y, step in rows}


def _steps_in(top: int, bottom: int, svg: str) -> list[int]:
    """The steps whose row lies between two heights of the sequence diagram."""
    return [step for step, y in _step_rows(svg).items() if top <= y <= bottom]


def test_the_v6_counterexample_is_drawn_as_its_messages_and_writes(v6_run) -> None:
    """KAFKA-708 put back (V6): the controller dies, its session expires, and the new controller
    writes partition 0's state with an empty ISR. Each step's arrows come from the states."""
    trace = read_itf(v6_run / "IsrNonEmpty.itf.json")
    steps = [step_events(trace, i) for i in range(1, len(trace.states))]
    assert len(steps) == 4
    first, crash, expiry, bad = steps
    assert Event("zkwrite", "broker 0", "ZooKeeper",
                 "multi: create /controller {brokerid: 0} + set /controller_epoch = 1") in first
    assert Event("zkwrite", "broker 0", "ZooKeeper",
                 "create partition 0 state → v0: leader 0, leader epoch 0, isr [0], c.epoch 1") in first
    assert Event("send", "broker 0", "broker 0", "LeaderAndIsr(c0,e1,be1) [p0: leader epoch 0]") in first
    assert Event("send", "broker 0", "broker 1", "UpdateMetadata(c0,e1,be1)") in first
    assert [e.label for e in crash] == ["✗ crash", "✗ 4 queued request(s) lost"]
    assert [e.label for e in expiry] == ["✗ ZooKeeper session expired: its ephemerals go"]
    assert Event("zkwrite", "broker 1", "ZooKeeper",
                 "set partition 0 state → v1 (expects v0): leader -1, leader epoch 1, isr [], c.epoch 2") in bad
    svg = sequence_svg(trace)
    assert svg.count('class="violating-step"') == 1 and f'fill="{HIGHLIGHT}"' in svg
    top, height = _band(svg)
    assert _steps_in(top, top + height, svg) == [VIOLATING_STEP]   # the band is behind the violating step's row
    assert svg.count('class="lane"') == 3   # ZooKeeper, broker 0, broker 1


def test_explore_writes_report_html_beside_report_json(v6_run) -> None:
    page = (v6_run / "report.html").read_text()
    report = json.loads((v6_run / "report.json").read_text())
    assert report["verdict"] == "violation"
    assert "<script" not in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") \
        .replace("http://www.w3.org/1999/xlink", "")
    assert page.count("<svg") == 3   # the counterexample and the two state machines
    for needle in ("IsrNonEmpty", "violated after 4 steps", "not reached (incomplete)", "UNTAKEN",
                   "LeaderAndIsr(c0,e1,be1)", "Legend"):
        assert needle in page, needle
    # The state table marks the same step's row, and only it.
    assert re.findall(r'<tr class="violating"><td>(\d+)</td>', page) == [str(VIOLATING_STEP)]


def test_trace_show_html_writes_the_trace_page(v6_run, tmp_path) -> None:
    target = tmp_path / "trace.html"
    proc = subprocess.run([sys.executable, "-m", "kcm.cli", "trace", "show", str(v6_run / "IsrNonEmpty.itf.json"),
                           "--html", str(target)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Legend" in proc.stdout and "zk.watches[b]" in proc.stdout   # the text has the legend too
    assert target.read_text() == trace_page(read_itf(v6_run / "IsrNonEmpty.itf.json"),
                                            source=str(v6_run / "IsrNonEmpty.itf.json"))


# ---- in a real browser --------------------------------------------------------------------------


def _chromium(*args: str) -> subprocess.CompletedProcess:
    if CHROMIUM is None:
        pytest.fail("Chromium is not installed: install the Debian package `chromium` (`make test` does it "
                    "through scripts/sysdeps.sh)", pytrace=False)
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--enable-logging=stderr", "--v=0", *args], capture_output=True, text=True, timeout=180)


def test_the_page_opens_in_chromium_with_its_lifelines_and_no_script(v6_run) -> None:
    proc = _chromium("--dump-dom", (v6_run / "report.html").as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert "<script" not in dom
    assert "Uncaught" not in proc.stderr and "CONSOLE" not in proc.stderr, proc.stderr[-2000:]
    lanes = [part.split("</text>")[0].split(">")[-1] for part in dom.split('class="lane"')[1:]]
    assert lanes == ["ZooKeeper", "broker 0", "broker 1"]
    assert 'class="violating-step"' in dom


def _png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB(A) rows of a non-interlaced 8-bit PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0
            channels = 4 if colour == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, previous = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, row = line[0], bytearray(line[1:])
        for i in range(stride):
            left = row[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                row[i] = (row[i] + left) & 255
            elif kind == 2:
                row[i] = (row[i] + up) & 255
            elif kind == 3:
                row[i] = (row[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                row[i] = (row[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(row))
        previous = row
    return width, channels, rows


def test_a_screenshot_shows_the_violating_step_highlighted(v6_run, tmp_path) -> None:
    shot = tmp_path / "shot.png"
    proc = _chromium("--window-size=1400,1100", f"--screenshot={shot}", (v6_run / "report.html").as_uri())
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    width, channels, rows = _png_pixels(shot.read_bytes())

    def rows_of(colour: str, wider_than: int) -> list[int]:
        target = bytes.fromhex(colour[1:])
        return [y for y, row in enumerate(rows)
                if sum(row[x * channels:x * channels + 3] == target for x in range(0, width, 4)) * 4 > wider_than]

    band = rows_of(HIGHLIGHT, 200)
    # The highlighted step is one band of rows tens of pixels high, below the page's header...
    assert len(band) > 40 and band == list(range(band[0], band[-1] + 1)), band
    assert band[0] > 150
    # ...and it is drawn behind the violating step's row, and no other. The ZooKeeper lifeline's
    # header box (drawn from y = 6 of the diagram) places the diagram on the screen.
    origin = rows_of(ZOOKEEPER_BOX, 80)[0] - 6
    svg = (v6_run / "report.html").read_text()
    assert _steps_in(band[0] - origin, band[-1] - origin, svg) == [VIOLATING_STEP], (band[0], origin, _step_rows(svg))


def test_the_state_machines_carry_how_often_each_edge_was_taken(tmp_path) -> None:
    """The sequential explorer counts the generated transitions that take each table edge; the
    page writes the count on every taken edge and marks every other edge UNTAKEN."""
    from kcm.checker.engine.bfs import explore
    from kcm.model.checking.kafka_model import KafkaModel

    from kcm.config import load_preset

    coverage = explore(KafkaModel(load_preset("tiny"))).coverage
    assert set(coverage.edge_counts) == set(coverage.edges_taken) and all(coverage.edge_counts.values())
    proc = subprocess.run([sys.executable, "-m", "kcm.cli", "explore", "--preset", "tiny", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "report.html").read_text()
    taken = [e for e in coverage.edges_taken if e not in coverage.outside_universe]
    assert page.count("×</text>") == len(taken) and page.count("UNTAKEN") == coverage.edges_total - len(taken)
    for edge in taken:
        assert f"{coverage.edge_counts[edge]:,}×" in page


def test_known_kafka_behaviours_are_listed_as_such() -> None:
    """A report that carries known 2.6 violations (`known_violations`) shows them as known, not as
    failures; one without the field shows no such section."""
    from kcm.checker.html_report import report_page

    known = [{"invariant": "SomeInvariant", "kind": "safety", "trace_length": 7,
              "finding": "Findings 9: Kafka 2.6 does this"}]
    doc = {"verdict": "pass", "preset": "p", "violations": [], "goals": {}, "coverage": {}, "proofs": [],
           "known_violations": known}
    props = {"SomeInvariant": ("safety", "says something"), "Other": ("safety", "says more")}
    page = report_page(doc, properties=props, config={}, traces={}, complete=True, known=known)
    assert "Known Kafka 2.6 behaviours" in page
    assert "SomeInvariant (safety, after 7 steps): Findings 9: Kafka 2.6 does this" in page
    assert page.count('<td class="known">known Kafka 2.6 behaviour: Findings 9: Kafka 2.6 does this</td>') == 1
    assert page.count('<td class="ok">held</td>') == 1
    plain = report_page({**doc, "known_violations": []}, properties=props, config={}, traces={}, complete=True)
    assert "Known Kafka 2.6 behaviours" not in plain and plain.count('<td class="ok">held</td>') == 2


def test_the_page_renders_the_reports_outcomes() -> None:
    """A report with `outcomes` is rendered from them, word for word, whatever its other fields
    say: the page, the terminal and JUnit render one value."""
    from kcm.checker.html_report import report_page

    outcomes = [{"name": "A", "category": "invariant", "status": "known", "text": "known Kafka 2.6 behaviour: F1"},
                {"name": "B", "category": "invariant", "status": "not violated (incomplete)",
                 "text": "not violated in the explored part (incomplete)"},
                {"name": "deadlock", "category": "invariant", "status": "held", "text": "held"},
                {"name": "G", "category": "goal", "status": "not reached (incomplete)",
                 "text": "not reached (incomplete)"}]
    doc = {"verdict": "incomplete", "preset": "p", "violations": [], "goals": {"G": False}, "coverage": {},
           "proofs": [], "outcomes": outcomes, "summary": "1 invariant held, 1 known 2.6 behaviour"}
    page = report_page(doc, properties={"A": ("safety", "says A")}, config={}, traces={}, complete=False)
    assert "<h2>Properties checked (3)</h2>" in page and "<p><b>1 invariant held, 1 known 2.6 behaviour</b></p>" in page
    assert '<td class="known">known Kafka 2.6 behaviour: F1</td>' in page and "says A" in page
    assert '<td class="open">not violated in the explored part (incomplete)</td>' in page
    assert '<td class="ok">held</td>' in page and '<td class="open">not reached (incomplete)</td>' in page
