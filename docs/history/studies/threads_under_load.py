"""The default thread count on a loaded machine: `bridgeembed-bench senteval` with no `--threads`
against `--threads 1` and `--threads N` (every core, torch's own default), in one run.

It starts `--busy` processes that spin on one core each (the "other work"), then runs the same
benchmark once per setting, `--repeats` rounds in alternating order, and reports wall seconds of
each run and the median per setting. The spinners stop when it ends, however it ends.

    python docs/history/studies/threads_under_load.py --data ../shared/data --tasks MR,TREC --busy 2
    python docs/history/studies/threads_under_load.py --tasks MR --busy 0 --repeats 1   # an idle machine
"""

import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bridgeembed.cli.scripts import parse_script, script_parser, write_json


def spin() -> None:
    while True:
        pass


def run_bench(tasks: str, threads: int | None, data: str | None, model: str, config: str) -> float:
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "bridgeembed.cli.bench", "senteval", "--model", model, "--tasks", tasks,
               "--config", config, "--quiet", "--no-plots", "--out", out]
        if data:
            cmd += ["--data", data]
        if threads is not None:
            cmd += ["--threads", str(threads)]
        env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        start = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        return time.perf_counter() - start


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--data", threads=False)
    parser.add_argument("--tasks", default="MR,TREC")
    parser.add_argument("--model", default="general-m2m")
    parser.add_argument("--config", default="prototype")
    parser.add_argument("--busy", type=int, default=2, help="spinning processes started as other work (default: 2)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default="results/threads_under_load.json")
    args = parse_script(parser, argv)

    from bridgeembed.devices import available_cores, default_threads

    cores = available_cores()
    settings = {"default": None, "--threads 1": 1, f"--threads {cores}": cores}
    spinners = [mp.Process(target=spin, daemon=True) for _ in range(args.busy)]
    for process in spinners:
        process.start()
    times = {name: [] for name in settings}
    try:
        time.sleep(5 if args.busy else 0)  # let the load average see the spinners
        for round_ in range(args.repeats):
            order = list(settings) if round_ % 2 == 0 else list(reversed(settings))
            for name in order:
                seconds = run_bench(args.tasks, settings[name], args.data, args.model, args.config)
                times[name].append(seconds)
                print(f"round {round_ + 1}: {name:>12}: {seconds:7.1f} s (load {os.getloadavg()[0]:.1f}, "
                      f"default now {default_threads()} thread(s))", flush=True)
    finally:
        for process in spinners:
            process.terminate()
    result = {"tasks": args.tasks, "config": args.config, "model": args.model, "cores": cores, "busy": args.busy,
              "seconds": times, "median": {name: statistics.median(v) for name, v in times.items()}}
    for name, value in result["median"].items():
        print(f"{name:>12}: median {value:7.1f} s ({value / result['median']['--threads 1']:.2f}x --threads 1)")
    write_json(args.out, result, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
