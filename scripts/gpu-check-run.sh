# shellcheck shell=bash
# `scripts/gpu-check run`, sourced by scripts/gpu-check (whose header says what each stage checks): the report's
# helpers, the stages (preflight, spikes, gradient, gtest, bench) and run itself (the manifest, the report, the
# log archive, the exit status). From scripts/gpu-check: here, bundle, grad_updates (asserted below), die, os_name and
# bmtk_config; run sets what the stages read (budget, work, bin, logs, report, count, the manifest's backend, ...).
: "${here:?}" "${bundle:?}" "${grad_updates:?}"

# --- run: helpers ---------------------------------------------------------------------------------------------
result() {  # STATUS NAME TEXT...
  local status=$1 name=$2
  shift 2
  echo "[gpu-check] $status $name: $*"
  echo "- $status $name: $*" >> "$report"
  count[$status]=$((${count[$status]:-0} + 1))
}
left() { echo $((t0 + budget - SECONDS)); }
cap() {  # WANT [RESERVE]: the seconds a stage may take, RESERVE (10) kept for what follows; 0: none left
  local l=$(($(left) - ${2:-10}))
  echo $((l < $1 ? (l > 0 ? l : 0) : $1))
}
vnum() { local IFS=.; set -- $1; echo $((${1:-0} * 1000 + ${2:-0})); }
gt() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a + 0 > b + 0)}'; }
h5vals() {  # FILE DATASET: the values, one a line (floats as %.17g)
  local f="$work/h5.$BASHPID.txt"
  rm -f "$f"
  "$bin/h5dump" -y -w 0 -m '%.17g' -o "$f" -d "$2" "$1" > /dev/null 2>&1 && tr ', \t' '\n\n\n' < "$f" | awk 'NF'
}
spikes_txt() {  # FILE: "population time node" lines, sorted
  local pop
  for pop in $("$bin/h5dump" -n "$1" | awk '$1 == "group" && $2 ~ /^\/spikes\/[^\/]+$/ {print substr($2, 9)}'); do
    paste -d' ' <(h5vals "$1" "/spikes/$pop/timestamps") <(h5vals "$1" "/spikes/$pop/node_ids") | sed "s|^|$pop |"
  done | LC_ALL=C sort
}
relerr() {  # ROWS < "a b" lines: the relative L2 error of the first row and of each row's change from the one before
  awk -v rows="$1" 'function rl2(n, d) { return d > 0 ? sqrt(n / d) : sqrt(n) }
    { a[NR] = $1; b[NR] = $2  # not two numbers (a value missing, nan, inf): an error unless the two texts agree
      if (NF != 2 || (("" $1) != ("" $2) && ($1 !~ /^[-+]?[0-9.]/ || $2 !~ /^[-+]?[0-9.]/))) bad++ }
    END { if (bad || NR % rows) { print "nan"; exit }
      e = NR / rows; n = d = 0
      for (i = 1; i <= e; i++) { n += (a[i] - b[i]) ^ 2; d += b[i] ^ 2 }
      err = rl2(n, d)
      for (k = 1; k < rows; k++) { n = d = 0
        for (j = k * e + 1; j <= (k + 1) * e; j++) { x = a[j] - a[j - e] - (b[j] - b[j - e]); y = b[j] - b[j - e]
          n += x * x; d += y * y }
        if (rl2(n, d) > err) err = rl2(n, d) }
      printf "%.3e\n", err }'
}

# --- run: stages ----------------------------------------------------------------------------------------------
preflight() {
  local smi="" why="not found" drv="" drv_cuda="" dev="" cc="" have rc=0 space
  if command -v nvidia-smi > /dev/null; then
    if smi=$(timeout 30 nvidia-smi 2>&1); then
      echo "$smi" > "$logs/nvidia-smi.txt"
      drv=$(grep -oE 'Driver Version: *[0-9.]+' <<< "$smi" | grep -oE '[0-9.]+$')
      drv_cuda=$(grep -oE 'CUDA Version: *[0-9.]+' <<< "$smi" | grep -oE '[0-9.]+$')
      dev=$(timeout 30 nvidia-smi -i 0 --query-gpu=name,memory.total,compute_cap --format=csv,noheader 2> /dev/null ||
        timeout 30 nvidia-smi -i 0 --query-gpu=name,memory.total --format=csv,noheader 2> /dev/null)
      cc=$(awk -F', *' 'NF >= 3 {print $3}' <<< "$dev")
    fi
    why="failed: $(head -1 <<< "$smi")"
  fi
  echo "[gpu-check] driver ${drv:-none} (CUDA ${drv_cuda:-none}); runtime CUDA $runtime (the bundle's, $backend" \
    "backend, arch ${arch:-none}); device ${dev:-none}"
  if [[ -z "$drv" && "$backend" == cuda ]]; then
    result FAIL driver "no NVIDIA driver (nvidia-smi $why), but the bundle is a CUDA $runtime build: stopping"
    return 1
  elif [[ -z "$drv" ]]; then
    result INFO driver "no GPU driver (nvidia-smi $why): rehearsal mode, $backend-backend bundle"
  elif [[ "$backend" != cuda ]]; then
    result INFO driver "driver $drv (CUDA $drv_cuda), device $dev; the bundle is a host build: rehearsal mode"
  elif [[ -z "$drv_cuda" ]]; then
    result INFO driver "driver $drv: no 'CUDA Version' in nvidia-smi's header, runtime $runtime unchecked; device $dev"
  elif (($(vnum "$drv_cuda") / 1000 < $(vnum "$runtime") / 1000)); then
    result FAIL driver "driver $drv supports CUDA $drv_cuda, older than the bundle's runtime $runtime: stopping"
    return 1
  elif (($(vnum "$drv_cuda") < $(vnum "$runtime"))); then
    result PASS driver "driver $drv supports CUDA $drv_cuda < runtime $runtime, same major (minor version compatibility); device $dev"
  else
    result PASS driver "driver $drv supports CUDA $drv_cuda >= runtime $runtime; device $dev"
  fi
  if [[ "$cc" =~ ^[0-9]+\.[0-9]$ && "$arch" =~ [0-9]+$ ]] && ((${cc//./} < ${arch//[!0-9]/})); then
    result FAIL device "compute capability $cc, but the bundle is built for $arch: stopping"
    return 1
  fi
  timeout 120 tar -C "$work/b" -xJf "$bundle/bundle.tar.xz" || { result FAIL unpack "tar exited $?: stopping"; return 1; }
  # a bundled library that needs a newer glibc than this machine's (libstdc++ of Debian 12 needs 2.36) gives way to
  # the machine's own copy, if it has one; an executable that does cannot run
  local f need newer="" system=""
  have=$(getconf GNU_LIBC_VERSION 2> /dev/null | awk '{print $2}')
  for f in $glibc; do
    need=${f##*:} f=${f%:*}
    [[ -n "$have" && "$(printf '%s\n' "$need" "$have" | sort -V | tail -1)" != "$have" ]] || continue
    if [[ "$f" == lib/* ]] && ldconfig -p 2> /dev/null | awk -v n="${f#lib/}" '$1 == n {f = 1} END {exit !f}'; then
      mkdir -p "$work/b/newer-glibc" && mv "$work/b/$f" "$work/b/newer-glibc/" && system+=" ${f#lib/}"
    else
      newer+=" $f ($need)"
    fi
  done
  if [[ -n "$newer" ]]; then
    result FAIL glibc "this machine has glibc $have, older than these files of the bundle (packed on $os) need:$newer: stopping"
    return 1
  fi
  timeout 60 "$bin/dpointnet" info > "$logs/info.log" 2>&1 || rc=$?
  space=$(sed -n 's/^default execution space: //p' "$logs/info.log")
  if ((rc != 0)) || [[ "$backend" == cuda && "$space" != Cuda* ]]; then
    result FAIL info "dpointnet info exited $rc, default space '${space:-?}': $(tail -1 "$logs/info.log"): stopping"
    return 1
  fi
  result PASS info "$(grep -m1 '^Kokkos [0-9]' "$logs/info.log"), $(grep -m1 '^Kokkos backends' "$logs/info.log"), default space $space; glibc ${have:-?}${system:+ (system copies of:$system)}; $(grep -m1 '^build:' "$logs/info.log")"
}

stage_spikes() {
  local p rc s t d="$work/sim" n_cpu n_dev common
  mkdir -p "$d"
  for p in float64 float32; do
    t=$(cap 60)
    ((t > 0)) || { result SKIP "spikes $p" "no time left"; continue; }
    bmtk_config "$d" "$p"
    rc=0 s=$SECONDS
    timeout -k 5 "$t" "$bin/dpointnet" simulate "$d/bmtk_$p.json" --no-progress > "$logs/simulate_$p.log" 2>&1 || rc=$?
    if ((rc != 0)); then
      result FAIL "spikes bmtk450 $p" "simulate exited $rc after $((SECONDS - s)) s: $(tail -1 "$logs/simulate_$p.log")"
      continue
    fi
    spikes_txt "$work/b/ref/cpu_bmtk_$p.h5" > "$d/cpu_$p.txt"
    spikes_txt "$d/out_$p/spikes.h5" > "$d/dev_$p.txt"
    n_cpu=$(wc -l < "$d/cpu_$p.txt") n_dev=$(wc -l < "$d/dev_$p.txt")
    if ((n_cpu > 0)) && cmp -s "$d/cpu_$p.txt" "$d/dev_$p.txt"; then
      result PASS "spikes bmtk450 $p" "$n_dev spikes in 3000 steps, identical to the CPU build's ($((SECONDS - s)) s)"
    else
      common=$(LC_ALL=C comm -12 "$d/cpu_$p.txt" "$d/dev_$p.txt" | wc -l)
      LC_ALL=C diff "$d/cpu_$p.txt" "$d/dev_$p.txt" | head -200 > "$logs/spikes_$p.diff"
      result FAIL "spikes bmtk450 $p" "$n_dev spikes, the CPU build's $n_cpu, $common in common; first difference" \
        "(population t node; < CPU, > this build): $(grep -m1 '^[<>]' "$logs/spikes_$p.diff")"
    fi
  done
}

stage_gradient() {
  local t rc=0 s=$SECONDS tol=${GPU_CHECK_GRAD_TOL:-1e-10} cpu="$work/b/ref/cpu_grad.h5" dev="$work/dev_grad.h5"
  local ds rows err worst=0 worst_ds="" bad="" n=0 what
  t=$(cap 90)
  ((t > 0)) || { result SKIP gradient "no time left"; return; }
  timeout -k 5 "$t" "$bin/dpointnet" train "$work/b/ref/grad/train.json" --gradient-check "$dev" \
    --gradient-check-updates "$grad_updates" --no-progress > "$logs/gradient.log" 2>&1 || rc=$?
  if ((rc != 0)); then
    result FAIL gradient "train --gradient-check exited $rc after $((SECONDS - s)) s: $(tail -1 "$logs/gradient.log")"
    return
  fi
  for ds in $("$bin/h5dump" -n "$cpu" | awk '$1 == "dataset" {print $2}'); do
    rows=1
    [[ "$ds" == /weights/* ]] && rows=$((grad_updates + 1))  # before and after each update: compare the updates
    err=$(paste -d' ' <(h5vals "$cpu" "$ds") <(h5vals "$dev" "$ds" || echo missing) | relerr "$rows")
    echo "$ds $err" >> "$logs/gradient_compare.txt"
    n=$((n + 1))
    if [[ "$err" == nan ]] || gt "$err" "$tol"; then bad+=" $ds ($err)"; elif gt "$err" "$worst"; then worst=$err worst_ds=$ds; fi
  done
  what="300 neurons, T 50, B 4, $grad_updates updates, float64; first loss $(h5vals "$dev" /loss/total | head -1)"
  what+=" (CPU build $(h5vals "$cpu" /loss/total | head -1))"
  if [[ -z "$bad" ]] && ((n > 0)); then
    result PASS gradient "$what: $n datasets within relative $tol of the CPU build's, worst $worst ${worst_ds:+($worst_ds) }($((SECONDS - s)) s)"
  else
    result FAIL gradient "$what: over relative $tol or missing:$bad (of $n datasets; logs/gradient_compare.txt)"
  fi
}

stage_gtests() {
  local exes=() t name rc s avail log ran ok failed last i=0
  for t in "$bin"/dpointnet_tests*; do [[ "$t" == */dpointnet_tests || "$t" == *_serial ]] || exes+=("$t"); done
  for t in "$bin/dpointnet_tests" "$bin/dpointnet_tests_serial"; do [[ -x "$t" ]] && exes+=("$t"); done
  for t in "${exes[@]}"; do  # the default backend's suite first, then the backend-independent one, then Serial's
    i=$((i + 1)) name=$(basename "$t") log="$logs/$(basename "$t").log"
    avail=$(cap 600 $((bench_reserve + 30 * (${#exes[@]} - i))))
    ((avail >= 20)) || { result SKIP "gtest $name" "only $(left) s left of the $budget s budget"; continue; }
    rc=0 s=$SECONDS
    timeout -k 5 "$avail" "$t" ${GPU_CHECK_GTEST_FILTER:+--gtest_filter=$GPU_CHECK_GTEST_FILTER} \
      --gtest_output="json:$logs/$name.json" > "$log" 2>&1 || rc=$?
    ran=$(grep -oE '^\[==========\] [0-9]+ tests? from .* ran' "$log" | awk '{print $2}')
    ok=$(grep -c '^\[       OK \]' "$log")
    failed=$(grep '^\[  FAILED  \] ' "$log" | grep -v 'listed below' | awk '{print $4}' | sort -u | tr '\n' ' ')
    last=$(grep '^\[ RUN      \]' "$log" | tail -1 | awk '{print $4}')
    if ((rc == 124 || rc == 137)); then
      result FAIL "gtest $name" "timed out after $avail s in ${last:-?} ($ok passed so far; failed: ${failed:-none})"
    elif ((rc > 128)) || [[ -z "$ran" ]]; then
      result FAIL "gtest $name" "exit $rc in ${last:-?} after $ok passed (failed: ${failed:-none}): $(tail -1 "$log")"
    elif ((rc != 0)) || [[ -n "$failed" ]]; then
      result FAIL "gtest $name" "$ran tests, $(wc -w <<< "$failed") failed: $failed($((SECONDS - s)) s)"
    else
      result PASS "gtest $name" "$ran tests, $ok passed, $(grep '^\[  SKIPPED \] [^0-9]' "$log" | awk '{print $4}' | sort -u | wc -l) skipped ($((SECONDS - s)) s)"
    fi
  done
}

stage_bench() {
  local n=${GPU_CHECK_NEURONS:-66000} T=${GPU_CHECK_STEPS:-500} B=${GPU_CHECK_BATCH:-16} C=${GPU_CHECK_INTERVAL:-25}
  local t rc=0 s=$SECONDS base="" mpid="" line cfg="$work/bench/net_$n/bench_train.json" predicted measured
  t=$(cap 600 50)
  if ((t < ${GPU_CHECK_BENCH_MIN_S:-60})); then
    result SKIP bench "only $(left) s left of the $budget s budget: the benchmark ($n neurons, T=$T, B=$B) and plan not run"
    return
  fi
  if [[ "$backend" == cuda ]]; then  # device memory, polled every 200 ms
    base=$(nvidia-smi -i 0 --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
    nvidia-smi -i 0 --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > "$work/mem.txt" 2> /dev/null &
    mpid=$!
  fi
  timeout -k 5 "$t" "$bin/dpointnet-bench-train" --neurons "$n" --steps "$T" --batch "$B" --checkpoint-interval "$C" \
    --updates 2 --precision "${GPU_CHECK_PRECISIONS:-float32,bfloat16,float16}" --workdir "$work/bench" > "$logs/bench.log" 2>&1 ||
    rc=$?
  [[ -n "$mpid" ]] && { kill "$mpid"; wait "$mpid"; } 2> /dev/null
  line=$(grep 'samples/s' "$logs/bench.log" | sed 's/^ *//; s/  */ /g' | paste -sd';' | sed 's/;/; /g')
  if ((rc == 0)) && [[ -n "$line" ]]; then
    result PASS bench "$line ($((SECONDS - s)) s with the network's generation)"
  else
    result FAIL bench "dpointnet-bench-train exited $rc after $((SECONDS - s)) s: $(tail -1 "$logs/bench.log")"
  fi
  t=$(cap 60 5) rc=0
  [[ -f "$cfg" ]] && ((t > 10)) || { result SKIP plan "no benchmark config ($cfg) or no time left"; return; }
  timeout -k 5 "$t" "$bin/dpointnet" plan "$cfg" > "$logs/plan.log" 2>&1 || rc=$?
  predicted=$(awk '$1 == "total" {print $2; exit}' "$logs/plan.log")
  if [[ -z "$predicted" ]] || ((rc != 0 && rc != 3)); then
    result FAIL plan "dpointnet plan exited $rc: $(tail -1 "$logs/plan.log")"
    return
  fi
  if [[ -n "$base" && -s "$work/mem.txt" ]]; then
    measured="measured $(awk -v b="$base" '$1 > m {m = $1} END {print m - b}' "$work/mem.txt") MiB (peak of nvidia-smi's memory.used over the $base MiB before; CUDA context included)"
  else
    measured="measured $(grep -oE 'peak RSS [0-9.]+ GiB' <<< "$line" || echo 'nothing') (the process's host memory: no device memory to poll)"
  fi
  result INFO memory "$n neurons T=$T B=$B C=$C: plan predicts $predicted MiB (available on $(sed -n 's/^available on //p' "$logs/plan.log")); $measured"
}

run() {
  [[ -f "$bundle/bundle.tar.xz" && -f "$bundle/manifest" ]] ||
    die "no $bundle/bundle.tar.xz (run 'scripts/gpu-check pack' first and carry gpu-bundle)"
  out=${OUT:-$PWD/gpu-check-out} budget=${GPU_CHECK_BUDGET_S:-470} bench_reserve=${GPU_CHECK_BENCH_RESERVE_S:-170}
  report="$out/gpu-check.md" work=${TMPDIR:-/tmp}/dpointnet-gpu-check t0=$SECONDS
  bin="$work/b/bin" logs="$work/logs"  # logs: one archive at the end ($OUT brings back 8 files)
  declare -gA count=()
  local backend runtime arch glibc os commit packed summary
  . "$bundle/manifest"
  rm -rf "$work" "$report" "$out/gpu-check-logs.tar.gz" && mkdir -p "$out" "$logs" "$work/b"
  echo "# gpu-check $(date -u +%FT%TZ) on ${HOSTNAME:-?} ($(os_name)): bundle $commit, packed $packed on $os" > "$report"
  export LD_LIBRARY_PATH="$work/b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OMP_PROC_BIND=false
  export DPOINTNET_TEST_DATA_DIR=${DPOINTNET_TEST_DATA_DIR:-$here/tests/data} DPOINTNET_BIN="$bin/dpointnet"
  if preflight; then
    stage_spikes
    stage_gradient
    stage_gtests
    stage_bench
  fi
  summary="${count[PASS]:-0} PASS, ${count[FAIL]:-0} FAIL, ${count[SKIP]:-0} SKIP, ${count[INFO]:-0} INFO in $((SECONDS - t0)) s (budget $budget s)"
  echo "- total: $summary" >> "$report"
  tar -C "$work" -czf "$out/gpu-check-logs.tar.gz" logs || cat "$logs"/* > "$out/gpu-check-logs.txt"
  echo "[gpu-check] $summary; report: $report, logs: $out/gpu-check-logs.tar.gz"
  ((${count[FAIL]:-0} == 0))
}
