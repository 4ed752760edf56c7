"""The sandbox's budgets: every limit in one place, each checked before the work it bounds.

The numbers are chosen so that any ordinary config or checker stays two orders of magnitude
below them (the largest reference config takes ~134k steps) while a bomb is refused in well
under a second of interpreter time.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from promptweave.errors import BudgetError


@dataclass(frozen=True)
class Budget:
    """Limits for one evaluation (one config file tree, or one checker call)."""

    max_steps: int = 400_000  # evaluated nodes + loop iterations (largest reference config: ~134k)
    max_seconds: float = 10.0  # wall time, a safety net behind max_steps
    max_depth: int = 200  # nesting of expressions and function calls
    max_int_bits: int = 100_000  # size of any integer a ** / << / * may produce (~30,000 digits)
    max_str_len: int = 10_000_000  # characters in one string
    max_items: int = 100_000  # items in one list/tuple/dict/set/range
    max_alloc: int = 100_000_000  # characters + items built over the whole evaluation
    max_file_bytes: int = 10_000_000  # one file read with open()
    regex_seconds: float = 1.0  # one regular-expression call in a checker


DEFAULT_BUDGET = Budget()


@dataclass
class Meter:
    """Counts what an evaluation has used against its :class:`Budget`."""

    budget: Budget = DEFAULT_BUDGET
    steps: int = 0
    depth: int = 0
    allocated: int = 0
    started: float = field(default_factory=time.monotonic)
    file: str = ""  # where the statement being evaluated is, for the errors
    line: int = 0

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def refuse(self, what: str, limit: str) -> BudgetError:
        return BudgetError(f"{what}: refused before doing it (budget {limit}); safe mode bounds every "
                           "evaluation, and --trust-config / --trust-checkers run Python without these budgets",
                           file=self.where or None)

    def tick(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > self.budget.max_steps:
            raise self.refuse("evaluation takes too many steps", f"max_steps={self.budget.max_steps}")
        if not self.steps & 0x3FF and time.monotonic() - self.started > self.budget.max_seconds:
            raise self.refuse("evaluation takes too long", f"max_seconds={self.budget.max_seconds}")

    def check_int_bits(self, bits: int, what: str) -> None:
        if bits > self.budget.max_int_bits:
            raise self.refuse(f"{what} would give an integer of about {bits} bits",
                              f"max_int_bits={self.budget.max_int_bits}")

    def check_len(self, n: int, what: str, *, text: bool) -> None:
        limit = self.budget.max_str_len if text else self.budget.max_items
        if n > limit:
            name = "max_str_len" if text else "max_items"
            raise self.refuse(f"{what} would build {n} {'characters' if text else 'items'}", f"{name}={limit}")

    def alloc(self, n: int) -> None:
        self.allocated += n
        if self.allocated > self.budget.max_alloc:
            raise self.refuse("evaluation builds too much data in total", f"max_alloc={self.budget.max_alloc}")

    def enter(self) -> None:
        self.depth += 1
        if self.depth > self.budget.max_depth:
            raise self.refuse("expression or call nesting too deep", f"max_depth={self.budget.max_depth}")

    def leave(self) -> None:
        if self.depth:
            self.depth -= 1
