"""``python -m counterfact.orchestrator.cli``: the same as the ``counterfact`` command."""

from counterfact.orchestrator.cli import entry

if __name__ == "__main__":
    entry()
