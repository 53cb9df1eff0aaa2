#!/bin/bash
cd /tmp/rr
OPENS=$(cat /tmp/opens.txt)
run() { # jar tag backends round
  java -Xmx3g $OPENS -Dlog4j.configurationFile=log4j2-demo.properties -cp $1 io.github.flinkstate.benchmarks.scenario.RemoteReadScenario --backends $3 --budgets 10,100 --keys uniform,zipf --rounds 1 --json /tmp/rr/$2-r$4.json --seed $((41+$4)) 2>&1 | grep "^round" | sed "s/^/$2 r$4 /"
}
for r in 1 2 3; do
  run /tmp/bench-base.jar base disaggregated $r
  run /tmp/bench-v5.jar v5 disaggregated,forst,rocksdb $r
done
echo DONE
