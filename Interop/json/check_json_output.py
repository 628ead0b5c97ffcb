#!/usr/bin/env python3
"""Checks JSON lines against bluetide's --json schema (docs/json-output.schema.json).

Reads lines from standard input, each "LABEL<TAB>JSON"; prints one line per invalid record
("LABEL: what is wrong") and a last line "checked N lines, M invalid". Exits 1 when any line is
invalid or not JSON, 2 when the schema itself is not valid.

Usage: python3 Interop/json/check_json_output.py [SCHEMA] < lines.tsv
"""
import json
import pathlib
import sys

import jsonschema


def main() -> int:
    root = pathlib.Path(__file__).resolve().parents[2]
    schema_path = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "docs" / "json-output.schema.json"
    schema = json.loads(schema_path.read_text())
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as error:
        print(f"schema {schema_path}: {error.message}")
        return 2
    validator = jsonschema.Draft202012Validator(schema)
    # The branch a line means (an error or a record), for messages that say what is wrong in it.
    branches = {
        name: jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]})
        for name in ("record", "errorLine")
    }
    checked = invalid = 0
    for raw in sys.stdin:
        raw = raw.rstrip("\n")
        if not raw:
            continue
        label, _, text = raw.partition("\t")
        checked += 1
        try:
            record = json.loads(text)
        except json.JSONDecodeError as error:
            invalid += 1
            print(f"{label}: not JSON ({error.msg}): {text[:200]}")
            continue
        if validator.is_valid(record):
            continue
        branch = branches["errorLine" if isinstance(record, dict) and "error" in record else "record"]
        errors = sorted(branch.iter_errors(record), key=lambda e: list(e.absolute_path)) or list(validator.iter_errors(record))
        if errors:
            invalid += 1
            reasons = "; ".join(f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:160]}" for e in errors[:3])
            print(f"{label}: {reasons} in {text[:300]}")
    print(f"checked {checked} lines, {invalid} invalid")
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
