#!/usr/bin/env bash
# The main job: set up, build, benchmark every chapter on the default suite, write the results CSV
# and the plots. Without a GPU the kernels run on the PTX emulator instead (CONV_EMULATE=auto): each on
# its chapter's reference layers, counted, never timed (bench/results/emulator.csv), and modeled on an H100
# by the emulator's timing model, and on an A100 and an RTX A6000 (bench/results/modeled/h100.csv, a100.csv,
# a6000.csv: a model, not a measurement; the kernels measured on an H100 also from their PTX alone, for the
# model's validation, when the model or they changed), with the model's microbenchmarks and its independent
# check on a published GEMM series; then the chapters' counter tables, the counts their text quotes
# (bench/prose_numbers.py) and the plots are written from the CSVs.
#
#   bash bench/run.sh            the resnet50 suite (under 10 minutes on an H100)
#   bash bench/run.sh --quick    3 layers, 10 repetitions: a first look (on the emulator: each chapter's
#                                last step, counted and modeled on an H100)
# Any other arguments go to `conv bench` (see ./build/conv --help).
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

status=0
before=$(mktemp)
scratch=$(mktemp --suffix=.csv)
trap 'rm -f "$before" "$scratch"' EXIT
CONV_EMULATE=auto ./build/conv bench --model h100 "$@" || status=$?
# Run on the emulator (no GPU answered): the same kernels modeled on an A100 and an A6000 too, but for
# chapter 08's, whose sm_90a code neither can run. Their counts, the same again, go to a scratch CSV.
quick=0
for arg in "$@"; do [ "$arg" = --quick ] && quick=1; done
if [ "$quick" = 0 ] && [ bench/results/modeled/h100.csv -nt "$before" ]; then
    ./build/conv bench --emulate --model a100 "$@" --csv "$scratch" || status=$?
    ./build/conv bench --emulate --model a6000 "$@" --csv "$scratch" || status=$?
    # The validation's kernels modeled again from their PTX alone, where the model or they changed since
    # (emu/README.md, "Validation": what reading the machine code changes)
    stale=$(python3 bench/model_validation.py --stale-ptx-alone h100) || status=1
    if [ -n "$stale" ]; then
        ./build/conv bench --emulate --model h100 --ptx-alone --kernels "$stale" --csv "$scratch" || status=$?
    fi
fi
if [ -f bench/results/emulator.csv ]; then
    python3 bench/tables.py --counters bench/results/emulator.csv --readmes . || status=$?
fi
if [ -f bench/results/modeled/h100.csv ]; then # the timing model's tables (the H100's), and its validation
    python3 bench/tables.py --modeled bench/results/modeled/h100.csv --readmes . || status=$?
    python3 bench/model_validation.py --write || status=$?
fi
if [ "$quick" = 0 ] && [ -f bench/results/modeled/h100.csv ]; then # against published measurements
    python3 bench/model_microbench.py --write || status=$?
    python3 bench/model_sgemm.py --write || status=$?
fi
python3 bench/plot.py --results bench/results --out docs || status=$?
# what is generated from the code itself: the chapters' step diffs, where each kernel is tested
python3 bench/step_diffs.py . || status=$?
python3 tests/kernel_tests.py build/conv --write || status=$?

# What this run changed in the tree, so the last lines say where to look (nothing, when the code and
# the emulator are as they were: the counts are deterministic and the files carry no date).
changed=$(git status --porcelain -- bench/results docs chapters tests 2>/dev/null | awk '{print $2}' | tr '\n' ' ')
if [ -n "$changed" ]; then
    echo "run.sh: wrote ${changed% }; git diff shows what changed"
else
    echo "run.sh: the results, tables and plots in the tree are already what this run gives"
fi
exit $status
