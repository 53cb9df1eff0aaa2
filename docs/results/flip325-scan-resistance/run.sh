#!/bin/bash
# A/B of the LRU jar in the FLIP-325 scenario: new (working tree), old (HEAD worktree), new, old
set -e
run() { # tag
  cd /work/main && mvn -B -q -o -pl flink-state-benchmarks exec:exec@flip325 -Dscenario.args="--records 5000000 --repeats 3 --json /tmp/flip/$1.json" > /tmp/flip/$1.log 2>&1
}
inst() { # dir
  cd $1 && mvn -B -q -o -pl flink-state-lru-cache install -DskipTests > /tmp/flip/install.log 2>&1
}
inst /tmp/wt-old; run old-1
inst /work/main; run new-1
inst /tmp/wt-old; run old-2
inst /work/main; run new-2
echo DONE
