#!/usr/bin/env bash
# The main job: set up, build, benchmark every chapter on the default suite, write the results CSV
# and the plots. Without a GPU it runs the CPU chapter and redraws the plots from the committed CSVs.
#
#   bash bench/run.sh            the resnet50 suite (under 10 minutes on an H100)
#   bash bench/run.sh --quick    3 layers, 10 repetitions: a first look
# Any other arguments go to `conv bench` (see ./build/conv --help).
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

status=0
./build/conv bench "$@" || status=$?
python3 bench/plot.py --results bench/results --out docs || status=$?
exit $status
