"""The numbers the chapters' prose quotes from the emulator's counts, generated from the CSV.

A number in a README that comes from a run is written between two HTML comments, which a rendered page
does not show:

    05b executes <!--= {05b/res4_3x3/warp_inst} -->1.08e8<!--/--> warp instructions

Between `<!--=` and `-->` is an expression; between `-->` and `<!--/-->` the number as the reader sees
it. The expression is arithmetic (numbers, + - * /, parentheses) over

  {KERNEL/LAYER/COLUMN}  one value of bench/results/emulator.csv: a count column (warp_inst,
                         global_load_sectors, ...) or a problem column (n, c, h, w, k, r, s, stride, pad,
                         dilation, groups); LAYER is the CSV's (resnet50/res4_3x3) or its short name
                         (res4_3x3) when only one layer has it
  FUNCTION({KERNEL/LAYER})   a figure of a whole row, computed by bench/emulator_csv.py as the counter
                         tables compute it: bound_us (the bound from counts, µs), tensor_us, fp32_us,
                         issue_us, smem_us, dram_us (each resource's least time, µs), bank_conflicts,
                         global_traffic (bytes moved to and from global memory)
  abs(x), min(x, y, ...), max(x, y, ...), round(x) (to a whole number)
  same(x, y, ...)        x, when every argument equals it; otherwise an error: for a sentence that
                         quotes one number for several kernels ("82% of either kernel's instructions":
                         same(round(...), round(...)))

The shown number keeps its style: the value is formatted as the text is (`1.09e8`: three significant
digits, e-notation without '+'; `2,736`: thousands separators; `0.038`: three decimals; `12`; a suffix such as `%`,
`×` or ` µs` is kept as it is) and the two strings compared. So the expression gives the number in the
unit the text shows: a percentage is 100 * ..., "4% more" is 100 * (b / a - 1), which turns negative
when b becomes the smaller. A number whose sign changes is an error, never rewritten: the sentence
around it has to change.

    python3 bench/prose_numbers.py CSV FILE [FILE ...] [--check]

rewrites the numbers in the FILEs (or, with --check, writes nothing and exits 1 with one line per stale
number). bench/tables.py --counters CSV --readmes ROOT [--check] does the same for README.md, docs/*.md
and every chapter README, after their counter tables.
"""

import ast
import math
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import emulator_csv  # noqa: E402

OPEN, CLOSE = "<!--=", "<!--/-->"
MARKER = re.compile(r"<!--=(?P<expr>[^\n]*?)-->(?P<shown>[^\n]*?)<!--/-->")
PROBLEM_COLUMNS = ("n", "c", "h", "w", "k", "r", "s", "stride", "pad", "dilation", "groups")
COLUMNS = emulator_csv.COUNT_COLUMNS + PROBLEM_COLUMNS
# functions of a whole row: name -> row, h100 -> value
ROW_FUNCTIONS = {
    "bound_us": lambda row, h100: emulator_csv.floor(row, h100)[0],
    "tensor_us": lambda row, h100: emulator_csv.bound_us(row, h100)["tensor cores"],
    "fp32_us": lambda row, h100: emulator_csv.bound_us(row, h100)["fp32 pipes"],
    "issue_us": lambda row, h100: emulator_csv.bound_us(row, h100)["issue slots"],
    "smem_us": lambda row, h100: emulator_csv.bound_us(row, h100)["shared memory"],
    "dram_us": lambda row, h100: emulator_csv.bound_us(row, h100)["DRAM"],
    "bank_conflicts": lambda row, h100: emulator_csv.bank_conflicts(row),
    "global_traffic": lambda row, h100: emulator_csv.global_traffic(row),
}


def same(*values):
    """The value the sentence quotes for several things ("903,168 for 06a and 06b"): all must be equal."""
    if any(v != values[0] for v in values[1:]):
        raise MarkerError(f"the text gives one number for values that differ: {', '.join(f'{v:g}' for v in values)}")
    return values[0]


# name -> (function, how many numbers it takes: an int, or a range)
NUMBER_FUNCTIONS = {"abs": (abs, 1), "min": (min, range(2, 9)), "max": (max, range(2, 9)),
                    "round": (round, 1), "same": (same, range(2, 9))}
SHOWN = re.compile(r"^(?P<sign>[-−]?)(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?"
                   r"(?:e(?P<exp>[-−]?\d+))?(?P<suffix>[^\d]*)$")


class MarkerError(Exception):
    """A marker cannot be evaluated or formatted; str(error) says why, in one line."""


class Values:
    """The CSV's rows, looked up by {kernel/layer/column} and {kernel/layer}."""

    def __init__(self, rows, h100=None):
        self.rows = rows
        self.h100 = h100 if h100 is not None else emulator_csv.h100_figures()

    def row(self, kernel, layer):
        full = [r for r in self.rows if r["layer"] == layer]
        if not full:
            names = {r["layer"] for r in self.rows if r["layer"].split("/", 1)[-1] == layer}
            if len(names) > 1:
                raise MarkerError(f"layer '{layer}' is ambiguous ({', '.join(sorted(names))}): give its full name")
            full = [r for r in self.rows if r["layer"] in names]
        if not full:
            raise MarkerError(f"no layer '{layer}' in the CSV")
        found = [r for r in full if r["kernel"] == kernel]
        if not found:
            raise MarkerError(f"no row for kernel '{kernel}' on {full[0]['layer']}")
        if found[0]["status"] != "counted":
            raise MarkerError(f"{kernel} on {found[0]['layer']} was not counted ({found[0]['status']})")
        return found[0]

    def key(self, text):
        """{kernel/layer/column} -> number; {kernel/layer} -> the row (a function's argument)."""
        parts = text.strip().split("/")
        if len(parts) < 2 or not all(parts):
            raise MarkerError(f"'{{{text}}}' is not {{kernel/layer/column}} or {{kernel/layer}}")
        if len(parts) >= 3 and parts[-1] in COLUMNS:
            row = self.row(parts[0], "/".join(parts[1:-1]))
            value = row[parts[-1]]
            if value is None or value == "":
                raise MarkerError(f"'{{{text}}}' is empty in the CSV")
            return float(value)
        if len(parts) >= 3 and "/".join(parts[1:]) not in {r["layer"] for r in self.rows}:
            raise MarkerError(f"'{{{text}}}': unknown column '{parts[-1]}'")
        return self.row(parts[0], "/".join(parts[1:]))


def evaluate(expr, values):
    """The value of one marker's expression; MarkerError if it is not one this module allows."""
    keys = {}

    def name_key(match):
        name = f"_key{len(keys)}"
        keys[name] = match.group(1)
        return name

    source = re.sub(r"\{([^{}]*)\}", name_key, expr.strip())
    if "{" in source or "}" in source:
        raise MarkerError(f"unbalanced braces in '{expr.strip()}'")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        raise MarkerError(f"'{expr.strip()}' is not an expression") from None

    def number(node):
        value = walk(node)
        if isinstance(value, dict):
            raise MarkerError(f"{{{keys[node.id]}}} is a row: give a column, or pass it to a function")
        return value

    def walk(node):
        if isinstance(node, ast.Expression):
            return number(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.Name) and node.id in keys:
            return values.key(keys[node.id])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            value = number(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            a, b = number(node.left), number(node.right)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if b == 0:
                raise MarkerError(f"division by zero in '{expr.strip()}'")
            return a / b
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            name = node.func.id
            if name in ROW_FUNCTIONS:
                arg = walk(node.args[0]) if len(node.args) == 1 else None
                if not isinstance(arg, dict):
                    raise MarkerError(f"{name}() takes one row, {{kernel/layer}}")
                return ROW_FUNCTIONS[name](arg, values.h100)
            if name in NUMBER_FUNCTIONS:
                function, arity = NUMBER_FUNCTIONS[name]
                if len(node.args) not in (arity if isinstance(arity, range) else (arity,)):
                    takes = arity if isinstance(arity, int) else f"{arity.start} to {arity.stop - 1}"
                    raise MarkerError(f"{name}() takes {takes} number(s)")
                return function(*(number(a) for a in node.args))
            raise MarkerError(f"unknown function '{name}' (known: "
                              f"{', '.join(sorted(ROW_FUNCTIONS) + sorted(NUMBER_FUNCTIONS))})")
        what = ast.unparse(node) if hasattr(ast, "unparse") else type(node).__name__
        raise MarkerError(f"'{what}' is not allowed in a marker (numbers, + - * /, {{keys}}, known functions)")

    return float(walk(tree))


def style(shown):
    """How a shown number is written: (decimals, exponent?, thousands separators?, suffix)."""
    m = SHOWN.match(shown)
    if not m:
        raise MarkerError(f"'{shown}' is not a number this module can show (e.g. 1.09e8, 2,736, 0.038, 13%)")
    decimals = len(m.group("frac") or "")
    separators = "," in m.group("int")
    if m.group("exp") is not None and separators:
        raise MarkerError(f"'{shown}': thousands separators and an exponent together")
    # a number under 1,000 cannot show whether it would have separators: the prose's style is to use them
    if not separators and len(m.group("int")) <= 3:
        separators = None
    return decimals, m.group("exp") is not None, separators, m.group("suffix")


def show(value, shown_style):
    """`value` written in the style of a shown number."""
    decimals, exponent, separators, suffix = shown_style
    if not math.isfinite(value):
        raise MarkerError(f"the value is {value}")
    if exponent:
        mantissa, exp = f"{value:.{decimals}e}".split("e")
        text = f"{mantissa}e{int(exp)}"
    else:
        text = f"{value:{',' if separators is not False else ''}.{decimals}f}"
    if text.startswith("-") and not any(ch in "123456789" for ch in text):
        text = text[1:]  # no "-0.00"
    return text + suffix


def process(text, values, path="README"):
    """(new text, stale lines, error lines) for one file's markers; new text has every value rewritten."""
    stale, errors = [], []
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        where = f"{path}:{number}"
        matched = list(MARKER.finditer(line))
        opens = line.count(OPEN)
        closes = line.count(CLOSE)
        if opens != len(matched) or closes != len(matched):
            errors.append(f"{where}: malformed number marker (need <!--= expression -->number<!--/--> on one line)")
            continue
        pieces, end = [], 0
        for m in matched:
            expr, shown = m.group("expr").strip(), m.group("shown")
            pieces.append(line[end:m.start("shown")])
            end = m.end("shown")
            try:
                if "<!--" in shown:
                    raise MarkerError("a marker inside a marker")
                new = show(evaluate(expr, values), style(shown))
            except MarkerError as e:
                errors.append(f"{where}: {expr}: {e}")
                pieces.append(shown)
                continue
            if shown.startswith(("-", "−")) != new.startswith("-"):
                # "4% more" that became -2%: no rewrite of the number makes the sentence true
                errors.append(f"{where}: {expr} shows {shown}, the CSV gives {new}: the sign changed, so the "
                              f"sentence must be rewritten (then the marker)")
                pieces.append(shown)
                continue
            if new != shown:
                stale.append(f"{where}: {expr} shows {shown}, the CSV gives {new}")
            pieces.append(new)
        pieces.append(line[end:])
        lines[number - 1] = "".join(pieces)
    return "\n".join(lines), stale, errors


def count(text):
    """How many number markers a text has."""
    return len(MARKER.findall(text))


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", help="bench/results/emulator.csv")
    ap.add_argument("files", nargs="+", help="markdown files with number markers")
    ap.add_argument("--check", action="store_true", help="compare, write nothing; exit 1 if a number is stale")
    args = ap.parse_args(argv)
    try:
        values = Values(emulator_csv.load(args.csv))
    except emulator_csv.CsvError as e:
        print(f"prose_numbers: {args.csv}: {e}", file=sys.stderr)
        return 1
    failed = False
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        new, stale, errors = process(text, values, path)
        for line in errors + (stale if args.check else []):
            print(line, file=sys.stderr)
        failed |= bool(errors) or (args.check and bool(stale))
        if not args.check and new != text:  # (a marker in error keeps its line as it is)
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            for line in stale:
                print(f"updated {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
