"""The leaderboard view of a spread across models: ranked by mean score over the variants, with intervals, and
flagged where the order depends on the prompt's format (``spread.json``'s ``robustness``, ``spread/stats.py``).

Every value comes from a work dir and is escaped; a malformed entry is left out rather than shown.
"""
from __future__ import annotations

from html import escape
from typing import Any


def _num(x: Any) -> str:
    return f"{x:.2f}" if isinstance(x, (int, float)) and not isinstance(x, bool) else "-"


def leaderboard_html(robustness: Any) -> str:
    """HTML tables for each dataset's leaderboard and pairwise robustness; empty when there is none."""
    if not isinstance(robustness, list):
        return ""
    out = []
    for r in robustness:
        if not isinstance(r, dict) or not isinstance(r.get("leaderboard"), list) or not r["leaderboard"]:
            continue
        holds = r.get("ranking_holds")
        verdict = ("the ranking holds under every sampled format" if holds is True
                   else "the ranking depends on the format" if holds is False else "")
        out.append(f"<h3>{escape(str(r.get('dataset')))}: leaderboard across {escape(str(r.get('shared_variants')))} "
                   f"formats</h3><p class='{'best' if holds else 'worst'}'>{escape(verdict)}</p>"
                   "<table class='leaderboard'><tr><th>rank</th><th>model</th><th>mean</th><th>95% CI of the mean</th>"
                   "<th>min</th><th>max</th><th>order</th></tr>")
        for i, m in enumerate(r["leaderboard"], 1):
            if not isinstance(m, dict):
                continue
            ci = m.get("ci95") if isinstance(m.get("ci95"), list) and len(m["ci95"]) == 2 else [None, None]
            flag = "depends on the format" if m.get("format_dependent") else "same in every format"
            out.append(f"<tr><td>{i}</td><td>{escape(str(m.get('model')))}</td><td>{_num(m.get('mean'))}</td>"
                       f"<td>{_num(ci[0])} – {_num(ci[1])}</td><td>{_num(m.get('min'))}</td>"
                       f"<td>{_num(m.get('max'))}</td><td class='{'worst' if m.get('format_dependent') else ''}'>"
                       f"{flag}</td></tr>")
        out.append("</table><table><tr><th>leader</th><th>other</th><th>leader wins</th><th>other wins</th>"
                   "<th>ties</th><th>mean gap</th><th>worst-case gap</th><th>holds</th></tr>")
        for p in r.get("pairs") or []:
            if not isinstance(p, dict):
                continue
            out.append(f"<tr><td>{escape(str(p.get('leader')))}</td><td>{escape(str(p.get('other')))}</td>"
                       f"<td>{escape(str(p.get('leader_wins')))}</td><td>{escape(str(p.get('other_wins')))}</td>"
                       f"<td>{escape(str(p.get('ties')))}</td><td>{_num(p.get('mean_gap'))}</td>"
                       f"<td>{_num(p.get('worst_gap'))}</td><td>{'yes' if p.get('holds') is True else 'no'}</td></tr>")
        out.append("</table>")
    return "".join(out)
