"""``python -m counterfact.orchestrator.cli``: the same as the ``counterfact`` command."""

from counterfact.orchestrator.cli import main

main()
