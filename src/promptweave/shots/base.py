"""Retriever interface: pick in-context example ids (train row indices) per test row."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

from promptweave.errors import RetrieverError

Row = Mapping[str, Any]


@dataclass
class Retrieval:
    """What a retriever chose: ``ids[i]`` are the train indices for test row ``i``."""

    ids: list[list[int]]
    settings: dict[str, Any] = field(default_factory=dict)


class Retriever(ABC):
    """Base class. Subclasses implement :meth:`select`; all are deterministic given their settings.

    ``same_split`` is true when train and test are the same rows: retrievers that
    search must then never return the test row itself.
    """

    name: ClassVar[str] = "Retriever"
    default_eos: ClassVar[str] = "\n"

    def __init__(self, *, ice_separator: str = "\n", ice_eos_token: str | None = None, ice_num: int = 1,
                 **unknown: Any) -> None:
        self.ice_separator = ice_separator
        self.ice_eos_token = self.default_eos if ice_eos_token is None else ice_eos_token
        if not isinstance(ice_num, int) or ice_num < 0:
            raise RetrieverError("ice_num must be a non-negative integer", field="ice_num", value=ice_num)
        self.ice_num = ice_num
        self.ignored = dict(unknown)

    @abstractmethod
    def select(self, train: Sequence[Row], test: Sequence[Row], *, same_split: bool = False) -> list[list[int]]:
        """Return, for each test row, the ordered train indices to show as examples."""

    def select_rows(self, train: Sequence[Row], test: Sequence[Row], indices: Sequence[int], *,
                    same_split: bool = False) -> list[list[int]]:
        """Ids for the test rows at ``indices`` only.

        Retrievers whose choice for one row does not depend on the other test rows
        (BM25, TopK, DPP) override this so that viewing one row of a large split does
        not search every row; the rest must see the whole split (Random draws in order).
        """
        ids = self.select(train, test, same_split=same_split)
        return [ids[i] for i in indices]

    def settings(self) -> dict[str, Any]:
        return {"type": self.name, "ice_num": self.ice_num}

    def retrieve(self, train: Sequence[Row], test: Sequence[Row], *, same_split: bool = False) -> Retrieval:
        return Retrieval(self.select(train, test, same_split=same_split), self.settings())
