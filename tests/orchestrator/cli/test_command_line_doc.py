"""docs/reference/command-line.md's synopsis against the click commands themselves: every
command and every option of each is there (it once lacked ``plan`` and ``import``).
"""

from __future__ import annotations

import re

import click

from counterfact.orchestrator.cli import main

from ...conftest import TESTS

PAGE = TESTS.parent / "docs" / "reference" / "command-line.md"


def _synopsis() -> dict[str, str]:
    """``{"run": "counterfact run CONFIG ...", "import inspect": ...}``: each entry of the first
    text block, its continuation lines joined, keyed by its command path.
    """
    block = re.search(r"```text\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert block is not None
    entries: list[str] = []
    for line in block.group(1).splitlines():
        if line.startswith("counterfact"):
            entries.append(line)
        else:
            entries[-1] += " " + line.strip()
    found: dict[str, str] = {}
    for entry in entries:
        group: click.Command = main
        words, path = entry.split()[1:], []
        while words and isinstance(group, click.Group) and words[0] in _commands(group):
            group = _commands(group)[words.pop(0)]
            path.append(group.name or "")
        key = " ".join(path)
        found[key] = f"{found[key]} {entry}" if key in found else entry
    return found


def _commands(group: click.Group) -> dict[str, click.Command]:
    """The group's commands (the top-level group imports each on demand: not in ``.commands``)."""
    ctx = click.Context(group)
    found = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}


def _leaves(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    out: dict[str, click.Command] = {}
    for name, command in _commands(group).items():
        path = f"{prefix}{name}"
        if isinstance(command, click.Group):
            out |= _leaves(command, path + " ")
        else:
            out[path] = command
    return out


def test_the_synopsis_names_every_command_and_each_of_its_options() -> None:
    synopsis, commands = _synopsis(), _leaves(main)
    assert set(commands) <= set(synopsis), sorted(set(commands) - set(synopsis))
    for path, command in commands.items():
        for param in command.params:
            if isinstance(param, click.Option) and param.name != "help":
                flag = max(param.opts, key=len)
                assert re.search(rf"{flag}\b", synopsis[path]), f"{path}: {flag}"
    for param in main.params:  # `counterfact [-v] COMMAND ...`, `counterfact --version`
        if param.name != "help":
            assert any(f"[{o}]" in synopsis[""] or f" {o}" in synopsis[""] for o in param.opts)
    schema = commands["schema"].params[0]
    assert isinstance(schema.type, click.Choice)
    assert "|".join(schema.type.choices) in synopsis["schema"]
