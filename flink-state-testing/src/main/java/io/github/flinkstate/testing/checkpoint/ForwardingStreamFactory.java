package io.github.flinkstate.testing.checkpoint;

import java.io.IOException;
import java.util.Collection;
import java.util.List;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.StreamStateHandle;

/**
 * A checkpoint stream factory that forwards every call to another one and lets a test replace the
 * streams it hands out ({@link #wrap}): the base of the tests' slow, blocking and failing
 * checkpoint locations. Fast duplication is forwarded too, so a wrapped location behaves like the
 * one it wraps apart from its streams.
 *
 * <p>Thread safety: as the wrapped factory and the subclass's {@link #wrap}.
 */
public abstract class ForwardingStreamFactory implements CheckpointStreamFactory {

    private final CheckpointStreamFactory delegate;

    protected ForwardingStreamFactory(CheckpointStreamFactory delegate) {
        this.delegate = delegate;
    }

    /** The stream to hand out in place of {@code stream}, a new stream of the wrapped factory. */
    protected abstract CheckpointStateOutputStream wrap(
            CheckpointStateOutputStream stream, CheckpointedStateScope scope) throws IOException;

    @Override
    public final CheckpointStateOutputStream createCheckpointStateOutputStream(
            CheckpointedStateScope scope) throws IOException {
        return wrap(delegate.createCheckpointStateOutputStream(scope), scope);
    }

    @Override
    public boolean canFastDuplicate(StreamStateHandle handle, CheckpointedStateScope scope)
            throws IOException {
        return delegate.canFastDuplicate(handle, scope);
    }

    @Override
    public List<StreamStateHandle> duplicate(
            List<StreamStateHandle> handles, CheckpointedStateScope scope) throws IOException {
        return delegate.duplicate(handles, scope);
    }

    @Override
    public void reusePreviousStateHandle(Collection<? extends StreamStateHandle> previous) {
        delegate.reusePreviousStateHandle(previous);
    }

    @Override
    public boolean couldReuseStateHandle(StreamStateHandle handle) {
        return delegate.couldReuseStateHandle(handle);
    }
}
