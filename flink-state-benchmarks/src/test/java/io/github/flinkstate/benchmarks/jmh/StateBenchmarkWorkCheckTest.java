package io.github.flinkstate.benchmarks.jmh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Runs every state benchmark method a few hundred times per backend on a small key space, outside
 * JMH, and applies the per-iteration work check (the changelog variants included); also shows that
 * the check rejects missing work and that the changelog variants really are Flink's changelog
 * backend over RocksDB. No timing is measured or asserted.
 */
class StateBenchmarkWorkCheckTest {

    private static final int KEYS = 2_000;
    private static final int CALLS = 300;
    private static final Blackhole BH =
            new Blackhole(
                    "Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");

    private interface Call {
        void run() throws Exception;
    }

    private static void repeat(Call call) throws Exception {
        for (int i = 0; i < CALLS; i++) {
            call.run();
        }
    }

    @ParameterizedTest
    @EnumSource(BenchmarkBackend.class)
    void valueBenchmarksPassTheirWorkCheck(BenchmarkBackend backend) throws Exception {
        ValueStateBenchmark b = new ValueStateBenchmark();
        b.backend = backend;
        b.setupKeyCount = KEYS;
        b.setUp();
        try {
            b.startIteration();
            repeat(b::valueGet);
            b.verify("valueGet");
            b.startIteration();
            repeat(b::valueAdd);
            b.verify("valueAdd");
            b.startIteration();
            repeat(b::valueUpdate);
            b.verify("valueUpdate");
        } finally {
            b.tearDown();
        }
    }

    @ParameterizedTest
    @EnumSource(BenchmarkBackend.class)
    void listBenchmarksPassTheirWorkCheck(BenchmarkBackend backend) throws Exception {
        ListStateBenchmark b = new ListStateBenchmark();
        b.backend = backend;
        b.setupKeyCount = KEYS;
        b.setUp();
        try {
            b.startIteration();
            repeat(b::listGet);
            b.verify("listGet");
            b.startIteration();
            repeat(() -> b.listGetAndIterate(BH));
            b.verify("listGetAndIterate");
            b.startIteration();
            repeat(b::listAppend);
            b.verify("listAppend");
            b.startIteration();
            repeat(b::listUpdate);
            b.verify("listUpdate");
            b.startIteration();
            repeat(b::listAdd);
            b.verify("listAdd");
            b.startIteration();
            repeat(b::listAddAll);
            b.verify("listAddAll");
        } finally {
            b.tearDown();
        }
    }

    @ParameterizedTest
    @EnumSource(BenchmarkBackend.class)
    void mapBenchmarksPassTheirWorkCheck(BenchmarkBackend backend) throws Exception {
        String[] reads = {
            "mapGet",
            "mapContains",
            "mapIsEmpty",
            "mapKeys",
            "mapValues",
            "mapEntries",
            "mapIterator"
        };
        String[] writes = {"mapAdd", "mapUpdate", "mapPutAll", "mapRemove"};
        MapStateBenchmark b = new MapStateBenchmark();
        b.backend = backend;
        b.setupKeyCount = KEYS;
        b.setUp();
        try {
            for (String method : reads) {
                b.startIteration();
                repeat(() -> callMap(b, method));
                b.verify(method);
            }
            for (String method : writes) {
                b.startIteration();
                repeat(() -> callMap(b, method));
                b.verify(method);
            }
        } finally {
            b.tearDown();
        }
    }

    private static void callMap(MapStateBenchmark b, String method) throws Exception {
        switch (method) {
            case "mapGet" -> b.mapGet();
            case "mapContains" -> b.mapContains();
            case "mapIsEmpty" -> b.mapIsEmpty();
            case "mapKeys" -> b.mapKeys(BH);
            case "mapValues" -> b.mapValues(BH);
            case "mapEntries" -> b.mapEntries(BH);
            case "mapIterator" -> b.mapIterator(BH);
            case "mapUpdate" -> b.mapUpdate();
            case "mapAdd" -> b.mapAdd();
            case "mapPutAll" -> b.mapPutAll();
            case "mapRemove" -> b.mapRemove();
            default -> throw new IllegalArgumentException(method);
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = BenchmarkBackend.class,
            names = {"CHANGELOG_FS", "CHANGELOG_DFS_BATCHED"})
    void changelogVariantsAreFlinksChangelogBackendOverRocksDb(BenchmarkBackend backend)
            throws Exception {
        assertThat(backend.isChangelog()).isTrue();
        try (KeyedBackendFixture fixture = KeyedBackendFixture.open(backend, KEYS)) {
            assertThat(fixture.backend().getClass().getName())
                    .isEqualTo("org.apache.flink.state.changelog.ChangelogKeyedStateBackend");
        }
        assertThat(BenchmarkBackend.ROCKSDB.isChangelog()).isFalse();
    }

    @Test
    void disaggregatedVariantsAreOurBackendAndForSt() throws Exception {
        try (KeyedBackendFixture fixture =
                KeyedBackendFixture.open(BenchmarkBackend.DISAGGREGATED, KEYS)) {
            assertThat(fixture.backend().getClass().getName())
                    .isEqualTo(
                            "io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend");
        }
        try (KeyedBackendFixture fixture = KeyedBackendFixture.open(BenchmarkBackend.FORST, KEYS)) {
            assertThat(fixture.backend().getClass().getName())
                    .isEqualTo("org.apache.flink.state.forst.sync.ForStSyncKeyedStateBackend");
        }
    }

    @Test
    void workCheckRejectsAnIterationWithoutWorkOrWithLostReads() throws Exception {
        ValueStateBenchmark b = new ValueStateBenchmark();
        b.backend = BenchmarkBackend.HASHMAP;
        b.setupKeyCount = KEYS;
        b.setUp();
        try {
            b.startIteration();
            assertThatThrownBy(() -> b.verify("valueGet")).hasMessageContaining("no operation ran");
            repeat(b::valueGet);
            b.misses = 1;
            assertThatThrownBy(() -> b.verify("valueGet")).hasMessageContaining("found no value");
            b.startIteration();
            repeat(b::valueUpdate);
            b.lastValue = -1L;
            assertThatThrownBy(() -> b.verify("valueUpdate")).hasMessageContaining("last written");
        } finally {
            b.tearDown();
        }
    }
}
