#!/bin/bash
# A/B: our backend at a 100% local cache budget, whole-file copies memory-mapped (on) or read with
# system calls (off), and all-local RocksDB, same jar, alternating invocations, 5 rounds.
cd /tmp/rr
OPENS=$(cat /tmp/opens.txt)
for r in 1 2 3 4 5; do
  for j in off on; do
    be=disaggregated; [ $j = on ] && be=disaggregated,rocksdb
    java -Xmx3g $OPENS -Dlog4j.configurationFile=log4j2-demo.properties -cp /tmp/bench-map.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario --backends $be --budgets 100 --keys uniform,zipf --rounds 1 --seed $((60+r)) --local-cache-mmap $([ $j = on ] && echo true || echo false) --json /tmp/rr/mm/mmap-$j-r$r.json 2>&1 | grep "^round" | sed "s/^/$j r$r /"
  done
done
echo DONE
