package io.github.flinkstate.composition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.changelog.ChangelogStateBackendFactory;
import io.github.flinkstate.changelog.DfsBatchedChangelogStorage;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import io.github.flinkstate.lru.LruCacheOptions;
import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import java.io.File;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.changelog.StateChangelogStorage;
import org.apache.flink.runtime.state.delegate.DelegatingStateBackend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The configurations the composition suites use load the stacks they are meant to test (and not,
 * say, a default backend in place of a misspelt delegate).
 */
class CompositionLoadingTest {

    @TempDir File dir;

    @Test
    void changelogConfiguration_loadsFlinksChangelogBackend_overDisaggregated_onOurDstl()
            throws Exception {
        StateBackend backend =
                ComposedBackends.load(ComposedBackends.changelogOverDisaggregated(dir));
        assertThat(backend.getClass().getName())
                .isEqualTo("org.apache.flink.state.changelog.ChangelogStateBackend");
        assertThat(((DelegatingStateBackend) backend).getDelegatedStateBackend())
                .isInstanceOf(DisaggregatedStateBackend.class);
        StateChangelogStorage<?> storage =
                ComposedBackends.changelogStorage(ComposedBackends.changelogOverDisaggregated(dir));
        try {
            assertThat(storage).isInstanceOf(DfsBatchedChangelogStorage.class);
        } finally {
            storage.close();
        }
    }

    @Test
    void changelogOverLruConfiguration_stacksAllThree() throws Exception {
        StateBackend backend =
                ComposedBackends.load(
                        ComposedBackends.changelogOverLruCacheOverDisaggregated(dir, 1));
        StateBackend cache = ((DelegatingStateBackend) backend).getDelegatedStateBackend();
        assertThat(cache).isInstanceOf(StateBackendWrapperWithLRUCache.class);
        assertThat(((StateBackendWrapperWithLRUCache) cache).getDelegate())
                .isInstanceOf(DisaggregatedStateBackend.class);
    }

    /**
     * The changelog factory's delegate is the cache and the cache's delegate is the changelog
     * factory: refused naming the cache's option (it used to load the two in turn until the stack
     * overflowed, with a trace that named no option).
     */
    @Test
    void aLoopOfChangelogAndCache_isRefusedNamingTheOption() {
        Configuration config = ComposedBackends.changelogOverLruCacheOverDisaggregated(dir, 1);
        config.set(LruCacheOptions.DELEGATE, ChangelogStateBackendFactory.class.getName());
        assertThatThrownBy(() -> ComposedBackends.load(config))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasStackTraceContaining(LruCacheOptions.DELEGATE.key())
                .hasStackTraceContaining("loop");
    }

    @Test
    void lruConfiguration_loadsTheCache_overDisaggregated() throws Exception {
        StateBackend backend =
                ComposedBackends.load(ComposedBackends.lruCacheOverDisaggregated(dir, 1));
        assertThat(backend).isInstanceOf(StateBackendWrapperWithLRUCache.class);
        StateBackendWrapperWithLRUCache cache = (StateBackendWrapperWithLRUCache) backend;
        assertThat(cache.getDelegate()).isInstanceOf(DisaggregatedStateBackend.class);
        assertThat(cache.getMaxEntries()).isEqualTo(1);
    }
}
