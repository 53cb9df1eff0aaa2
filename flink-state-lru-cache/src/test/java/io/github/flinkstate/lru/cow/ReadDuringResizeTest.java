package io.github.flinkstate.lru.cow;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A queryable-state read runs on another thread than the task's ({@link
 * CowLruMap#peekFromOtherThread}); a miss makes it answer from the delegate, which lacks the dirty
 * values of the cache. A resize relinks every entry into a new table, so a read during a resize
 * could miss a dirty entry that stayed cached all along and answer a stale value. Found in a
 * review; the read now notices a resize that overlapped it and looks again.
 */
@Timeout(120)
class ReadDuringResizeTest {

    private static final class NoWriteBack implements CacheOwner {
        @Override
        public void writeBack(CacheEntry entry) {}
    }

    @Test
    void aCachedEntry_isFoundByAnotherThreadWhileTheTableResizes() throws Exception {
        CacheOwner owner = new NoWriteBack();
        CowLruMap map = new CowLruMap(2_000_000);
        // a few watched entries, dirty and never evicted (the map never fills)
        int watched = 64;
        for (int i = 0; i < watched; i++) {
            map.insert(owner, "watched-" + i, "ns", null, 0, i, true);
        }
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong reads = new AtomicLong();
        AtomicLong misses = new AtomicLong();
        Thread reader =
                new Thread(
                        () -> {
                            int i = 0;
                            while (!done.get()) {
                                CacheEntry e =
                                        map.peekFromOtherThread(
                                                owner, "watched-" + (i % watched), "ns", null);
                                reads.incrementAndGet();
                                if (e == null) {
                                    misses.incrementAndGet();
                                }
                                i++;
                            }
                        },
                        "queryable-state-reader");
        reader.start();
        try {
            // inserts that double the table many times (to 2M buckets)
            for (int i = 0; i < 1_000_000; i++) {
                map.insert(owner, i, "ns", null, 0, i, false);
            }
        } finally {
            done.set(true);
            reader.join();
        }
        assertThat(reads.get()).isPositive();
        assertThat(misses.get())
                .as("reads of always-cached entries that missed, of %d", reads.get())
                .isZero();
        map.checkInvariants();
    }
}
