"""Black-box evaluation of the product's card recognition through its command line only.

For every deck design:
  1. the 52 faces are written as AS.png ... KC.png and `table-controller calibrate templates
     --from-images` is run (exit status and self-test recorded; a refusal is a finding);
  2. for every simulated table (one camera pose, one felt, one layout of our own) a layout TOML is
     written, an empty frame rendered and `table-controller calibrate table --points ...` run with the
     four outline corners a technician would click;
  3. frames are rendered (scenes.py) and read with `table-controller camera recognize --json`, many
     frames per call; every reported card is matched to the ground truth by its centre.

Prints one JSON object on stdout; progress goes to stderr.

    python evaluate.py --decks svg-standard,svg-dondorf,svg-cards --frames 60 --seed 1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.dont_write_bytecode = True  # leave no __pycache__ in the repository
sys.path.insert(0, str(Path(__file__).resolve().parent))
import scenes  # noqa: E402

DEFAULT_TC = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "table-controller"
OUTCOMES = ("correct", "misplaced", "wrong", "no_read", "not_found")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run(cmd: list[str], timeout: float = 1800) -> dict:
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr, "s": round(time.time() - t0, 2)}
    except subprocess.TimeoutExpired as e:
        return {
            "rc": None,
            "stdout": e.stdout or "",
            "stderr": f"timeout after {timeout}s",
            "s": round(time.time() - t0, 2),
        }


def tail(text: str, n: int = 6) -> list[str]:
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    return lines[-n:]


def json_lines(text: str) -> list[dict]:
    out = []
    for ln in (text or "").splitlines():
        ln = ln.strip()
        if ln.startswith("{"):
            try:
                out.append(json.loads(ln))
            except json.JSONDecodeError:
                pass
    return out


# --------------------------------------------------------------------------------------------
# bands


def band(v: float, edges: list[float], labels: list[str]) -> str:
    for e, lab in zip(edges, labels, strict=False):
        if v < e:
            return lab
    return labels[-1]


def card_bands(fr: dict, card: dict) -> dict:
    c = fr["conditions"]
    glare = "off"
    if c["glare"]["on"]:
        glare = "on-this-card" if card.get("glare_cover", 0) > 0.05 else "on-elsewhere"
    return {
        **frame_bands(fr),
        "glare": glare,
        "card_size": f"{card['format']}-" + band(card["scale"], [0.985, 1.015], ["small", "nominal", "large"]),
        "upside_down": "yes" if card["upside_down"] else "no",
        "rotation": band(abs(card["rotation_deg"]), [3, 7], ["<3deg", "3-7deg", ">=7deg"]),
        "offset": band(math.hypot(*card["offset_mm"]), [2, 4], ["<2mm", "2-4mm", ">=4mm"]),
    }


def frame_bands(fr: dict) -> dict:
    c = fr["conditions"]
    return {
        "blur": band(c["blur_sigma"], [0.7, 1.2], ["0.3-0.7", "0.7-1.2", "1.2-1.7"]),
        "motion_blur": "yes" if c["motion_blur"]["on"] else "no",
        "noise": band(c["noise_sigma"], [3.0, 4.5], ["1.5-3", "3-4.5", "4.5-6"]),
        "jpeg": band(c["jpeg_quality"], [70, 85], ["55-69", "70-84", "85-95"]),
        "glare": "on" if c["glare"]["on"] else "off",
        "exposure": band(c["exposure_ev"], [-0.4, 0.4], ["under(<-0.4EV)", "normal", "over(>0.4EV)"]),
        "felt": fr["felt"],
        "line": fr["line"],
        "tilt": band(fr["tilt_deg"], [8, 16], ["0-8deg", "8-16deg", "16-25deg"]),
        "layout": fr.get("style", "?"),
    }


class Tally:
    def __init__(self):
        self.n = defaultdict(int)

    def add(self, key: str, k: int = 1):
        self.n[key] += k

    def as_dict(self) -> dict:
        d = {k: self.n.get(k, 0) for k in ("cards", *OUTCOMES, "phantom")}
        cards = d["cards"]
        d["read_rate"] = round(d["correct"] / cards, 4) if cards else None
        u = {k[len("unreadable_") :]: v for k, v in self.n.items() if k.startswith("unreadable_")}
        if u:
            d["unreadable"] = u
        return d


# --------------------------------------------------------------------------------------------
# scoring


def score_frame(truth: dict, reported: list[dict] | None, tol_px: float):
    """-> (outcome per truth card, phantoms); outcome dict has kind, reported card."""
    cards = truth["cards"]
    if reported is None:
        return [{"kind": "not_found", "rep": None} for _ in cards], []
    rep_c = []
    for r in reported:
        try:
            cs = np.asarray(r["corners"], dtype=float).reshape(4, 2)
            rep_c.append(cs.mean(0))
        except Exception:  # a report without usable corners cannot be placed
            rep_c.append(np.array([1e9, 1e9]))
    pairs = []
    for i, c in enumerate(cards):
        tc = np.asarray(c["centre_px"])
        for j, rc in enumerate(rep_c):
            d = float(np.linalg.norm(tc - rc))
            if d <= tol_px:
                pairs.append((d, i, j))
    pairs.sort()
    ti, rj = {}, set()
    for d, i, j in pairs:
        if i in ti or j in rj:
            continue
        ti[i] = (j, d)
        rj.add(j)
    outcomes = []
    for i, c in enumerate(cards):
        if i not in ti:
            outcomes.append({"kind": "not_found", "rep": None})
            continue
        j, d = ti[i]
        r = reported[j]
        code = r.get("code")
        if code is None:
            kind = "no_read"
        elif normalise(code) != c["code"]:
            kind = "wrong"
        elif r.get("position") != c["slot"]:
            kind = "misplaced"
        else:
            kind = "correct"
        if not c.get("readable", True) and kind in ("correct", "misplaced"):
            kind = "wrong"  # a code for a card that cannot be read is a guess
        outcomes.append({"kind": kind, "rep": r, "dist_px": round(d, 2)})
    phantoms = [reported[j] for j in range(len(reported)) if j not in rj]
    return outcomes, phantoms


def normalise(code: str) -> str:
    c = str(code).strip().upper()
    if c.startswith("10"):
        c = "T" + c[2:]
    return c


# --------------------------------------------------------------------------------------------


def evaluate_deck(deck_name: str, args, tc: str, work: Path, findings: list) -> dict:
    t_deck = time.time()
    res: dict = {"deck": deck_name}
    rng = np.random.default_rng([args.seed, zlib.crc32(deck_name.encode())])
    try:
        deck = scenes.Deck(deck_name)
    except Exception as e:  # art we cannot render is our limitation, not the product's
        res["error"] = f"cannot render deck art: {e}"
        log(f"[{deck_name}] cannot render art: {e}")
        return res
    res["format"] = deck.format
    res["card_mm"] = list(deck.card_mm)
    res["art_aspect"] = round(deck.aspect, 4)
    dwork = work / deck_name
    dwork.mkdir(parents=True, exist_ok=True)

    # 1. templates from the deck's images
    faces = dwork / "deck-images"
    deck.write_faces(faces)
    cal_deck = dwork / "cal-templates"
    log(f"[{deck_name}] calibrate templates --from-images ({deck.format} art, aspect {deck.aspect:.3f}) ...")
    r = run([tc, "calibrate", "templates", "--from-images", str(faces), "--out", str(cal_deck), "--json"])
    tj = json_lines(r["stdout"])
    res["templates"] = {
        "exit_status": r["rc"],
        "seconds": r["s"],
        "report": tj[-1] if tj else None,
        "stderr_tail": tail(r["stderr"], 4) if r["rc"] != 0 else [],
    }
    st = (tj[-1].get("self_test") if tj and isinstance(tj[-1], dict) else None) or {}
    if r["rc"] != 0:
        res["templates"]["refused"] = True
        findings.append(
            {
                "deck": deck_name,
                "what": "calibrate templates exited non-zero",
                "exit_status": r["rc"],
                "self_test": st,
                "stderr": tail(r["stderr"], 3),
            }
        )
        log(f"[{deck_name}] templates REFUSED (exit {r['rc']}): {st or tail(r['stderr'], 2)}")
    else:
        log(f"[{deck_name}] templates ok in {r['s']}s, self-test {st.get('correct')}/{st.get('cards')}")
    if not (cal_deck / "templates.json").exists() and not any(cal_deck.glob("*")):
        res["error"] = "no calibration written: deck refused, nothing to recognise with"
        return res

    # 2./3. tables, frames, recognition
    n_tables = max(1, math.ceil(args.frames / args.frames_per_table))
    W, H = args.size
    tol = args.tolerance * W / 1280.0
    total = Tally()
    bands: dict[str, dict[str, Tally]] = defaultdict(lambda: defaultdict(Tally))
    examples: list[dict] = []
    tables_out = []
    truth_f = open(dwork / "truth.jsonl", "w")
    frames_done = 0
    render_s = recog_s = 0.0
    recog_ms = []
    # felt colours and tilt bands are dealt out over the tables (shuffled) so every deck sees them all
    felts = [str(f) for _ in range(n_tables // len(scenes.FELTS) + 1) for f in rng.permutation(list(scenes.FELTS))]
    tilts = [t for _ in range(n_tables // 3 + 1) for t in [(0.0, 8.0), (8.0, 16.0), (16.0, 25.0)]]
    tilts = [tilts[i] for i in rng.permutation(len(tilts))]
    for ti in range(n_tables):
        nfr = min(args.frames_per_table, args.frames - frames_done)
        if nfr <= 0:
            break
        tname = f"indep-{deck_name.replace('svg-', '')}-{ti:02d}"
        t0 = time.time()
        table = scenes.make_table(rng, tname, deck.card_mm, size=(W, H), felt=felts[ti], tilt_range=tilts[ti])
        tdir = dwork / tname
        tdir.mkdir(exist_ok=True)
        layout = tdir / f"{tname}.toml"
        layout.write_text(table.layout_toml())
        empty = scenes.render_frame(rng, table, deck, empty=True, jitter=False)
        (tdir / "empty.jpg").write_bytes(empty.jpeg)
        pts = scenes.outline_points(table, rng, click_sigma_px=args.click_sigma)
        cal = tdir / "cal"
        if cal.exists():
            shutil.rmtree(cal)
        shutil.copytree(cal_deck, cal)
        pts_arg = [f"{x:.1f},{y:.1f}" for x, y in pts]
        r = run(
            [
                tc,
                "calibrate",
                "table",
                "--image",
                str(tdir / "empty.jpg"),
                "--layout",
                str(layout),
                "--points",
                *pts_arg,
                "--out",
                str(cal),
                "--json",
            ],
            timeout=300,
        )
        tinfo = {
            "table": tname,
            **{k: v for k, v in table.summary().items() if k not in ("slots", "words")},
            "n_slots": len(table.slots),
            "points": pts_arg,
            "calibrate_exit": r["rc"],
            "calibrate_report": (json_lines(r["stdout"]) or [None])[-1],
        }
        if r["rc"] != 0:
            tinfo["calibrate_stderr"] = tail(r["stderr"], 3)
            findings.append(
                {
                    "deck": deck_name,
                    "table": tname,
                    "what": "calibrate table --points failed",
                    "exit_status": r["rc"],
                    "stderr": tail(r["stderr"], 3),
                }
            )
            log(f"[{deck_name}] {tname}: calibrate table FAILED: {tail(r['stderr'], 2)}")
        # frames
        frames = []
        for k in range(nfr):
            fr = scenes.render_frame(rng, table, deck)
            fname = tdir / f"frame_{frames_done + k:04d}.jpg"
            fname.write_bytes(fr.jpeg)
            fr.truth["file"] = str(fname.relative_to(work))
            fr.truth["style"] = table.style
            frames.append((fname, fr.truth))
        render_s += time.time() - t0
        reported: dict[str, list | None] = {}
        if r["rc"] == 0:
            t1 = time.time()
            base = [tc, "camera", "recognize", "--calibration", str(cal), "--json"]
            if args.threshold is not None:
                base += ["--threshold", str(args.threshold)]
            files = [str(f) for f, _ in frames]

            def recognise(base=base, files=files, layout=layout):
                extra = ["--layout", str(layout)] if args.layout_override_needed else []
                return run(base + extra + files)

            rr = recognise()
            if rr["rc"] != 0 and not args.layout_override_needed and "layout" in rr["stderr"]:
                findings.append(
                    {
                        "deck": deck_name,
                        "table": tname,
                        "what": "camera recognize cannot find the layout that calibrate table was given as a file: "
                        "table.json names it only; --layout FILE has to be passed again",
                        "exit_status": rr["rc"],
                        "stderr": tail(rr["stderr"], 2),
                    }
                )
                log(
                    f"[{deck_name}] recognize without --layout failed ({tail(rr['stderr'], 1)}); retrying with --layout"
                )
                args.layout_override_needed = True
                rr = recognise()
            if rr["rc"] not in (0, 2) and not json_lines(rr["stdout"]):
                # the command died before reading any frame (e.g. a traceback): a finding; try once more
                findings.append(
                    {
                        "deck": deck_name,
                        "table": tname,
                        "what": "camera recognize crashed; retried once",
                        "exit_status": rr["rc"],
                        "stderr": tail(rr["stderr"], 3),
                    }
                )
                log(f"[{deck_name}] {tname}: recognize CRASHED (exit {rr['rc']}): {tail(rr['stderr'], 1)}; retrying")
                time.sleep(2)
                rr = recognise()
                tinfo["recognize_retried"] = True
            recog_s += time.time() - t1
            (tdir / "recognize.jsonl").write_text(rr["stdout"])
            tinfo["recognize_exit"] = rr["rc"]
            if rr["rc"] not in (0,):
                tinfo["recognize_stderr"] = tail(rr["stderr"], 3)
                findings.append(
                    {
                        "deck": deck_name,
                        "table": tname,
                        "what": "camera recognize exited non-zero",
                        "exit_status": rr["rc"],
                        "stderr": tail(rr["stderr"], 3),
                    }
                )
            for rec in json_lines(rr["stdout"]):
                reported[os.path.abspath(rec.get("image", ""))] = rec.get("cards")
                if isinstance(rec.get("ms"), (int, float)):
                    recog_ms.append(rec["ms"])
            if args.keep and frames:  # overlay of the first frame for the technician's eye
                run(
                    [
                        tc,
                        "calibrate",
                        "check",
                        "--calibration",
                        str(cal),
                        "--layout",
                        str(layout),
                        "--image",
                        str(frames[0][0]),
                        "--out",
                        str(tdir / "overlay-check.png"),
                    ],
                    timeout=300,
                )
        # score
        tcount = Tally()
        for fname, truth in frames:
            reps = reported.get(os.path.abspath(str(fname)))
            outcomes, phantoms = score_frame(truth, reps, tol)
            truth["reported"] = reps
            truth["outcomes"] = [o["kind"] for o in outcomes]
            truth_f.write(json.dumps(truth) + "\n")
            fb = frame_bands(truth)
            for card, o in zip(truth["cards"], outcomes, strict=False):
                cb = card_bands(truth, card)
                key = o["kind"] if card["readable"] else "unreadable_" + o["kind"]
                for tl in (total, tcount):
                    if card["readable"]:
                        tl.add("cards")
                        tl.add(o["kind"])
                    else:
                        tl.add(key)
                for dim, val in cb.items():
                    t_ = bands[dim][val]
                    if card["readable"]:
                        t_.add("cards")
                        t_.add(o["kind"])
                    else:
                        t_.add(key)
                if o["kind"] != "correct" and not (not card["readable"] and o["kind"] in ("no_read", "not_found")):
                    rep = o["rep"] or {}
                    examples.append(
                        {
                            "kind": o["kind"] if card["readable"] else "unreadable_" + o["kind"],
                            "frame": truth["file"],
                            "truth": card["code"],
                            "slot": card["slot"],
                            "centre_px": card["centre_px"],
                            "reported": rep.get("code"),
                            "reported_position": rep.get("position"),
                            "confidence": rep.get("confidence"),
                            "upside_down": card["upside_down"],
                            "rotation_deg": card["rotation_deg"],
                            "card_height_px": card["height_px"],
                            "glare_cover": card["glare_cover"],
                            "conditions": {
                                **{k: v for k, v in cb.items() if k not in ("layout",)},
                                "blur_sigma": truth["conditions"]["blur_sigma"],
                                "noise_sigma": truth["conditions"]["noise_sigma"],
                                "jpeg_quality": truth["conditions"]["jpeg_quality"],
                                "exposure_ev": truth["conditions"]["exposure_ev"],
                                "tilt_deg": truth["tilt_deg"],
                            },
                        }
                    )
            for p in phantoms:
                total.add("phantom")
                tcount.add("phantom")
                for dim, val in fb.items():
                    bands[dim][val].add("phantom")
                cs = np.asarray(p.get("corners", [[0, 0]] * 4), float).reshape(-1, 2).mean(0)
                examples.append(
                    {
                        "kind": "phantom",
                        "frame": truth["file"],
                        "reported": p.get("code"),
                        "reported_position": p.get("position"),
                        "confidence": p.get("confidence"),
                        "centre_px": [round(float(v), 1) for v in cs],
                        "conditions": {k: v for k, v in fb.items() if k != "layout"},
                    }
                )
        tinfo["result"] = tcount.as_dict()
        tables_out.append(tinfo)
        frames_done += len(frames)
        d = tcount.as_dict()
        log(
            f"[{deck_name}] {tname} ({table.style}, {table.felt}, tilt {table.pose.tilt_deg:.1f}deg): "
            f"{len(frames)} frames, {d['correct']}/{d['cards']} correct, wrong {d['wrong']}, no-read {d['no_read']}, "
            f"not found {d['not_found']}, misplaced {d['misplaced']}, phantom {d['phantom']}  "
            f"[{frames_done}/{args.frames}]"
        )
    truth_f.close()
    res["frames"] = frames_done
    res["totals"] = total.as_dict()
    res["by_condition"] = {dim: {v: t.as_dict() for v, t in sorted(vals.items())} for dim, vals in bands.items()}
    res["examples"] = pick_examples(examples, 20)
    res["n_errors"] = len(examples)
    res["tables"] = tables_out
    res["timing_s"] = {
        "render": round(render_s, 1),
        "recognize_calls": round(recog_s, 1),
        "recognize_ms_per_frame_reported": round(float(np.mean(recog_ms)), 1) if recog_ms else None,
        "deck_total": round(time.time() - t_deck, 1),
    }
    return res


def pick_examples(ex: list[dict], n: int) -> list[dict]:
    """Up to n examples, round robin over the kinds of error so that rare kinds show."""
    by = defaultdict(list)
    for e in ex:
        by[e["kind"]].append(e)
    out = []
    while len(out) < n and any(by.values()):
        for k in sorted(by):
            if by[k] and len(out) < n:
                out.append(by[k].pop(0))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Decks: " + ", ".join(scenes.decks_available()),
    )
    ap.add_argument(
        "--decks",
        default="svg-standard,svg-dondorf,svg-cards",
        help="comma-separated deck designs: KDE folder names (svg-standard, svg-dondorf, ...) or svg-cards",
    )
    ap.add_argument("--frames", type=int, default=60, help="frames per deck (default 60)")
    ap.add_argument(
        "--frames-per-table",
        type=int,
        default=6,
        help="frames per simulated table / camera pose / calibration (default 6)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--size", default="1280x720", choices=["1280x720", "1920x1080"])
    ap.add_argument("--out", help="keep everything (frames, truth.jsonl, layouts, calibrations) in this folder")
    ap.add_argument("--json", action="store_true", default=True, help="print one JSON object (the default)")
    ap.add_argument(
        "--tolerance",
        type=float,
        default=25.0,
        help="centre match distance in pixels at 1280 wide (default 25; scaled with --size)",
    )
    ap.add_argument(
        "--click-sigma",
        type=float,
        default=0.7,
        help="technician's click error on the outline corners, px (default 0.7)",
    )
    ap.add_argument("--threshold", type=float, default=None, help="passed to camera recognize --threshold")
    ap.add_argument("--table-controller", default=str(DEFAULT_TC), help="the product's command")
    args = ap.parse_args(argv)
    args.size = tuple(int(v) for v in args.size.split("x"))
    args.layout_override_needed = False
    tc = args.table_controller
    if not (Path(tc).exists() or shutil.which(tc)):
        ap.error(f"cannot find {tc}")
    decks = [d.strip() for d in args.decks.split(",") if d.strip()]
    t0 = time.time()
    if args.out:
        work = Path(args.out).resolve()
        work.mkdir(parents=True, exist_ok=True)
        args.keep = True
        tmp = None
    else:
        tmp = tempfile.TemporaryDirectory(prefix="indep-eval-")
        work = Path(tmp.name)
        args.keep = False
    findings: list = []
    out = {
        "harness": "benchmarks/independent (written without reading the product's code)",
        "seed": args.seed,
        "size": list(args.size),
        "frames_per_deck": args.frames,
        "frames_per_table": args.frames_per_table,
        "match_tolerance_px": args.tolerance * args.size[0] / 1280.0,
        "decks": {},
    }
    try:
        for d in decks:
            out["decks"][d] = evaluate_deck(d, args, tc, work, findings)
    finally:
        if tmp is not None:
            tmp.cleanup()
    summ = {}
    for d, r in out["decks"].items():
        t = r.get("totals")
        summ[d] = (
            {
                k: t[k]
                for k in ("cards", "read_rate", "correct", "wrong", "no_read", "not_found", "misplaced", "phantom")
            }
            if t
            else {"error": r.get("error")}
        )
        if t and "templates" in r:
            summ[d]["templates_exit"] = r["templates"]["exit_status"]
    out["summary"] = summ
    out["findings"] = findings
    out["elapsed_s"] = round(time.time() - t0, 1)
    if args.out:
        out["kept_in"] = str(work)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
