package io.github.flinkstate.benchmarks.jmh;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Every engine benchmark method on both engines with 10,000 keys, then its work check; no timing.
 */
class EngineBenchmarkWorkCheckTest {

    private static final Blackhole BH =
            new Blackhole(
                    "Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");

    @ParameterizedTest
    @EnumSource(KvEngine.Kind.class)
    void everyOperationPassesItsWorkCheck(KvEngine.Kind kind) throws Exception {
        EngineBenchmark b = new EngineBenchmark();
        b.engine = kind;
        b.keyCount = 10_000;
        b.valueBytes = 100;
        b.setUp();
        try {
            for (String method : new String[] {"getHit", "getMiss", "prefixScan", "put", "mixed"}) {
                b.startIteration();
                for (int i = 0; i < 2_000; i++) {
                    switch (method) {
                        case "getHit" -> b.getHit();
                        case "getMiss" -> b.getMiss();
                        case "prefixScan" -> b.prefixScan(BH);
                        case "put" -> b.put();
                        default -> b.mixed();
                    }
                }
                b.verify(method);
            }
        } finally {
            b.tearDown();
        }
    }
}
