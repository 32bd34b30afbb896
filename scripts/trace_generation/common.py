"""What every family generator builds with: steps, traces and queries, number and money formatting, slot
helpers (pick, Deck, names, dates) and the agent's TOOLSET."""

from __future__ import annotations

import math
import random
from datetime import date

TOOLSET = {
    "web_search", "image_search", "browse_webpage", "python", "ocr", "calculator", "pubmed_search", "wikipedia",
    "map_lookup", "unit_converter", "code_interpreter", "translate", "image_crop", "object_detector",
}


def st(thought: str, tool: str, tool_input: str, observation: str) -> dict:
    """One agent step."""
    return {"thought": thought, "tool": tool, "tool_input": tool_input, "observation": observation}


def tr(question: str, sub_task: str, steps: list[dict], reasoning: str, answer: str,
       images: int = 0, caption: str | None = None) -> dict:
    """A trace body; ids, image paths and flags are filled in by build()."""
    return {"question": question, "sub_task": sub_task, "images": images, "caption": caption, "steps": steps,
            "reasoning": reasoning, "final_answer": answer}


def qy(question: str, sub_task: str, images: int = 0, caption: str | None = None, lang: str = "en",
       caption_only: bool = False) -> dict:
    """A held-out query body; ids and relevance labels are filled in by build()."""
    return {"question": question, "sub_task": sub_task, "images": images, "caption": caption, "lang": lang,
            "caption_only": caption_only}


def fmt(x: float, nd: int = 2) -> str:
    """Round to nd decimals and drop trailing zeros: 12.50 -> '12.5', 3.0 -> '3', 12345.6 -> '12,345.6'."""
    s = f"{x:,.{nd}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def money(x: float, cur: str = "$") -> str:
    return f"{cur}{x:,.2f}"


def pick(rng: random.Random, seq, k: int | None = None):
    return rng.choice(seq) if k is None else rng.sample(list(seq), k)


class Deck:
    """Draws templates without replacement (per key), reshuffling when a key's templates run out."""

    def __init__(self, rng: random.Random):
        self.rng, self.left = rng, {}

    def __call__(self, key: str, options: list):
        if not self.left.get(key):
            order = list(range(len(options)))
            self.rng.shuffle(order)
            self.left[key] = order
        return options[self.left[key].pop()]


def nice(x: float) -> float:
    """A 1-2-5 tick spacing >= x."""
    e = math.floor(math.log10(x))
    f = x / 10 ** e
    nf = 1 if f <= 1 else 2 if f <= 2 else 5 if f <= 5 else 10
    return nf * 10 ** e


PEOPLE = ["Ana Souza", "Ben Carter", "Chloé Martin", "Dmitri Volkov", "Emeka Obi", "Fatima Zahra", "Gao Lin",
          "Hannah Weiss", "Ivan Petrov", "Julia Nowak", "Kenji Sato", "Laura Rossi", "Mehmet Kaya", "Nina Berg",
          "Omar Haddad", "Priya Nair", "Quentin Dubois", "Rosa Jiménez", "Sven Lund", "Tara Singh", "Uma Reddy",
          "Victor Hugo Lima", "Wen Zhao", "Yara Haddad", "Zoltan Kiss"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def longdate(d: date) -> str:
    return f"{d.day} {d.strftime('%B')} {d.year}"
