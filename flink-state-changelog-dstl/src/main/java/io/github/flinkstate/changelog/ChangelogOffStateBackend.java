package io.github.flinkstate.changelog;

import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.AsyncKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.OperatorStateBackend;
import org.apache.flink.runtime.state.StateBackend;

/**
 * The delegate backend of {@link ChangelogStateBackendFactory}, returned instead of Flink's
 * changelog backend for a run that resumes in NO_CLAIM mode: it behaves exactly like the delegate
 * and only reports, on every keyed backend's metric group, that changelog is off for this run and
 * why.
 *
 * <p>Why it works: Flink's changelog backend cannot take the full checkpoint NO_CLAIM asks for
 * ({@code supportsNoClaimRestoreMode() == false}). The delegate can. On restore from changelog
 * handles, Flink sees a backend that is not its {@code ChangelogStateBackend} and wraps it in its
 * {@code DeactivatedChangelogStateBackend}, which replays the materialized state and the logged
 * changes (read from our DSTL by the storage identifier in the handles) into the delegate; from
 * then on the delegate takes every checkpoint, starting with the full one. The next resume in CLAIM
 * mode turns changelog on again.
 *
 * <p>It deliberately does not implement {@code DelegatingStateBackend}: Flink's deactivated
 * changelog backend refuses to wrap a delegating backend.
 *
 * <p>Metrics (operator scope): {@code changelogEnabled} (always 0) and {@code
 * changelogDisabledReason} (a sentence).
 *
 * <p>Thread safety: immutable.
 */
public final class ChangelogOffStateBackend implements StateBackend {

    private static final long serialVersionUID = 1L;

    /** Gauge names; documented in docs/changelog-dstl.md. */
    public static final String ENABLED_GAUGE = "changelogEnabled";

    public static final String REASON_GAUGE = "changelogDisabledReason";

    private final StateBackend delegate;
    private final String reason;

    ChangelogOffStateBackend(StateBackend delegate, String reason) {
        this.delegate = delegate;
        this.reason = reason;
    }

    public StateBackend getDelegate() {
        return delegate;
    }

    /** Why changelog is off for this run. */
    public String reason() {
        return reason;
    }

    @Override
    public String getName() {
        return delegate.getName();
    }

    @Override
    public <K> CheckpointableKeyedStateBackend<K> createKeyedStateBackend(
            KeyedStateBackendParameters<K> parameters) throws Exception {
        report(parameters.getMetricGroup());
        return delegate.createKeyedStateBackend(parameters);
    }

    @Override
    public <K> AsyncKeyedStateBackend<K> createAsyncKeyedStateBackend(
            KeyedStateBackendParameters<K> parameters) throws Exception {
        report(parameters.getMetricGroup());
        return delegate.createAsyncKeyedStateBackend(parameters);
    }

    /**
     * False whatever the delegate says: restoring changelog handles, Flink wraps this backend in
     * its {@code DeactivatedChangelogStateBackend}, which cannot create an asynchronous keyed
     * backend; operators of the asynchronous state API then get Flink's synchronous adaptor, as
     * they do with changelog on.
     */
    @Override
    public boolean supportsAsyncKeyedStateBackend() {
        return false;
    }

    @Override
    public OperatorStateBackend createOperatorStateBackend(
            OperatorStateBackendParameters parameters) throws Exception {
        return delegate.createOperatorStateBackend(parameters);
    }

    @Override
    public boolean useManagedMemory() {
        return delegate.useManagedMemory();
    }

    @Override
    public boolean supportsNoClaimRestoreMode() {
        return delegate.supportsNoClaimRestoreMode();
    }

    @Override
    public boolean supportsSavepointFormat(SavepointFormatType formatType) {
        return delegate.supportsSavepointFormat(formatType);
    }

    private void report(MetricGroup group) {
        if (group != null) {
            group.gauge(ENABLED_GAUGE, (Gauge<Integer>) () -> 0);
            group.gauge(REASON_GAUGE, (Gauge<String>) () -> reason);
        }
    }

    @Override
    public String toString() {
        return "ChangelogOffStateBackend{" + delegate + ", " + reason + "}";
    }
}
