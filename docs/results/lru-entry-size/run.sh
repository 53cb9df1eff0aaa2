#!/bin/bash
# LRU_100 valueUpdate against HashMap (issue 12): the 72-byte entries (bench-before.jar, built at 422f18e)
# against the 56-byte entries (bench-after.jar, built at 93aaefd), HASHMAP and LRU_100 in every invocation.
# Build each jar with `mvn -B package -DskipTests` at its commit (flink-state-benchmarks/target/benchmarks.jar)
# and run this script in the folder that holds both; then `python3 summary.py .`.
# Note: -jvmArgsAppend on the command line replaces the benchmark's own @Fork arguments (heap, add-opens),
# so the huge-pages runs pass them again.
set -e
run() { # jar tag extra-args...
  local jar=$1 tag=$2; shift 2
  java -jar bench-$jar.jar "ValueStateBenchmark.valueUpdate$" -p backend=HASHMAP,LRU_100 "$@" -rf json -rff $tag.json
}
W="-wi 3 -i 5 -w 1s -r 1s"
OPENS="--add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.math=ALL-UNNAMED"
run before plain-4forks-before -p setupKeyCount=100000 -f 4 $W
run before keys-25000-before -p setupKeyCount=25000 -f 4 $W
for r in 1 2 3; do for j in before after; do run $j ab-$j-$r -p setupKeyCount=100000 -f 2 $W; done; done
for r in 1 2; do for j in before after; do run $j gc-$j-$r -p setupKeyCount=100000 -f 2 $W -gc true; done; done
for n in 50000 200000; do for j in before after; do run $j keys-$n-$j -p setupKeyCount=$n -f 3 $W; done; done
for r in 1 2; do for j in before after; do
  run $j thp-$j-$r -p setupKeyCount=100000 -f 3 $W -jvmArgsAppend "-Xmx4g $OPENS -XX:+UseTransparentHugePages"
done; done
