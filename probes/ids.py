"""The one check for declared ids: none blank, none listed twice, with one message style."""

from __future__ import annotations

from collections.abc import Sequence

from counterfact.exceptions import RefusalError


def check_ids(ids: Sequence[str], fields: Sequence[str], noun: str) -> None:
    """Refuse a blank id, or an id already used, naming the field of the offending one.

    Args:
        ids: the ids in declaration order.
        fields: where each id was declared (``arms[2].id``, ``bisect.suspects[0]``).
        noun: what the ids name (``arm id``, ``suspect``), used in the message.

    Raises:
        RefusalError: the first blank or repeated id.
    """
    seen: dict[str, int] = {}
    for i, value in enumerate(ids):
        if not value.strip():
            msg = f"{noun} is blank; give each a short, unique, non-empty id"
            raise RefusalError(msg, field=fields[i])
        if value in seen:
            msg = f"{noun} {value!r} is already used by {fields[seen[value]]}; ids must be unique"
            raise RefusalError(msg, field=fields[i])
        seen[value] = i
