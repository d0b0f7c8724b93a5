"""Hostile ``cmd:`` agents: each one attacks evalstats from inside a sample, and gets nowhere.

Every agent is a small Python script written to ``tmp_path``. It turns its
trace file into a FIFO, leaves sparse files of gigabytes, folders deeper than
Python's recursion limit or tens of thousands of files, reads other
processes' environments, or leaves processes behind that hide from the
session and the token (``setsid()``, the token dropped, a new pid on every
hop), kills the watchdog or its own keeper. What each gets is the documented
behaviour: the sample is recorded, within seconds, with what it did noted,
no traceback, bounded memory and nothing left running or on disk.

Every test is bounded: samples run under ``asyncio.wait_for``, subprocesses
under a timeout, agents loop for a bounded time and stop by themselves. The
mechanisms behind the process and environment tests are Linux ones
(``/proc``, ``prctl``); elsewhere those tests are skipped.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import pytest

from evalstats.running import _command, _reaper
from evalstats.running._command import TRACE_CAP, CmdTask
from evalstats.running._engine import Prompt, Variant
from evalstats.running._engine import run as run_engine
from evalstats.running._suite import Case
from evalstats.running._workspace import FILES_LISTED, OBSERVE_DEPTH, OBSERVE_ENTRIES

LINUX = sys.platform.startswith("linux") and Path("/proc/self/stat").exists()
needs_linux = pytest.mark.skipif(not LINUX, reason="needs Linux (/proc and prctl)")
needs_keeper = pytest.mark.skipif(
    _command._keeper_command() is None, reason="needs the keeper (Linux, /proc, prctl)"
)

CASE = Case(
    id="c",
    prompt="What is the project called?",
    checks=[{"contains": "Paper Kite"}],
    fixtures={"notes.txt": "Project name: Paper Kite\n"},
)

# Bounds of every sample here: the command's timeout, and the whole call.
TIMEOUT_S = 20.0
BOUND_S = 60.0


def write_agent(tmp_path: Path, source: str, name: str = "agent.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def cmd(agent: Path, *args: object) -> CmdTask:
    return CmdTask(" ".join([sys.executable, str(agent), *map(str, args)]))


def run_sample(task: CmdTask, *, case: Case = CASE, timeout: float = TIMEOUT_S):
    """One sample, in process, bounded; returns the TaskResult and the seconds it took."""
    prompt = Prompt(case.prompt, None, ({"role": "user", "content": case.prompt},))

    async def bounded():
        return await asyncio.wait_for(task.run(prompt, seed=1, case=case, timeout=timeout), BOUND_S)

    t0 = time.monotonic()
    result = asyncio.run(bounded())
    return result, time.monotonic() - t0


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return raw[raw.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def with_marker(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline.split(b"\0") and alive(int(entry)):
                found.append(int(entry))
    return found


def gone_soon(pids, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while any(alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def wait_for_file(path: Path, within: float = 10.0) -> str:
    deadline = time.monotonic() + within
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)
    return path.read_text()


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def write_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite.json"
    case = {
        "id": "c",
        "prompt": CASE.prompt,
        "checks": [{"contains": "Paper Kite"}],
        "fixtures": dict(CASE.fixtures),
    }
    suite.write_text(json.dumps({"name": "mini", "cases": [case]}))
    return suite


def cli_run(tmp_path: Path, variant: str, *, env: dict[str, str] | None = None, code: str = ""):
    """``evalstats run`` of a one-case suite in a subprocess with its own temporary folder.

    ``code`` runs in that process first. Returns the process, the results
    file's lines and the temporary folder (which should be empty after).
    """
    suite = tmp_path / "suite.json"
    if not suite.exists():
        write_suite(tmp_path)
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    out = tmp_path / "out.jsonl"
    full_env = {**os.environ, "TMPDIR": str(tmp), **(env or {})}
    args = ["run", str(suite), "--variant", variant, "--runs", "1", "--out", str(out)]
    args += ["--no-progress", "--timeout", str(TIMEOUT_S)]
    script = f"{code}\nimport sys\nfrom evalstats.cli import main\nsys.exit(main({args!r}))"
    proc = subprocess.run(
        [sys.executable, "-c", script],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=BOUND_S,
    )
    lines = out.read_text().splitlines() if out.exists() else []
    return proc, lines, tmp


# --- files that are not files -----------------------------------------------------

FIFOS = """
    import os, sys
    trace = os.environ["EVALSTATS_TRACE"]
    if sys.argv[1] == "fifo":
        os.mkfifo(trace)
        os.unlink("notes.txt")
        os.mkfifo("notes.txt")
    else:
        os.symlink("/dev/zero", trace)
        os.unlink("notes.txt")
        os.symlink("/dev/zero", "notes.txt")
    print("Project name: Paper Kite")
"""


@pytest.mark.parametrize(("how", "what"), [("fifo", "a FIFO"), ("link", "a symbolic link")])
def test_a_trace_and_a_fixture_turned_into_fifos_or_links_are_refused_unopened(tmp_path, how, what):
    result, elapsed = run_sample(cmd(write_agent(tmp_path, FIFOS), how))
    assert elapsed < 10.0
    record = result.trace
    assert (
        record["trace_error"] == f"the trace file cannot be read: it is {what}, not a regular file"
    )
    assert record["summary"] is None and record["trace_bytes"] == 0
    assert result.answer == "Project name: Paper Kite"  # scored on stdout, as for any bad trace
    assert record["workspace"]["fixtures_unchanged"] is False
    assert record["workspace"]["files_added"] == []


def test_a_fifo_trace_through_the_command_line_is_one_recorded_sample(tmp_path):
    agent = write_agent(tmp_path, FIFOS)
    write_suite(tmp_path)
    before = snapshot(tmp_path)
    proc, lines, tmp = cli_run(tmp_path, f"v=cmd:{sys.executable} {agent} fifo")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    (sample,) = [json.loads(line) for line in lines if '"case"' in line]
    assert "FIFO" in sample["trace"]["trace_error"]
    assert list(tmp.iterdir()) == []  # workspace and trace folder removed
    after = snapshot(tmp_path)
    assert {k: v for k, v in after.items() if k != "out.jsonl"} == before


# --- sizes: sparse files, depth, counts --------------------------------------------

SPARSE = """
    import os
    os.truncate("notes.txt", 8 << 30)
    with open(os.environ["EVALSTATS_TRACE"], "wb") as f:
        f.truncate(8 << 30)
    print("Project name: Paper Kite")
"""


def test_sparse_files_of_8_gib_cost_a_megabyte(tmp_path):
    task = cmd(write_agent(tmp_path, SPARSE))
    run_sample(cmd(write_agent(tmp_path, "print('Paper Kite')", "plain.py")))  # imports done
    tracemalloc.start()
    try:
        result, elapsed = run_sample(task)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert elapsed < 10.0
    assert peak < 3 * TRACE_CAP + (4 << 20), peak  # the trace's first MiB, and its text
    record = result.trace
    assert record["trace_bytes"] == 8 << 30
    assert record["trace_error"].startswith("the trace file is truncated")
    assert record["workspace"]["fixtures_unchanged"] is False


NESTED = """
    import os, sys
    print(os.getcwd(), flush=True)
    for _ in range(int(sys.argv[1])):
        os.mkdir("d")
        os.chdir("d")
    os.chmod(".", 0o500)  # and the deepest folder read-only
"""


def test_folders_deeper_than_the_recursion_limit_are_observed_cut_and_removed(tmp_path):
    depth = sys.getrecursionlimit() + 100
    result, elapsed = run_sample(cmd(write_agent(tmp_path, NESTED), depth))
    assert elapsed < 30.0  # rmdir of each folder, on a slow disk a few ms
    workspace = Path(result.answer)
    assert not workspace.exists() and not workspace.parent.exists()
    observed = result.trace["workspace"]
    assert observed["fixtures_unchanged"] is True and observed["files_added"] == []
    assert observed["observation_cut"] == [
        f"1 folder(s) nested deeper than {OBSERVE_DEPTH} were not observed"
    ]


MANY = """
    import os, sys
    for i in range(int(sys.argv[1])):
        open(f"f{i:06d}-{'x' * 40}", "w").close()
    print("Project name: Paper Kite")
"""


def test_tens_of_thousands_of_files_make_a_short_record(tmp_path):
    files = OBSERVE_ENTRIES + 1000
    agent = write_agent(tmp_path, MANY)
    out = tmp_path / "r.jsonl"
    t0 = time.monotonic()
    run_engine(
        [CASE],
        [Variant("v", cmd(agent, files))],
        runs=1,
        out=out,
        timeout=TIMEOUT_S,
        progress=False,
    )
    assert time.monotonic() - t0 < 30.0
    (line,) = [x for x in out.read_text().splitlines() if '"case"' in x]
    assert len(line) < 64 * 1024, len(line)  # not megabytes
    observed = json.loads(line)["trace"]["workspace"]
    assert len(observed["files_added"]) == FILES_LISTED
    assert observed["observation_cut"][0] == (
        f"the workspace holds more than {OBSERVE_ENTRIES} entries; "
        f"the first {OBSERVE_ENTRIES} were observed"
    )
    assert observed["observation_cut"][1].startswith(f"files_added lists the first {FILES_LISTED}")


def test_the_start_up_sweep_survives_what_a_killed_run_left(tmp_path, monkeypatch):
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    dead = f"{done.pid} 1\n"
    deep = tmp_path / "evalstats-ws-deep"
    deep.mkdir()
    (deep / _reaper.OWNER_FILE).write_text(dead)
    fd = os.open(deep, os.O_RDONLY)
    for _ in range(sys.getrecursionlimit() + 100):  # by descriptor: past PATH_MAX too
        os.mkdir("d", dir_fd=fd)
        fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
        os.close(old)
    os.close(fd)
    strange = {
        "evalstats-ws-fifo": lambda p: os.mkfifo(p),
        "evalstats-ws-link": lambda p: os.symlink("/dev/zero", p),
        "evalstats-ws-sparse": lambda p: (Path(p).touch(), os.truncate(p, 8 << 30)),
        "evalstats-ws-huge-pid": lambda p: Path(p).write_text("9" * 40 + " 1\n"),
        "evalstats-ws-pid-0": lambda p: Path(p).write_text("0 1\n"),
        "evalstats-trace-digits": lambda p: Path(p).write_text("\u0661\u0662 1\n"),
        "evalstats-trace-folder": lambda p: os.mkdir(p),
    }
    for name, make in strange.items():
        (tmp_path / name).mkdir()
        make(str(tmp_path / name / _reaper.OWNER_FILE))
    t0 = time.monotonic()
    assert _reaper.sweep(tmp_path) == [str(deep)]
    assert time.monotonic() - t0 < 30.0
    assert not deep.exists()
    assert all((tmp_path / name).exists() for name in strange)  # not ours to judge: kept
    # And a cmd: task made with that temporary folder starts.
    monkeypatch.setattr(_command, "_swept", False)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    CmdTask(f"{sys.executable} -c pass")


# --- evalstats' environment -------------------------------------------------------

# Reads every environment of /proc it can, and its parent's (the keeper's).
ENVIRON = """
    import os
    found = readable = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().split(b"\\0")
        except OSError:
            continue
        readable += 1
        found += any(v.startswith((b"AWS_SECRET_ACCESS_KEY=", b"DB_PASSWORD=")) for v in environ)
    try:
        open(f"/proc/{os.getppid()}/environ", "rb").close()
        parent = "readable"
    except OSError:
        parent = "unreadable"
    print(f"found {found} readable {readable} parent {parent}")
"""

SECRETS = {
    "AWS_SECRET_ACCESS_KEY": "aws-secret-canary-5c1e0f2b9d",
    "DB_PASSWORD": "db-password-canary-7a3d4e6f",
}


# Run as root, evalstats first gives up every capability, for itself and all it
# starts (the bounding set), to be what a process of an ordinary user is: root,
# with CAP_SYS_PTRACE or CAP_SYS_ADMIN, reads every environment.
ORDINARY_USER = """
import ctypes, os
if os.geteuid() == 0:
    libc = ctypes.CDLL(None, use_errno=True)
    cap = 0
    while libc.prctl(24, cap, 0, 0, 0) == 0:  # PR_CAPBSET_DROP, up to the last capability
        cap += 1
    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
    header, data = Header(0x20080522, 0), (ctypes.c_uint32 * 6)()
    assert libc.capset(ctypes.byref(header), data) == 0
"""


@needs_linux
@pytest.mark.parametrize(
    ("start", "hidden"), [("keeper", True), ("direct", True), ("keeper", False)]
)
def test_an_agent_reads_no_environment_of_evalstats(tmp_path, start, hidden):
    agent = write_agent(tmp_path, ENVIRON)
    code = ORDINARY_USER
    if start == "direct":  # no keeper: evalstats is the parent, and the watchdog runs
        code += "from evalstats.running import _command; _command._KEEPER_ON = False\n"
    if not hidden:  # shows that the agent would find them in a dumpable evalstats
        code += "from evalstats.running import _reaper; _reaper._hidden = False\n"
    proc, lines, tmp = cli_run(tmp_path, f"v=cmd:{sys.executable} {agent}", env=SECRETS, code=code)
    assert proc.returncode == 0, proc.stderr
    (sample,) = [json.loads(line) for line in lines if '"case"' in line]
    found, readable = int(sample["answer"].split()[1]), int(sample["answer"].split()[3])
    assert readable >= 1  # its own, at least
    if hidden:
        assert found == 0, sample["answer"]
    else:
        assert found >= 1, sample["answer"]
    raw = "\n".join(lines)
    assert not any(v in raw for v in SECRETS.values())
    assert list(tmp.iterdir()) == []


ECHO = """
    import os
    print("the password is", os.environ["DB_PASSWORD"])
"""


def test_a_secret_an_agent_was_given_and_prints_stops_the_run_in_one_line(tmp_path):
    agent = write_agent(tmp_path, ECHO)
    proc, lines, tmp = cli_run(
        tmp_path, f"v=cmd:{sys.executable} {agent},env=DB_PASSWORD", env=SECRETS
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "evalstats: error: refusing to write a credential (the value of $DB_PASSWORD) "
        "into the results file"
    ]
    assert not any(SECRETS["DB_PASSWORD"] in line for line in lines)
    assert list(tmp.iterdir()) == []


# --- processes that hide ----------------------------------------------------------

# A child leaves the session and drops (or overwrites) the token, then runs
# another program (its environment in /proc is then the new one), sleeping
# 30 s at most; the agent itself ends once the child is running.
HIDER = """
    import os, sys, time
    pid_file, how = sys.argv[1], sys.argv[2]
    if os.fork() == 0:
        os.setsid()
        env = dict(os.environ)
        if how == "drop":
            del env["EVALSTATS_TASK_TOKEN"]
        else:
            env["EVALSTATS_TASK_TOKEN"] = "0" * 32
        code = ("import os, sys, time; open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid())); "
                "os.replace(sys.argv[1] + '.tmp', sys.argv[1]); time.sleep(30)")
        os.execve(sys.executable, [sys.executable, "-c", code, pid_file], env)
    while not os.path.exists(pid_file):
        time.sleep(0.01)
    print("Project name: Paper Kite")
"""


@needs_keeper
@pytest.mark.parametrize("how", ["drop", "overwrite"])
def test_a_setsid_descendant_without_the_token_is_ended_with_the_sample(tmp_path, how):
    pid_file = tmp_path / "hider.pid"
    result, elapsed = run_sample(cmd(write_agent(tmp_path, HIDER), pid_file, how))
    assert elapsed < 5.0
    assert result.answer == "Project name: Paper Kite" and result.trace["exit_code"] == 0
    assert gone_soon([int(pid_file.read_text())], within=1.0)


# Forks, exits and calls setsid() on every hop for HOP_S seconds, then sleeps
# 30 s at most, with the token or without; the agent ends once the hopping
# has begun. While it hops, no scan of /proc sees it (its pid changes faster).
HOP_S = 3.0
HOPPER = """
    import os, sys, time
    started, marker, token = sys.argv[1:4]
    if "HOPPING" not in os.environ:
        if os.fork() == 0:
            env = dict(os.environ, HOPPING="1")
            if token == "drop":
                del env["EVALSTATS_TASK_TOKEN"]
            os.execve(sys.executable, [sys.executable, *sys.argv], env)
        while not os.path.exists(started):
            time.sleep(0.01)
        print("Project name: Paper Kite")
        sys.exit(0)
    stop = time.monotonic() + float(sys.argv[4])
    open(started, "w").close()
    while time.monotonic() < stop:
        if os.fork():
            os._exit(0)
        os.setsid()
    time.sleep(30)
"""


@needs_keeper
@pytest.mark.parametrize("token", ["keep", "drop"])
def test_a_pid_hopper_is_ended_while_it_hops(tmp_path, token):
    marker = f"hopper-{os.getpid()}-{time.monotonic_ns()}"
    agent = write_agent(tmp_path, HOPPER)
    started = tmp_path / "started"
    result, elapsed = run_sample(cmd(agent, started, marker, token, HOP_S))
    hopping_since = started.stat().st_mtime
    assert result.trace["exit_code"] == 0
    assert time.time() - hopping_since < HOP_S  # the sample ended while it hopped
    # A hopper that survived has stopped hopping by now, and sits where a scan sees it.
    time.sleep(max(0.0, hopping_since + HOP_S + 0.5 - time.time()))
    assert with_marker(marker) == []


# Kills the watchdog of its own evalstats (there is none under a keeper), then
# leaves a child that left the session and dropped the token.
WATCHDOG_KILLER = """
    import os, signal, sys, time

    def parent_of(pid):
        raw = open(f"/proc/{pid}/stat", "rb").read()
        return int(raw[raw.rfind(b")") + 2 :].split()[1])

    def cmdline(pid):
        return open(f"/proc/{pid}/cmdline", "rb").read()

    evalstats = os.getppid()
    if b"_keeper.py" in cmdline(evalstats):
        evalstats = parent_of(evalstats)
    for pid in os.listdir("/proc"):
        try:
            if not pid.isdigit() or parent_of(int(pid)) != evalstats:
                continue
            if b"import watch" in cmdline(pid):
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass
    pid_file = sys.argv[1]
    if os.fork() == 0:
        os.setsid()
        env = {k: v for k, v in os.environ.items() if k != "EVALSTATS_TASK_TOKEN"}
        code = ("import os, sys, time; open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid())); "
                "os.replace(sys.argv[1] + '.tmp', sys.argv[1]); time.sleep(30)")
        os.execve(sys.executable, [sys.executable, "-c", code, pid_file], env)
    time.sleep(30)
"""

DRIVER = textwrap.dedent(
    r"""
    import asyncio, sys
    from evalstats.running._suite import Case
    from evalstats.running._engine import Prompt
    from evalstats.running._command import CmdTask

    case = Case(id="c", prompt="q", checks=[{"contains": "x"}])
    task = CmdTask(sys.argv[1])
    asyncio.run(task.run(Prompt("q", None, ({"role": "user", "content": "q"},)), seed=1,
                         case=case, timeout=60))
    """
)


@needs_keeper
def test_an_agent_that_kills_the_watchdog_does_not_outlive_kill_9_of_evalstats(tmp_path):
    pid_file = tmp_path / "hider.pid"
    agent = write_agent(tmp_path, WATCHDOG_KILLER)
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, f"{sys.executable} {agent} {pid_file}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        hider = int(wait_for_file(pid_file))
        assert alive(hider)
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=BOUND_S)
    assert gone_soon([hider], within=5.0)


# Leaves a child in its session (with the token), then kills its keeper.
KEEPER_KILLER = """
    import os, signal, sys, time
    keeper = os.getppid()
    assert b"_keeper.py" in open(f"/proc/{keeper}/cmdline", "rb").read()
    if os.fork() == 0:
        open(sys.argv[1] + ".tmp", "w").write(str(os.getpid()))
        os.replace(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(30)
        os._exit(0)
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.01)
    open(sys.argv[2], "w").write(str(os.getpid()))
    os.kill(keeper, signal.SIGKILL)
    time.sleep(30)
"""


@needs_keeper
def test_an_agent_that_kills_its_keeper_is_incomplete_and_ended(tmp_path):
    child_file, agent_file = tmp_path / "child.pid", tmp_path / "agent.pid"
    task = cmd(write_agent(tmp_path, KEEPER_KILLER), child_file, agent_file)
    result, elapsed = run_sample(task)
    assert elapsed < 5.0
    assert result.answer is None and result.trace["exit_code"] is None
    assert result.trace["incomplete"].startswith(
        "the command's keeper (the process evalstats runs it under) ended with signal 9"
    )
    # The command dies with its keeper; what holds the token, evalstats ends.
    assert gone_soon([int(agent_file.read_text()), int(child_file.read_text())], within=2.0)
