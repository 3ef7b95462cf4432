"""The emulator's table of instructions (emu/instructions.def) is whole, and every row of it is tested.

For each row: its opcode and PTX name are its own, its handler is defined in emu/, its PTX ISA section names an
instruction chapter of the ISA, and some test runs the instruction: a PTX test kernel (tests/emu*/), an inline
`asm` of a CUDA test source there, or PTX a test writes itself (tests/test_emu*.py). An instruction counts as run
when a test's text has it with its name's parts in order, other modifiers between them (`match.sync` is run by
`match.all.sync.aligned.b32`). Adding an instruction is one row, one handler and one test: this is the check of
the third.

Run as: test_instruction_table.py SOURCE_ROOT
"""
import glob
import os
import re
import sys

ROW = re.compile(r'^INSTRUCTION\((\w+), "([^"]+)", (\w+), (\w+), "([^"]+)"\)$', re.M)
# an instruction in PTX text: after a line start, a guard or the opening quote of an inline asm string
INSTRUCTION = re.compile(r'(?:^|[\s"\'{;])(?:@!?%\w+\s+)?([a-z][a-z0-9_]*(?:\.[a-z0-9_:]+)*)(?=[\s;"])', re.M)
ISA_CHAPTERS = ('Integer Arithmetic', 'Extended-Precision Integer Arithmetic', 'Floating Point', 'Half Precision',
                'Comparison and Selection', 'Logic and Shift', 'Data Movement and Conversion', 'Control Flow',
                'Parallel Synchronization and Communication', 'Warp Level Matrix Multiply-Accumulate',
                'Asynchronous Warpgroup Level Matrix Multiply-Accumulate', 'Miscellaneous')


def run_names(texts):
    """Every dotted instruction name the texts hold, split into its parts."""
    names = set()
    for text in texts:
        names.update(tuple(m.group(1).split('.')) for m in INSTRUCTION.finditer(text))
    return names


def is_run(name, names):
    """Whether some name holds the row's parts in order, starting with its mnemonic."""
    parts = name.split('.')
    for have in names:
        if have[0] != parts[0]:
            continue
        rest = iter(have[1:])
        if all(any(h == p for h in rest) for p in parts[1:]):
            return True
    return False


def main():
    root = sys.argv[1]
    rows = ROW.findall(open(os.path.join(root, 'emu', 'instructions.def')).read())
    emu_code = ''.join(open(f).read() for f in glob.glob(os.path.join(root, 'emu', '*.c')))
    tests = [f for pattern in ('emu*/*.ptx', 'emu*/*.cu', 'test_emu*.py') for f in
             glob.glob(os.path.join(root, 'tests', pattern))]
    names = run_names(open(f).read() for f in tests)
    problems = []
    if len(rows) < 90:
        problems.append(f'only {len(rows)} rows read from instructions.def: is the row format the one this test reads?')
    for column, what in ((0, 'opcode'), (1, 'PTX name')):
        seen = [r[column] for r in rows]
        problems += [f'{what} {v} has two rows' for v in sorted(set(v for v in seen if seen.count(v) > 1))]
    for opcode, name, _, handler, isa in rows:
        if not re.search(r'\bstep %s\(' % re.escape(handler), emu_code):
            problems.append(f'{name}: handler {handler} is not defined in emu/')
        if not isa.startswith(ISA_CHAPTERS) or ': ' not in isa:
            problems.append(f'{name}: "{isa}" does not name an instruction chapter of the PTX ISA and a section')
        if not is_run(name, names):
            problems.append(f'{name}: no test runs it (tests/emu*/, tests/test_emu*.py)')
    # the matcher itself: a name no test has must not pass, nor a known one with its parts out of order
    if is_run('nosuchinstruction.sync', names) or is_run('sync.bar', names) or not is_run('bar.sync', names):
        problems.append('the matcher of names is wrong: it finds what is not there, or misses bar.sync')
    for p in problems:
        print('FAIL', p)
    print(f'test_instruction_table: {len(rows)} instructions, {len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
