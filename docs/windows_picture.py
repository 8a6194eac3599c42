"""Draw docs/img/windows.svg from a real ``verify_processor`` run of ``aggregate_to_sliding_window_p``.

A small stream of events (two keys) and watermarks goes through a sliding window of size 4 sliding by 2
(``counting()``); the picture shows the frames (grid, labelled by their exclusive end), the events (dots on their
key's row), the watermarks (triangles on the time axis, numbered in input order) and every window result the
processor emitted (bars ``[end - 4, end)`` labelled ``key=count``, with the watermark that released it). Plain SVG
text, no dependencies. The run's input and output are printed (docs/windows.md quotes them).

Run: ``.venv/bin/python docs/windows_picture.py`` (writes docs/img/windows.svg).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from processors import (TimestampedEntry, TimestampKind, Watermark, aggregate_to_sliding_window_p,  # noqa: E402
                        counting, entry_key, entry_value, sliding_win_policy, verify_processor)

POLICY = sliding_win_policy(4, 2)
STREAM = [("a", 1), ("b", 2), ("a", 3), Watermark(2), ("a", 5), ("b", 4), Watermark(5), ("b", 7), ("a", 6),
          ("b", 9), Watermark(8), ("a", 10), Watermark(12)]
KEYS = ["a", "b"]
COLORS = {"a": "#1f77b4", "b": "#d62728"}
X0, SCALE, T_MIN, T_MAX = 60, 44, -2, 14


def run() -> list:
    """The processor's output in the first verify_processor mode (every mode, snapshot/restore cycles included,
    must produce the same windows)."""
    outputs: list = []

    def record(mode, actual):
        outputs.append(actual[0])

    supplier = aggregate_to_sliding_window_p(entry_key, entry_value, TimestampKind.EVENT, POLICY, counting())
    verify_processor(supplier).disable_complete_call().input(STREAM).assert_output(1, record)
    assert all(_canonical(out) == _canonical(outputs[0]) for out in outputs), "modes disagree"
    return outputs[0]


def _canonical(output: list) -> list:
    """The output with the keys of each window sorted (their order within a window is unspecified, as in Jet)."""
    return sorted(output, key=lambda i: (i.timestamp, 1, "") if isinstance(i, Watermark) else (i.timestamp, 0, i.key))


def x(t: float) -> float:
    return X0 + (t - T_MIN) * SCALE


def svg(output: list) -> str:
    windows = [item for item in output if isinstance(item, TimestampedEntry)]
    released_by = {}
    wm_seen = None
    for item in reversed(output):  # each window result is followed by the watermark that released it
        if isinstance(item, Watermark):
            wm_seen = item.timestamp
        else:
            released_by[id(item)] = wm_seen
    key_row = {k: 60 + 34 * i for i, k in enumerate(KEYS)}
    axis_y = key_row[KEYS[-1]] + 50
    win_y0 = axis_y + 60
    height = win_y0 + 24 * len(windows) + 30
    width = x(T_MAX) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{X0}" y="22" font-size="14">sliding_win_policy(4, 2): frames of 2 (grid, labelled by their '
           'end), windows of 4; counting() per key</text>']
    for f in range(T_MIN, T_MAX + 1, POLICY.frame_size):  # frame boundaries
        out.append(f'<line x1="{x(f)}" y1="40" x2="{x(f)}" y2="{height - 20}" stroke="#ccc" stroke-dasharray="3,3"/>')
        out.append(f'<text x="{x(f)}" y="{axis_y + 18}" text-anchor="middle">{f}</text>')
    out.append(f'<line x1="{x(T_MIN)}" y1="{axis_y}" x2="{x(T_MAX)}" y2="{axis_y}" stroke="black"/>')
    out.append(f'<text x="8" y="{axis_y + 4}">time</text>')
    for key, y in key_row.items():
        out.append(f'<text x="8" y="{y + 4}" fill="{COLORS[key]}">key {key}</text>')
    for item in STREAM:
        if isinstance(item, Watermark):
            continue
        key, ts = item
        out.append(f'<circle cx="{x(ts)}" cy="{key_row[key]}" r="6" fill="{COLORS[key]}"/>')
    for n, wm in enumerate([i for i in STREAM if isinstance(i, Watermark)], 1):
        t = wm.timestamp
        out.append(f'<polygon points="{x(t)},{axis_y - 2} {x(t) - 7},{axis_y - 16} {x(t) + 7},{axis_y - 16}" '
                   'fill="#2ca02c"/>')
        out.append(f'<text x="{x(t) + 9}" y="{axis_y - 6}" fill="#2ca02c">W{n}({t})</text>')
    out.append(f'<text x="8" y="{win_y0 - 12}">window results, in emission order '
               '(bar = [end - 4, end), the watermark that released it on the right)</text>')
    for row, item in enumerate(windows):
        y = win_y0 + 24 * row
        start, end = item.timestamp - POLICY.window_size, item.timestamp
        color = COLORS[item.key]
        out.append(f'<rect x="{x(start)}" y="{y}" width="{x(end) - x(start)}" height="16" fill="{color}" '
                   'fill-opacity="0.25" stroke="' + color + '"/>')
        out.append(f'<text x="{x(start) + 4}" y="{y + 12}">{item.key}={item.value}</text>')
        out.append(f'<text x="{x(end) + 4}" y="{y + 12}" fill="#2ca02c">after W({released_by[id(item)]})</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> int:
    output = run()
    target = Path(__file__).resolve().parent / "img" / "windows.svg"
    target.write_text(svg(output), encoding="utf-8")
    print("input: ", ", ".join(repr(i) for i in STREAM))
    print("output:", ", ".join(repr(i) for i in output))
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
