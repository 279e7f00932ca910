"""Write ``orchestrator/drivers/outputs/schemas.json``: the JSON Schemas ``counterfact schema``
prints.

They are generated from the pydantic models
(:func:`~counterfact.orchestrator.drivers.outputs.schemas. json_schema`) and shipped as a file so
that the command answers without building the models;
``tests/orchestrator/drivers/outputs/test_schemas.py`` fails when the file is stale.

    python scripts/gen_schemas.py          # rewrite the file
    python scripts/gen_schemas.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import argparse
import sys

from counterfact.orchestrator.drivers.outputs.schemas import SHIPPED, shipped_text

COMMAND = "PYTHONPATH=$PWD python scripts/gen_schemas.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args()
    text = shipped_text()
    if args.check:
        if not SHIPPED.exists() or SHIPPED.read_text(encoding="utf-8") != text:
            print(f"{SHIPPED.name} is out of date; run: {COMMAND}", file=sys.stderr)
            return 1
        return 0
    SHIPPED.write_text(text, encoding="utf-8")
    print("wrote orchestrator/drivers/outputs/schemas.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
