"""Write the SmartThings sample home: a real account's 20 devices, as `tracerag home pull smartthings`
would write them, from saved API answers instead of the live API.

    python scripts/sample_home.py --devices devices-sample.json --capabilities capabilities.json \
        --out benchmarks/data/home_st_sample

``devices-sample.json`` is a ``GET /v1/devices`` answer and ``capabilities.json`` holds standard
capability definitions (``GET /v1/capabilities/{id}/{version}``), both from pysmartthings' fixtures
(Apache-2.0). The home has no rooms and custom labels ("Sink", "Bureau", "Tv"): nothing in the
retriever was tuned on it, which is what its held-out queries measure.
"""

from __future__ import annotations

import argparse
import json

from tracerag.smarthome.smartthings import used_capabilities, write_smartthings_home


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", required=True)
    parser.add_argument("--capabilities", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with open(args.devices, encoding="utf-8") as f:
        devices = json.load(f)["items"]
    with open(args.capabilities, encoding="utf-8") as f:
        known = {(c["id"], int(c.get("version") or 1)): c for c in json.load(f)["capabilities"]}
    definitions = {cap: (known.get(cap), None) for cap in used_capabilities(devices)}
    summary = write_smartthings_home(args.out, devices, [], definitions,
                                     {"source": "smartthings", "sample": "pysmartthings devices-sample.json"})
    print(summary.line())


if __name__ == "__main__":
    main()
