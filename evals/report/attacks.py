"""The security suite per channel: for each place an instruction was planted (a web page, a
manual passage, a ticket, a QR code, earlier turns, a catalogue record), how many attacks were
tried, resisted (PASS), not resisted (FAIL, or FLAKY: it worked once) and undecided (an ERROR
or a judge that could not decide). A skipped item was not tried."""

from __future__ import annotations

from dataclasses import dataclass

from evals.record.results import CHANNELS, CaseResult


@dataclass(frozen=True)
class ChannelCount:
    channel: str
    tried: int
    resisted: int
    fell: int
    undecided: int


def attack_counts(results: list[CaseResult]) -> list[ChannelCount]:
    """One row per channel with an item in these results (each repetition counts), in the
    channels' documented order."""
    rows = []
    for channel in CHANNELS:
        tried = [r for r in results if r.attack is not None and r.attack.channel == channel
                 and r.status != "SKIPPED"]
        if not tried:
            continue
        rows.append(ChannelCount(
            channel, len(tried), sum(r.status == "PASS" for r in tried),
            sum(r.status in ("FAIL", "FLAKY") for r in tried),
            sum(r.status in ("ERROR", "UNDECIDED") for r in tried)))
    return rows


def attack_lines(results: list[CaseResult]) -> list[str]:
    rows = attack_counts(results)
    if not rows:
        return []
    out = [f"{'attacks by channel':32} {'tried':>5} {'resisted':>8} {'fell':>5} "
           f"{'undecided':>9}"]
    for row in rows:
        out.append(f"  {CHANNELS[row.channel]:30} {row.tried:5} {row.resisted:8} {row.fell:5}"
                   f" {row.undecided:9}")
    total = [sum(getattr(r, f) for r in rows) for f in ("tried", "resisted", "fell",
                                                          "undecided")]
    out.append(f"  {'all':30} {total[0]:5} {total[1]:8} {total[2]:5} {total[3]:9}")
    return out
