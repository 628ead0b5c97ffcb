"""Decodes a FIT file with Garmin's FIT SDK for Python (PyPI garmin-fit-sdk) and with fitdecode,
and prints what each read as one JSON object, for the Swift tests to compare with the ride:

    python3 check_fit.py FILE

{"garmin": {"integrity": true, "errors": [...], "messages": {"record": [{...}], ...}},
 "fitdecode": {"errors": [...], "warnings": [...], "messages": {...}}}

Values are the decoders' own: scaled (speed in m/s, distance in m, times in s), date_time
fields as seconds since the FIT epoch, enumerations by name. A field the file leaves invalid
is absent.
"""

import json
import sys
import warnings


def garmin(path):
    from garmin_fit_sdk import Decoder, Stream

    out = {"integrity": Decoder(Stream.from_file(path)).check_integrity(), "errors": [], "messages": {}}
    decoder = Decoder(Stream.from_file(path))
    messages, errors = decoder.read(
        apply_scale_and_offset=True,
        convert_datetimes_to_dates=False,
        convert_types_to_strings=True,
        enable_crc_check=True,
        expand_sub_fields=True,
        expand_components=True,
        merge_heart_rates=False,
    )
    out["errors"] = [str(error) for error in errors]
    for key, values in messages.items():
        name = key[: -len("_mesgs")] if key.endswith("_mesgs") else key
        out["messages"][name] = [{str(k): v for k, v in message.items()} for message in values]
    return out


def fitdecode_read(path):
    import fitdecode

    out = {"errors": [], "warnings": [], "messages": {}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with fitdecode.FitReader(
                path, check_crc=fitdecode.CrcCheck.RAISE, error_handling=fitdecode.ErrorHandling.RAISE
            ) as reader:
                for frame in reader:
                    if frame.frame_type != fitdecode.FIT_FRAME_DATA:
                        continue
                    values = {}
                    for field in frame.fields:
                        if field.value is None:
                            continue
                        value = field.value
                        if hasattr(value, "timestamp"):
                            value = int(value.timestamp()) - 631065600
                        values[field.name] = value
                    out["messages"].setdefault(frame.name, []).append(values)
        except Exception as error:  # the decoder's complaint is the test's result
            out["errors"].append(f"{type(error).__name__}: {error}")
    out["warnings"] = [str(w.message) for w in caught]
    return out


def plain(value):
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return str(value)


def main():
    path = sys.argv[1]
    result = {}
    for name, read in (("garmin", garmin), ("fitdecode", fitdecode_read)):
        try:
            result[name] = read(path)
        except ImportError as error:
            result[name] = {"missing": str(error)}
    print(json.dumps(result, default=plain))


if __name__ == "__main__":
    main()
