package io.github.flinkstate.changelog.upload;

import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import javax.annotation.concurrent.NotThreadSafe;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The persist requests of the writers of one job on one TaskManager, by checkpoint round: decides
 * when every writer the {@link BatchingUploadScheduler} waits for has asked for the current
 * checkpoint, so that the checkpoint's batch can be cut.
 *
 * <p>Leaked writers: a writer that skipped the last {@link #MISSED_ROUNDS_LIMIT} checkpoints that
 * other writers asked for is no longer waited for. Flink can leave a writer open that no task uses:
 * its changelog backend creates the writer before it replays the restored log, and a restore that
 * fails then (a missing or stalled file, a cancellation during the restore) never disposes that
 * backend. Waiting for such a writer delayed every later checkpoint of the job on this TaskManager
 * by {@code batch.checkpoint-max-wait}. Every live writer asks at every checkpoint its task takes,
 * so a writer presumed leaked by mistake (its task missed three checkpoints in a row, say all
 * expired while it was back-pressured) costs at most a file of its own: its request, once it comes,
 * goes out at once, and it is waited for again from then on. A leak costs the max wait at three
 * checkpoints, then nothing.
 *
 * <p>A request for the current checkpoint after its batch was cut goes out at once: nobody is left
 * to wait for. A request for an older checkpoint joins the current round's batch.
 *
 * <p>Thread safety: none; the scheduler calls it under its own lock.
 */
@NotThreadSafe
final class CheckpointRequests {

    private static final Logger LOG = LoggerFactory.getLogger(CheckpointRequests.class);

    /** Checkpoint rounds a writer may skip in a row and still be waited for. */
    static final int MISSED_ROUNDS_LIMIT = 3;

    /** The checkpoint of the current round. */
    private long round = Long.MIN_VALUE;

    /** Writers that asked in the current round. */
    private final Set<Object> asked = Collections.newSetFromMap(new IdentityHashMap<>());

    /** The current round's batch was cut. */
    private boolean cut;

    /** Open writers that skipped the latest rounds in a row, with how many. */
    private final Map<Object, Integer> missed = new IdentityHashMap<>();

    /**
     * Records {@code writer}'s request for {@code checkpointId}; returns true when the batch must
     * be cut now: every writer of {@code openWriters} that is waited for has asked.
     */
    boolean ask(Object writer, long checkpointId, Collection<?> openWriters) {
        if (checkpointId < round) {
            missed.remove(writer); // it is alive
            return cut; // joins the current round's batch
        }
        if (checkpointId > round) {
            startRound(checkpointId, openWriters);
        }
        asked.add(writer);
        missed.remove(writer);
        if (cut) {
            return true;
        }
        for (Object w : openWriters) {
            if (!asked.contains(w) && missed.getOrDefault(w, 0) < MISSED_ROUNDS_LIMIT) {
                return false;
            }
        }
        cut = true;
        return true;
    }

    /** Open writers no longer waited for (for tests). */
    int presumedLeaked(Collection<?> openWriters) {
        int n = 0;
        for (Object w : openWriters) {
            if (missed.getOrDefault(w, 0) >= MISSED_ROUNDS_LIMIT) {
                n++;
            }
        }
        return n;
    }

    private void startRound(long checkpointId, Collection<?> openWriters) {
        if (round != Long.MIN_VALUE) {
            Map<Object, Integer> next = new IdentityHashMap<>();
            int newlyPresumed = 0;
            for (Object w : openWriters) {
                if (!asked.contains(w)) {
                    int n = missed.getOrDefault(w, 0) + 1;
                    next.put(w, n);
                    if (n == MISSED_ROUNDS_LIMIT) {
                        newlyPresumed++;
                    }
                }
            }
            missed.clear(); // closed writers drop out
            missed.putAll(next);
            if (newlyPresumed > 0) {
                LOG.info(
                        "{} open DSTL writer(s) asked for none of the last {} checkpoints (up to"
                                + " {}); checkpoint batches no longer wait for them (a task whose"
                                + " restore failed leaves its writer open)",
                        newlyPresumed,
                        MISSED_ROUNDS_LIMIT,
                        round);
            }
        }
        round = checkpointId;
        asked.clear();
        cut = false;
    }
}
