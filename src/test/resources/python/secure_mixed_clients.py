"""Python clients of one secure round, for SecureMixedClientsIT: each client runs in its own
thread with its own PrivaggClient (its own producer and consumers), through the installed
package's public API, beside the IT's Java clients in the same round.

    python secure_mixed_clients.py CONFIG.json

CONFIG holds ``bootstrap``, ``spec`` (the job's spec YAML), ``round``, ``timeout`` and
``clients``: ``{"id", "phases", "call", "update": {tensor name: nested lists}}`` each, where
``phases`` below 6 makes the client drop out after that phase and ``call`` is
``send_secure_update`` or ``send_update`` (the plain call, which runs all six phases in secure
mode). Prints where it imported privagg_client from, then one ``RESULT {json}`` line per
client, and exits 1 when any client failed.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

import numpy as np

import privagg_client
from privagg_client import PrivaggClient


def take_part(config: dict[str, Any], client: dict[str, Any]) -> dict[str, Any]:
    update = {name: np.asarray(v, dtype=np.float32) for name, v in client["update"].items()}
    out: dict[str, Any] = {"id": client["id"], "phases": client["phases"], "call": client["call"]}
    with PrivaggClient.from_spec(config["spec"], config["bootstrap"], client["id"]) as c:
        if client["call"] == "send_update":
            c.send_update(config["round"], update, timeout=config["timeout"])
        else:
            result = c.send_secure_update(
                config["round"], update, timeout=config["timeout"], phases=client["phases"]
            )
            out.update(
                index=result.index,
                masked_with=list(result.masked_with),
                rejected_shares={str(k): v for k, v in result.rejected_shares.items()},
                survivors=result.survivors,
            )
    out["ok"] = True
    return out


def main() -> int:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(threadName)s %(name)s: %(message)s"
    )
    print(f"privagg_client from {Path(privagg_client.__file__).parent}", flush=True)
    with open(sys.argv[1], encoding="utf-8") as f:
        config = json.load(f)
    results: dict[str, dict[str, Any]] = {}

    def run(client: dict[str, Any]) -> None:
        try:
            results[client["id"]] = take_part(config, client)
        except Exception as e:  # reported below, and the exit code says so
            traceback.print_exc()
            results[client["id"]] = {"id": client["id"], "ok": False, "error": repr(e)}

    threads = [
        threading.Thread(target=run, args=(client,), name=client["id"])
        for client in config["clients"]
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for client in config["clients"]:
        print("RESULT " + json.dumps(results[client["id"]], sort_keys=True), flush=True)
    return 0 if all(r["ok"] for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
