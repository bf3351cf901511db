"""A report's JSON (or JSON lines) with every non-integer number rounded to the digits a
user reads, for golden files that change only when a figure a user sees changes.

    python3 tests/golden_json.py FILE        prints FILE rounded (sorted keys, 2-space indent)

Numbers are rounded to SIGNIFICANT digits (5: a table's "154.81 ms"); integers stay
exact. The exactness of the engine itself is checked elsewhere, at full precision
(golden_test.sh keeps one report unrounded).
"""
import json
import sys
from typing import Any

SIGNIFICANT = 5


def rounded(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.{SIGNIFICANT}g}")
    if isinstance(value, list):
        return [rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return value


def normalised(text: str) -> str:
    """The text of one JSON document, or of JSON lines (one document per line)."""
    try:
        documents = [json.loads(text)]
    except json.JSONDecodeError:
        documents = [json.loads(line) for line in text.splitlines() if line.strip()]
    return "".join(json.dumps(rounded(d), indent=2, sort_keys=True) + "\n" for d in documents)


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.write(normalised(f.read()))


if __name__ == "__main__":
    main()
