// The Python program that runs a solution against its tests inside the sandbox
// (docs/code-rl.md#grading-code). It reads tests.json and solution.py, runs each test with its own
// time limit and writes one result line per test to a copy of stdout taken before the solution
// runs, each line prefixed with a per-run token, so what the solution prints is never read as a
// result. Test kinds (the cookbook's LiveCodeBench shapes, plus assert snippets for MBPP and
// HumanEval):
//   stdin_stdout  the solution is a program: stdin given, stdout compared line by line, trimmed
//   functional    call `fn` (on `Solution()` when the code defines that class) with the JSON
//                 values of the input's lines; the result compared with the JSON output
//   assert        Python run after the solution in its namespace; passes when nothing raises
export const HARNESS_PY = String.raw`
import io, json, os, signal, sys, traceback

TOKEN = sys.argv[1]
PER_TEST = float(sys.argv[2])
_results = os.fdopen(os.dup(1), "w")

def report(index, status, detail=""):
    _results.write(TOKEN + json.dumps({"index": index, "status": status, "detail": detail[:300]}) + "\n")
    _results.flush()

class TestTimeout(BaseException):
    pass

def _alarm(signum, frame):
    raise TestTimeout()

signal.signal(signal.SIGALRM, _alarm)

def limited(fn):
    signal.setitimer(signal.ITIMER_REAL, PER_TEST)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)

def normalize(value):
    if isinstance(value, tuple):
        return [normalize(v) for v in value]
    if isinstance(value, list):
        return [normalize(v) for v in value]
    return value

def lines_of(text):
    return [line.strip() for line in text.strip().splitlines()]

def short(value):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."

def error_text(exc):
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()

with open("tests.json") as f:
    spec = json.load(f)
with open("solution.py") as f:
    source = f.read()

namespace = None
def load():
    global namespace
    if namespace is None:
        ns = {"__name__": "solution"}
        saved = sys.stdout
        sys.stdout = io.StringIO()
        try:
            limited(lambda: exec(compile(spec.get("setup", "") + "\n" + source, "solution.py", "exec"), ns))
        finally:
            sys.stdout = saved
        namespace = ns
    return namespace

def run_stdin(test):
    saved_in, saved_out = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = io.StringIO(test["input"]), io.StringIO()
    try:
        try:
            limited(lambda: exec(compile(source, "solution.py", "exec"), {"__name__": "__main__"}))
        except SystemExit:
            pass
        got = sys.stdout.getvalue()
    finally:
        sys.stdin, sys.stdout = saved_in, saved_out
    if lines_of(got) == lines_of(test["output"]):
        return "passed", ""
    return "wrong", "got " + short(got.strip()) + ", expected " + short(test["output"].strip())

def run_functional(test):
    ns = load()
    target = ns["Solution"]() if "Solution" in ns and isinstance(ns["Solution"], type) else None
    fn = getattr(target, test["fn"], None) if target is not None else ns.get(test["fn"])
    if not callable(fn):
        return "error", "no function named " + test["fn"]
    args = [json.loads(line) for line in test["input"].split("\n") if line.strip() != ""]
    expected = json.loads(test["output"])
    saved = sys.stdout
    sys.stdout = io.StringIO()
    try:
        got = limited(lambda: fn(*args))
    finally:
        sys.stdout = saved
    # In Python True == 1: a number is not accepted for a boolean answer, nor the reverse.
    if normalize(got) == normalize(expected) and isinstance(got, bool) == isinstance(expected, bool):
        return "passed", ""
    return "wrong", "got " + short(got) + ", expected " + short(expected)

def run_assert(test):
    ns = load()
    saved = sys.stdout
    sys.stdout = io.StringIO()
    try:
        limited(lambda: exec(compile(test["code"], "test.py", "exec"), ns))
    finally:
        sys.stdout = saved
    return "passed", ""

RUNNERS = {"stdin_stdout": run_stdin, "functional": run_functional, "assert": run_assert}

for index, test in enumerate(spec["tests"]):
    try:
        status, detail = RUNNERS[test["kind"]](test)
    except TestTimeout:
        status, detail = "timeout", "over " + str(PER_TEST) + " s"
    except AssertionError as exc:
        status, detail = "wrong", error_text(exc) if str(exc) else "assertion failed"
    except MemoryError:
        status, detail = "error", "MemoryError"
    except BaseException as exc:
        status, detail = "error", error_text(exc)
    report(index, status, detail)
`;
