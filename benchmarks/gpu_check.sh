#!/usr/bin/env bash
# The GPU check in one call, on a machine that has a CUDA build of torch but no network.
#
#   bash benchmarks/gpu_check.sh fetch   # here, with network: wheels into .gpu_wheels/ (git-ignored)
#   bash benchmarks/gpu_check.sh         # there: install them beside its torch, run, write the JSON
#
# The run writes $OUT/gpu_check.json where $OUT is set (the device tool's folder that comes
# back), else benchmarks/results/gpu_check.json. Environment: PYTHON (default python3, the one
# holding the device's torch), WHEELS (default .gpu_wheels), GRPOKIT_COMMIT (the commit
# measured, for a copy of the tree without .git), GPU_CHECK_ARGS (extra gpu_check.py flags).
#
# What travels (fetch prints the sizes; 37 MiB in all, under the device's 64 MiB carry limit):
#   missing there:   trl, datasets, dill, multiprocess, math-verify, latex2sympy2_extended,
#                    antlr4-python3-runtime, rapidfuzz, jsonschema, jsonschema-specifications,
#                    referencing, rpds-py, pebble, gguf, httpx2, httpcore2, truststore (the judge client)
#   tested versions: transformers, peft, accelerate, regex (the machine's own may differ)
#   bitsandbytes:    unpacked with only its CUDA 13 and CPU libraries (3.9 MiB each; the whole
#                    wheel is 41 MiB), so the `memory` profile's 8-bit AdamW can be measured
# Versions are those of the project's tested environment; binary wheels are for CPython 3.12
# on x86-64 (PYVER overrides the Python version, e.g. to try the launcher on this machine).
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS=${WHEELS:-.gpu_wheels}
PYTHON=${PYTHON:-python3}
PURE=(trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 math-verify==0.9.0
      latex2sympy2_extended==1.11.0 antlr4-python3-runtime==4.13.2 jsonschema==4.26.0
      jsonschema-specifications==2025.9.1 referencing==0.37.0 pebble==5.2.3 gguf==0.19.0
      httpx2==2.16.2 httpcore2==2.16.2 truststore==0.10.5
      transformers==5.24.0 peft==0.21.2 accelerate==1.16.0)
BINARY=(rapidfuzz==3.14.6 rpds-py==2026.9.1 regex==2026.11.19)
BNB=bitsandbytes==0.50.2

fetch() {
  local pyver=${PYVER:-3.12} platforms=()
  for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 \
           manylinux2014_x86_64; do platforms+=(--platform "$p"); done
  mkdir -p "$WHEELS"
  "$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
    "${platforms[@]}" -d "$WHEELS" "${PURE[@]}" "${BINARY[@]}" "$BNB"
  # bitsandbytes ships one library per CUDA version; keep the CUDA 13 ones (the device's torch
  # is cu130) and the CPU one, unpacked, and drop the wheel.
  local bnb_whl; bnb_whl=$(ls "$WHEELS"/bitsandbytes-*.whl)
  rm -rf "$WHEELS/bitsandbytes-slim" && mkdir -p "$WHEELS/bitsandbytes-slim"
  "$PYTHON" - "$bnb_whl" "$WHEELS/bitsandbytes-slim" <<'EOF'
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as whl:
    keep = [n for n in whl.namelist() if not re.search(r"libbitsandbytes_cuda(?!13)\d+", n)]
    whl.extractall(sys.argv[2], keep)
EOF
  rm "$bnb_whl"
  du -sh "$WHEELS"/* | sort -h
  du -sh "$WHEELS"
}

run() {
  [ -d "$WHEELS" ] || { echo "no $WHEELS/: run 'bash benchmarks/gpu_check.sh fetch' where there is network, and carry $WHEELS" >&2; exit 2; }
  local venv=/tmp/grpokit-gpu-venv site base py
  rm -rf "$venv"
  if "$PYTHON" -m venv --system-site-packages --without-pip "$venv"; then
    # The device's python3 is itself a virtualenv: --system-site-packages reaches the base
    # interpreter's packages, not that venv's torch, so its site-packages is added after ours
    # (a .pth line): the carried versions shadow the machine's, torch comes from the machine.
    py=$venv/bin/python
    site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    base=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    echo "import site; site.addsitedir('$base')" > "$site/zz_device_site.pth"
  else
    # No venv module: the same order through PYTHONPATH, which comes before site-packages.
    echo "gpu_check.sh: no venv here; installing into $venv/site on PYTHONPATH instead" >&2
    py=$PYTHON site=$venv/site
    mkdir -p "$site" && export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
  fi
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" "$WHEELS"/*.whl
  if [ -d "$WHEELS/bitsandbytes-slim" ]; then cp -r "$WHEELS/bitsandbytes-slim/." "$site/"; fi
  "$py" -c 'import torch, transformers, trl, peft, datasets; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "transformers", transformers.__version__, "trl", trl.__version__)'
  local out=${OUT:-benchmarks/results}
  # shellcheck disable=SC2086
  "$py" -m benchmarks.gpu_check --out "$out/gpu_check.json" ${GPU_CHECK_ARGS:-}
}

case "${1:-run}" in
  fetch) fetch ;;
  run) run ;;
  *) echo "usage: bash benchmarks/gpu_check.sh [fetch|run]" >&2; exit 2 ;;
esac
