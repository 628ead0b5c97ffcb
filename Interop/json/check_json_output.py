#!/usr/bin/env python3
"""Checks JSON lines against bluetide's --json schema (docs/json-output.schema.json).

Reads lines from standard input, each "LABEL<TAB>JSON"; prints one line per invalid record
("LABEL: what is wrong") and a last line "checked N lines, M invalid". Exits 1 when any line is
invalid or not JSON, 2 when the schema itself is not valid.

Beyond the schema, one spelling per word across every key of every line: when two keys spell
one word two ways (colour/color, metre/meter, centre/center, parametre/parameter, -ise/-ize),
each line that uses the second spelling seen is invalid ("spelling: ...").

Usage: python3 Interop/json/check_json_output.py [SCHEMA] < lines.tsv
"""
import json
import pathlib
import re
import sys

import jsonschema


def words(key: str) -> list[str]:
    """The lower-case words of a lowerCamelCase key: heartRateBPM -> heart, rate, bpm."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", key)]


def spelling(word: str) -> str:
    """The word with British and American spellings made one, to compare: colour -> color,
    metres -> meters, centre -> center, parametre -> parameter, organise -> organize."""
    word = re.sub(r"our(s?)$", r"or\1", word) if len(word) > 4 else word
    word = re.sub(r"([^aeiou])re(s?)$", r"\1er\2", word)
    word = re.sub(r"is(e|es|ed|ing|ation)$", r"iz\1", word)
    return word


def keys(value):
    """Every object key in a JSON value, at every depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from keys(item)


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
    # The first spelling seen of each word (by its spelling() form), and the key it was in.
    first_spelling: dict[str, tuple[str, str, str]] = {}
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
        clashes = []
        for key in sorted(set(keys(record))):
            for word in words(key):
                seen = first_spelling.setdefault(spelling(word), (word, key, label))
                if seen[0] != word:
                    clashes.append(f"spelling: key {key!r} spells {word!r}, but {seen[2]} spelled it {seen[0]!r} (key {seen[1]!r}): one spelling per word")
        if clashes:
            invalid += 1
            print(f"{label}: {'; '.join(clashes[:3])} in {text[:300]}")
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
