"""The ``allocscope`` command: scenarios, run, check, serve.

Exit codes of ``run`` and ``check``: 0 nothing found, 1 a violation / deadlock / livelock was
found, 2 bad input (the message goes to stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from collections.abc import Sequence

from protocols.kernel import SCHEDULERS, SimError
from protocols.scenario import MAX_FILE_BYTES, Scenario, ScenarioError, gallery, resolve

from .limits import SettingsError
from .rawcheck import RawError
from .store import StoreError


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
    sc = _resolve(args.scenario)
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
    sc = _resolve(args.scenario)
    res = check(sc, variant=args.variant, max_states=args.max_states, partial_order=args.por)
    if args.json:
        _print(res)
    else:
        print(f"{sc.id}: {res['result']} after {res['states']} states in {res['seconds']} s")
        if res.get("counterexample"):
            print("  schedule: " + " ".join(res["counterexample"]["schedule"]))
            print(f"  open: {res.get('link')}")
    return 1 if res["result"] in ("violation", "deadlock", "livelock") else 0


def _resolve(ref: str) -> Scenario:
    """A gallery id or a scenario file; a file's nesting is checked before it is parsed (a
    100,000-deep file is bad input, exit 2, not a RecursionError)."""
    from pathlib import Path

    from .limits import current
    from .rawcheck import check_text
    if ref not in gallery() and Path(ref).is_file():
        try:
            text = Path(ref).read_bytes()[:MAX_FILE_BYTES + 1]
        except OSError as exc:
            raise ScenarioError(f"{ref}: cannot read ({exc.strerror})") from None
        check_text(text, current().max_depth, ref)
    return resolve(ref)


def cmd_links(args: argparse.Namespace) -> int:
    """Back up, restore or verify the short-link store of ``$ALLOCSCOPE_DATA``."""
    from pathlib import Path

    from . import store
    if args.action == "backup":
        n = store.backup(Path(args.file), accept_damaged=args.accept_damaged)
        _print({"backup": args.file, "links": n})
    elif args.action == "restore":
        n = store.restore(Path(args.file))
        _print({"restored": args.file, "links": n})
    else:
        _print(store.verify())
    return 0


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


def cmd_verify(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    import protocols.verify.families as fams
    from protocols.verify import report, tasks, verify
    if args.list:
        for (proto, name), fam in sorted(fams.families().items()):
            if args.protocol in (None, proto):
                print(f"{proto:10} {name:12} {fam.doc}")
        return 0
    if not args.protocol or not args.family:
        raise ScenarioError("verify: give PROTOCOL and --family NAME (--list shows them)")
    try:
        fam = fams.get(args.protocol, args.family)
    except KeyError as exc:
        raise ScenarioError(f"verify: {exc.args[0]}") from None
    from protocols import registry
    proto = registry.get(args.protocol)
    variant = args.variant or proto.default_variant
    if variant not in proto.variants:
        raise ScenarioError(f"verify: variant {variant!r} is not one of {proto.id}'s variants: "
                            f"{', '.join(proto.variants)}")
    for opt in ("max_states", "seeds", "first", "workers"):
        v = getattr(args, opt)
        if v is not None and v < (0 if opt == "seeds" else 1):
            raise ScenarioError(f"verify: --{opt.replace('_', '-')} must be at least "
                                f"{0 if opt == 'seeds' else 1}")
    if args.skip < 0 or (args.first is not None and args.skip >= args.first):
        raise ScenarioError("verify: --skip must be at least 0 and below --first")
    for opt in ("max_seconds", "max_cpu_seconds"):
        v = getattr(args, opt)
        if v is not None and not v > 0:
            raise ScenarioError(f"verify: --{opt.replace('_', '-')} must be above 0")
    only = _indices(args.only) if args.only is not None else None
    picked = classes = None
    if args.sample is not None:
        if args.sample < 1:
            raise ScenarioError("verify: --sample must be at least 1 (instances per class)")
        if args.quick or args.first or args.skip or only is not None:
            raise ScenarioError("verify: --sample picks its own instances; leave out --quick, "
                                "--first, --skip and --only")
        try:
            picked, classes = fams.sample(fam, args.sample, args.sample_seed,
                                          args.sample_classes)
        except re.error as exc:
            raise ScenarioError(f"verify: --sample-classes is not a regular expression: "
                                f"{exc}") from None
        if not picked:
            raise ScenarioError(f"verify: no class of {fam.protocol} {fam.name} matches "
                                f"--sample-classes {args.sample_classes!r}")
    elif args.sample_classes is not None:
        raise ScenarioError("verify: --sample-classes needs --sample")
    kw = {"quick": args.quick, "max_states": args.max_states, "seeds": args.seeds,
          "max_seconds": args.max_seconds, "max_cpu_seconds": args.max_cpu_seconds,
          "first": args.first, "skip": args.skip, "only": only, "picked": picked}
    # a cluster-sized family is not counted up front (that alone takes minutes)
    small = args.count or (not args.first and (fam.ci or picked is not None))
    total = sum(1 for _ in tasks(fam, variant, **kw)) if small else None
    if args.count:
        print(total)
        return 0
    total = total if total is not None else (len(only) if only else
                                             args.first and args.first - args.skip)
    show = not args.no_progress and (args.progress or sys.stderr.isatty())
    rows: list[dict] = []
    counts = {"ok": 0, "limit": 0, "counterexample": 0}
    t0 = time.perf_counter()
    folder = Path(args.save)
    try:
        log = open(args.rows, "a", encoding="utf-8") if args.rows else None
    except OSError as exc:
        raise ScenarioError(f"verify: cannot write --rows {args.rows!r}: {exc.strerror}") from None
    with log or contextlib.nullcontext():
        for row in verify(fam, variant, scheduler_address=args.scheduler_address,
                          workers=args.workers, group_starts=args.group_starts, **kw):
            counts[row["result"]] += 1
            if row["result"] == "counterexample":
                row["file"] = str(report.save_counterexample(row, row.pop("scenario"), folder,
                                                             fam.faults))
            rows.append(row)
            if log is not None:
                log.write(json.dumps({"protocol": fam.protocol, "family": fam.name,
                                      "variant": variant, **_lean(row)},
                                     ensure_ascii=False) + "\n")
                log.flush()
            if show:
                report.progress(len(rows), total, counts, sys.stderr)
    if show:
        sys.stderr.write("\n")
    where = (f"dask {args.scheduler_address}" if args.scheduler_address
             else f"local pool, {args.workers or os.cpu_count()} processes")
    if args.group_starts:
        where += ", starts grouped"
    summ = report.summary(rows, fam, variant, time.perf_counter() - t0, where)
    if classes is not None:
        summ["sample"] = {"per_class": args.sample, "seed": args.sample_seed,
                          "classes_matching": args.sample_classes,
                          "classes": {c: {"size": v[0], "picked": v[1:]}
                                      for c, v in classes.items()}}
    if args.json:
        rows.sort(key=lambda r: r["index"])
        _print({"summary": summ, "rows": [_lean(r) for r in rows]})
    else:
        report.table(rows)
        print(f"{fam.protocol} {fam.name} {variant}: {summ['instances']} instances, "
              f"{summ['ok']} ok, {summ['limit']} limit, {summ['counterexample']} "
              f"counterexample, {summ['states']} states, {summ['seconds']} s ({where})")
        if classes is not None:
            print(f"sample: {args.sample} per class, seed {args.sample_seed}, {len(classes)} "
                  f"classes, {sum(v[0] for v in classes.values())} instances in them")
        for ce in summ["counterexamples"]:
            print(f"  {ce['instance']}: {ce['finding']} -> {ce['file']}")
    return 1 if summ["counterexample"] else 0


def _indices(text: str) -> frozenset[int]:
    """``--only``'s comma-separated instance indices; a clear error for anything else."""
    try:
        out = frozenset(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise ScenarioError(f"verify: --only must be instance indices separated by commas, "
                            f"not {text!r}") from None
    if not out or min(out) < 0:
        raise ScenarioError("verify: --only needs at least one index, each at least 0")
    return out


def _lean(row: dict) -> dict:
    """A row for --json: the schedules stay in the counterexample files."""
    out = {k: v for k, v in row.items() if k != "schedule"}
    out["explorer"] = {k: v for k, v in row["explorer"].items() if k != "schedule"}
    for key in ("random", "faulty"):
        if key in row and row[key].get("first_failure"):
            ff = dict(row[key]["first_failure"])
            ff["length"] = len(ff.pop("schedule"))
            out[key] = {**row[key], "first_failure": ff}
    return out


def cmd_sweep(args: argparse.Namespace) -> int:
    from protocols.verify.sweep import sweep
    sc = _resolve(args.scenario)
    if args.seeds < 1:
        raise ScenarioError("sweep: --seeds must be at least 1")
    from protocols.verify.sweep import core_fits
    if args.engine == "core" and not core_fits(sc):
        raise ScenarioError(f"sweep: --engine core does not fit {sc.id} (it has faults, or is "
                            f"coterie, whose charges need the simulator)")
    res = sweep(sc, args.variant, args.seeds, scheduler_address=args.scheduler_address,
                workers=args.workers, chunk=args.chunk, steps=args.steps, out=args.out,
                progress=(not args.no_progress and (args.progress or sys.stderr.isatty())),
                engine=args.engine)
    if args.json:
        _print(res)
    else:
        print(f"{res['scenario']} [{res['protocol']}/{res['variant']}]: {res['seeds']} seeds in "
              f"{res['seconds']} s ({res['where']}); outcomes {res['outcomes']}")
        for name, m in res["metrics"].items():
            b = m.get("bound")
            print(f"  {name}: n {m['count']}, mean {m['mean']}, p50 {m['p50']}, p99 {m['p99']}, "
                  f"max {m['max']}" + (f", bound {b['value']} ({b['what']}), over bound "
                                       f"{m['over_bound']}" if b else ", no bound in the paper"))
        print(f"  plot: {res['files']['svg']}  data: {res['files']['json']}")
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

    lk = sub.add_parser("links", help="back up, restore or verify the short-link store "
                                      "($ALLOCSCOPE_DATA/links.sqlite3)")
    lk.add_argument("action", choices=["backup", "restore", "verify"])
    lk.add_argument("file", nargs="?", help="the backup file (backup, restore)")
    lk.add_argument("--accept-damaged", action="store_true",
                    help="backup: copy what SQLite can read from a damaged -wal")
    lk.set_defaults(func=cmd_links)

    st = sub.add_parser("settings", help="the ALLOCSCOPE_* variables and their values here")
    st.add_argument("--markdown", action="store_true", help="the README's table of them")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_settings)
    _verify_parsers(sub)

    v = sub.add_parser("serve", help="run the web app")
    v.add_argument("--host", default="127.0.0.1")
    v.add_argument("--port", type=int, default=8000)
    v.add_argument("--ws-max-size", type=int, default=1 << 20)
    v.set_defaults(func=cmd_serve)

    from .lessons import add_cli  # `allocscope lessons` (app/lessons.py)
    add_cli(sub)
    return p


def _verify_parsers(sub: argparse._SubParsersAction) -> None:
    """``verify`` and ``sweep``: families and seed sweeps on a local pool or a Dask cluster."""
    f = sub.add_parser("verify", help="verify a variant over every instance of a family")
    f.add_argument("protocol", nargs="?")
    f.add_argument("--family")
    f.add_argument("--variant")
    f.add_argument("--max-states", type=int, help="per-instance state bound (default: the "
                   "family's)")
    f.add_argument("--max-seconds", type=float, help="per-instance wall-time bound of the "
                   "explorer (stops at different states under different loads)")
    f.add_argument("--max-cpu-seconds", type=float, help="per-instance CPU-time bound of the "
                   "explorer (the worker's time.process_time: the same stop under any load)")
    f.add_argument("--seeds", type=int, help="random schedules per instance (default: family's)")
    f.add_argument("--quick", action="store_true", help="only the family's CI subset")
    f.add_argument("--first", type=int, help="only the first N instances")
    f.add_argument("--skip", type=int, default=0,
                   help="leave out the first N instances (with --first: a slice)")
    f.add_argument("--only", help="only these instance indices, e.g. 365,368,372")
    f.add_argument("--sample", type=int, metavar="N", help="only N instances of each shape "
                   "class (the family's; one class if it has none), picked by seeded "
                   "reservoir sampling in one streamed pass")
    f.add_argument("--sample-seed", type=int, default=0, metavar="S",
                   help="seed of --sample's random.Random (default 0)")
    f.add_argument("--sample-classes", metavar="REGEX", help="with --sample: only the classes "
                   "whose name matches (the same picks as without it, for those classes)")
    f.add_argument("--count", action="store_true", help="print the number of instances")
    f.add_argument("--list", action="store_true", help="list the families")
    f.add_argument("--workers", type=int, help="local processes (default: all cores)")
    f.add_argument("--scheduler-address", help="run on this Dask distributed scheduler")
    f.add_argument("--group-starts", action="store_true",
                   help="explore instances that differ only by their start (kout_tree's chaos "
                   "seeds of one instance) in one search from all their starts; each row "
                   "still gets its own verdict, with the group's states")
    f.add_argument("--save", default="counterexamples",
                   help="folder for counterexample scenario files (default: ./counterexamples)")
    f.add_argument("--progress", action="store_true", help="progress bar even when not a tty")
    f.add_argument("--no-progress", action="store_true")
    f.add_argument("--json", action="store_true")
    f.add_argument("--rows", metavar="FILE", help="append each instance's row to FILE as one "
                   "JSON line the moment it is done, so a run stopped part-way keeps the rows "
                   "it finished (--json prints only at the end)")
    f.set_defaults(func=cmd_verify)

    w = sub.add_parser("sweep", help="metric distributions of a scenario over many seeds")
    w.add_argument("scenario")
    w.add_argument("--seeds", type=int, default=1000)
    w.add_argument("--variant")
    w.add_argument("--steps", type=int, help="step budget per run (default: the scenario's)")
    w.add_argument("--chunk", type=int, default=250, help="seeds per task")
    w.add_argument("--engine", choices=["core", "simulator"],
                   help="step the headless kernel core (default where it fits: fault-free, "
                   "not coterie; a run not all-served is re-run on the simulator) or the "
                   "full simulator")
    w.add_argument("--workers", type=int, help="local processes (default: all cores)")
    w.add_argument("--scheduler-address", help="run on this Dask distributed scheduler")
    w.add_argument("--out", default="sweep", help="output prefix: PREFIX.svg and PREFIX.json")
    w.add_argument("--progress", action="store_true")
    w.add_argument("--no-progress", action="store_true")
    w.add_argument("--json", action="store_true")
    w.set_defaults(func=cmd_sweep)


def _cluster_error() -> type[Exception]:
    from protocols.verify.runner import ClusterError
    return ClusterError


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if getattr(args, "steps", None) is not None and args.steps < 0:
        print("allocscope: --steps must be 0 or more", file=sys.stderr)
        return 2
    if getattr(args, "action", None) in ("backup", "restore") and not args.file:
        print(f"allocscope: links {args.action} needs a FILE", file=sys.stderr)
        return 2
    try:
        return args.func(args)
    except (ScenarioError, SimError, SettingsError, RawError, StoreError) as exc:
        print(f"allocscope: {exc}", file=sys.stderr)
        return 2
    except RecursionError:
        print("allocscope: the input is nested too deeply to read", file=sys.stderr)
        return 2
    except _cluster_error() as exc:
        print(f"allocscope: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
