# The eleventh H100 spot check's paired probes (docs/spot_checks.rst): fresh processes with an
# empty provider cache each, the new tree (src/) and a base tree (BASE_SRC: 4e220c3's src/, before
# the span/mdspan stand-ins) alternated, the reduce kernel (the process's first) and the load/store
# kernel (a trivial kernel first).  One line per process: tree, shape, round, the probe's JSON.
#   BASE_SRC=/path/to/base/src N=4 OUT=dir bash docs/performance/h100_91793ad/paired_probes.sh
out="${OUT:-/tmp/probes}"; n="${N:-4}"; here=docs/performance
mkdir -p "$out"
for r in $(seq 1 "$n"); do for tree in new base; do for shape in reduce ls; do
  if [ $tree = new ]; then src=$PWD/src; else src=$BASE_SRC; fi
  if [ $shape = reduce ]; then p=$here/h100_2e65d93/first_context_paired/probe.py; else p=$here/h100_91793ad/probe_load_store.py; fi
  d=$(mktemp -d); line=$(CUDA_COOP_CACHE_DIR=$d PYTHONPATH=$src timeout 60 python3 $p 2>&1 | tail -1)
  echo "$tree $shape $r $line" >> "$out/probes-cu13.txt"
done; done; done
