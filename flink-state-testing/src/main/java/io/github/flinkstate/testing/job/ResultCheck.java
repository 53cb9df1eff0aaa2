package io.github.flinkstate.testing.job;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The comparison of a run's final per-key summaries with the ones computed from the input alone.
 * Each kind of error is reported separately:
 *
 * <ul>
 *   <li><b>missing</b>: a key of the input without a final report (state or timer lost);
 *   <li><b>unexpected</b>: a reported key that is not in the input;
 *   <li><b>lost records</b> / <b>duplicated records</b>: the count is below / above the number of
 *       records of the key (an update lost, or applied twice after a restore);
 *   <li><b>wrong</b>: the count is right but another state (sum, max, list, map) differs;
 *   <li><b>duplicate keys</b>: a key finalized more than once with different summaries (identical
 *       re-reports after a replay are fine).
 * </ul>
 *
 * Immutable.
 */
public final class ResultCheck {

    private static final int SHOWN = 5;

    private final int expectedKeys;
    private final List<Long> missing = new ArrayList<>();
    private final List<Long> unexpected = new ArrayList<>();
    private final List<String> lost = new ArrayList<>();
    private final List<String> duplicated = new ArrayList<>();
    private final List<String> wrong = new ArrayList<>();
    private final List<Long> duplicateKeys = new ArrayList<>();

    private ResultCheck(Map<Long, KeySummary> expected, Map<Long, Set<KeySummary>> actual) {
        this.expectedKeys = expected.size();
        Map<Long, KeySummary> sortedExpected = new TreeMap<>(expected);
        for (Map.Entry<Long, KeySummary> e : sortedExpected.entrySet()) {
            Set<KeySummary> reports = actual.get(e.getKey());
            if (reports == null || reports.isEmpty()) {
                missing.add(e.getKey());
                continue;
            }
            if (reports.size() > 1) {
                duplicateKeys.add(e.getKey());
                continue;
            }
            KeySummary got = reports.iterator().next();
            KeySummary want = e.getValue();
            String detail = "key " + want.key() + ": " + got + ", expected " + want;
            if (got.count() < want.count()) {
                lost.add(detail);
            } else if (got.count() > want.count()) {
                duplicated.add(detail);
            } else if (!got.equals(want)) {
                wrong.add(detail);
            }
        }
        for (Long key : new TreeMap<>(actual).keySet()) {
            if (!expected.containsKey(key)) {
                unexpected.add(key);
            }
        }
    }

    /** Compares a run's final reports with {@link ExpectedResults#compute}. */
    public static ResultCheck compare(
            Map<Long, KeySummary> expected, Map<Long, Set<KeySummary>> actual) {
        return new ResultCheck(expected, actual);
    }

    /** Every key reported once, exactly as expected, and nothing else. */
    public boolean isExact() {
        return missing.isEmpty()
                && unexpected.isEmpty()
                && lost.isEmpty()
                && duplicated.isEmpty()
                && wrong.isEmpty()
                && duplicateKeys.isEmpty();
    }

    public List<Long> missingKeys() {
        return missing;
    }

    public List<Long> unexpectedKeys() {
        return unexpected;
    }

    public List<Long> duplicateKeys() {
        return duplicateKeys;
    }

    /** Keys whose count is too low, too high or whose other state differs. */
    public int wrongKeys() {
        return lost.size() + duplicated.size() + wrong.size();
    }

    /** Throws an {@link AssertionError} with {@link #toString()} unless {@link #isExact()}. */
    public void assertExact() {
        if (!isExact()) {
            throw new AssertionError(toString());
        }
    }

    /** A one-line verdict, e.g. for the demo's table: "yes" or "NO: 3 missing, 2 lost". */
    public String verdict() {
        if (isExact()) {
            return "yes";
        }
        List<String> parts = new ArrayList<>();
        add(parts, missing.size(), "missing");
        add(parts, unexpected.size(), "unexpected");
        add(parts, lost.size(), "with lost records");
        add(parts, duplicated.size(), "with duplicated records");
        add(parts, wrong.size(), "with wrong state");
        add(parts, duplicateKeys.size(), "finalized twice");
        return "NO: " + String.join(", ", parts) + " (of " + expectedKeys + " keys)";
    }

    private static void add(List<String> parts, int n, String what) {
        if (n > 0) {
            parts.add(n + " " + what);
        }
    }

    @Override
    public String toString() {
        if (isExact()) {
            return "exact: all " + expectedKeys + " keys reported once with the expected state";
        }
        StringBuilder sb = new StringBuilder(verdict());
        section(sb, "missing keys", missing);
        section(sb, "unexpected keys", unexpected);
        section(sb, "lost records", lost);
        section(sb, "duplicated records", duplicated);
        section(sb, "wrong state", wrong);
        section(sb, "keys finalized with different states", duplicateKeys);
        return sb.toString();
    }

    private static void section(StringBuilder sb, String title, List<?> items) {
        if (items.isEmpty()) {
            return;
        }
        sb.append("\n  ").append(title).append(" (").append(items.size()).append("): ");
        sb.append(items.subList(0, Math.min(SHOWN, items.size())));
        if (items.size() > SHOWN) {
            sb.append(" ...");
        }
    }
}
