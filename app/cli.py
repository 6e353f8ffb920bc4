"""The ``allocscope`` command: scenarios, run, check, serve.

Exit codes of ``run`` and ``check``: 0 nothing found, 1 a violation / deadlock / livelock was
found, 2 bad input (the message goes to stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from protocols.kernel import SCHEDULERS, SimError
from protocols.scenario import ScenarioError, gallery, resolve

from .limits import SettingsError


def _print(obj: object) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def cmd_scenarios(args: argparse.Namespace) -> int:
    rows = [{"id": s.id, "title": s.title, "protocol": s.protocol, "variant": s.variant}
            for s in gallery().values()]
    if args.json:
        _print(rows)
    else:
        for r in rows:
            print(f"{r['id']:32} {r['protocol']:12} {r['variant'] or '':12} {r['title']}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from protocols.runner import run
    sc = resolve(args.scenario)
    res = run(sc, args.variant, args.steps, args.scheduler, args.seed)
    if args.json:
        _print(res)
    else:
        print(f"{res['scenario']} [{res['protocol']}/{res['variant']}] {res['steps']} steps, "
              f"outcome {res['outcome']}, {res['cs_entries']} critical-section entries, "
              f"{res['messages']} messages")
        for v in res["violations"]:
            print(f"  violation at step {v['step']}: {v['text']}")
        for key in ("deadlock", "livelock"):
            if res[key]:
                print(f"  {key} at step {res[key]['step']}: {res[key]['text']}")
        print(f"  state_hash {res['state_hash']}")
    found = res["violations"] or res["deadlock"] or res["livelock"]
    return 1 if found else 0


def cmd_check(args: argparse.Namespace) -> int:
    from protocols.explorer import check
    sc = resolve(args.scenario)
    res = check(sc, variant=args.variant, max_states=args.max_states, partial_order=args.por)
    if args.json:
        _print(res)
    else:
        print(f"{sc.id}: {res['result']} after {res['states']} states in {res['seconds']} s")
        if res.get("counterexample"):
            print("  schedule: " + " ".join(res["counterexample"]["schedule"]))
            print(f"  open: {res.get('link')}")
    return 1 if res["result"] in ("violation", "deadlock", "livelock") else 0


def cmd_settings(args: argparse.Namespace) -> int:
    """The ALLOCSCOPE_* variables: the README table, or this environment's values (checked)."""
    from .limits import Settings, markdown_table
    if args.markdown:
        sys.stdout.write(markdown_table())
        return 0
    rows = Settings.from_env().table()          # SettingsError -> exit 2 in main()
    if args.json:
        _print(dict(rows))
    else:
        for name, value in rows:
            print(f"{name:36} {value}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn
    uvicorn.run("app.main:app", host=args.host, port=args.port, proxy_headers=True,
                ws_max_size=args.ws_max_size)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="allocscope",
                                description="A lab for distributed resource-allocation algorithms.")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("scenarios", help="list the gallery scenarios")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_scenarios)

    r = sub.add_parser("run", help="run a scenario headless and report its outcome")
    r.add_argument("scenario", help="a gallery id or a scenario file")
    r.add_argument("--steps", type=int, help="step budget (default: the scenario's)")
    r.add_argument("--scheduler", choices=[k for k in SCHEDULERS if k != "manual"])
    r.add_argument("--seed", type=int)
    r.add_argument("--variant")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_run)

    c = sub.add_parser("check", help="explore every schedule of a scenario")
    c.add_argument("scenario")
    c.add_argument("--max-states", type=int, default=200_000)
    c.add_argument("--variant")
    por = c.add_mutually_exclusive_group()
    por.add_argument("--por", dest="por", action="store_const", const=True, default=None,
                     help="partial-order reduction (protocols that declare it; no livelock "
                          "search). Default: on where the protocol declares it cannot livelock")
    por.add_argument("--no-por", dest="por", action="store_const", const=False,
                     help="explore every interleaving (and search for livelocks)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_check)

    st = sub.add_parser("settings", help="the ALLOCSCOPE_* variables and their values here")
    st.add_argument("--markdown", action="store_true", help="the README's table of them")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_settings)

    v = sub.add_parser("serve", help="run the web app")
    v.add_argument("--host", default="127.0.0.1")
    v.add_argument("--port", type=int, default=8000)
    v.add_argument("--ws-max-size", type=int, default=1 << 20)
    v.set_defaults(func=cmd_serve)

    from .lessons import add_cli  # `allocscope lessons` (app/lessons.py)
    add_cli(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if getattr(args, "steps", None) is not None and args.steps < 0:
        print("allocscope: --steps must be 0 or more", file=sys.stderr)
        return 2
    try:
        return args.func(args)
    except (ScenarioError, SimError, SettingsError) as exc:
        print(f"allocscope: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
