#!/bin/bash
cd /tmp/rr
OPENS=$(cat /tmp/opens.txt)
for r in 1 2 3; do
  for j in cur bloom; do
    be=disaggregated; [ $j = bloom ] && be=disaggregated,rocksdb
    java -Xmx3g $OPENS -Dlog4j.configurationFile=log4j2-demo.properties -cp /tmp/bench-$j.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario --backends $be --budgets 100 --keys uniform,zipf --rounds 1 --seed $((50+r)) --json /tmp/rr/bloom-$j-r$r.json 2>&1 | grep "^round" | sed "s/^/$j r$r /"
  done
done
for r in 1 2; do
 for j in cur bloom; do
  java -jar /tmp/bench-$j.jar "EngineBenchmark.(getHit|getMiss)$" -p engine=LSM -f 1 -wi 3 -i 5 -w 1s -r 1s -rf json -rff /tmp/rr/eng-bloom-$j-$r.json 2>&1 | grep -E "^EngineBenchmark" | sed "s/^/$j r$r /"
 done
done
echo DONE
