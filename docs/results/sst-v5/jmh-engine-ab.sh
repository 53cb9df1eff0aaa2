#!/bin/bash
cd /tmp/rr
for r in 1 2; do
 for j in base v5b; do
  java -jar /tmp/bench-$j.jar "EngineBenchmark.(getHit|getMiss|prefixScan)$" -p engine=LSM -f 1 -wi 3 -i 5 -w 1s -r 1s -rf json -rff /tmp/rr/eng-$j-$r.json 2>&1 | grep -E "^EngineBenchmark" | sed "s/^/$j r$r /"
 done
done
echo DONE
