"""A check turned round: a run "flips" when its answer *becomes* the expected one.

``counterfact blame --expect TEXT`` explains a wrong answer by the answer it should have given:
the reference is ``TEXT``, the recorded (wrong) answer does not give it, and a part is to blame
when removing it makes the answer right. :class:`ExpectedAnswer` wraps any comparator so the
culprit search — which looks for what makes the answer change from the baseline's — looks for
what makes it right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from counterfact.probes.comparators import Comparator, prepare_batch


@dataclass(frozen=True)
class ExpectedAnswer:
    """Flipped iff ``inner`` says the output gives the reference (the expected answer)."""

    inner: Comparator

    @property
    def kind(self) -> str:
        """``expected-<inner kind>``."""
        return f"expected-{self.inner.kind}"

    @property
    def answer_level(self) -> bool:
        """As the wrapped check."""
        return self.inner.answer_level

    def describe(self) -> str:
        """``the answer becomes the expected one (<inner>)``."""
        return f"the answer becomes the expected one ({self.inner.describe()})"

    def prepare(
        self, reference: str, outputs: list[str], arms: Sequence[str] | None = None
    ) -> None:
        """Let the wrapped check judge the batch at once (a model judge: each call charged to
        its output's arm in ``arms``).
        """
        prepare_batch(self.inner, reference, outputs, arms)

    def flipped(self, reference: str, output: str, similarity: float) -> bool:
        """True when ``output`` gives the expected ``reference`` by the wrapped check."""
        return not self.inner.flipped(reference, output, similarity)

    def options(self) -> dict[str, Any]:
        """The wrapped check's kind and options."""
        return {"inner": self.inner.kind, **self.inner.options()}
