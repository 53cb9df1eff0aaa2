package io.github.flinkstate.testing.fs;

import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;
import org.apache.flink.core.plugin.PluginManager;

/**
 * Registers the schemes of {@link InjectingFileSystem#install(String)} with Flink's {@link
 * FileSystem}: re-initializes it with a plugin manager that offers one factory per installed scheme
 * (the factories of the service loader, {@code inject://} among them, stay registered).
 *
 * <p>Thread safety: synchronized; Flink's {@code FileSystem.initialize} takes its own lock.
 */
final class SchemeRegistration {

    private SchemeRegistration() {}

    static synchronized void register(Collection<String> schemes) {
        List<String> copy = new ArrayList<>(schemes);
        copy.remove(InjectingFileSystem.SCHEME); // registered by the service loader already
        FileSystem.initialize(
                new Configuration(),
                new PluginManager() {
                    @Override
                    @SuppressWarnings("unchecked")
                    public <P> Iterator<P> load(Class<P> service) {
                        List<P> factories = new ArrayList<>();
                        if (service == FileSystemFactory.class) {
                            for (String s : copy) {
                                factories.add((P) new SchemeFactory(s));
                            }
                        }
                        return factories.iterator();
                    }
                });
    }

    /** Factory of one installed scheme. */
    private static final class SchemeFactory implements FileSystemFactory {
        private final String scheme;

        SchemeFactory(String scheme) {
            this.scheme = scheme;
        }

        @Override
        public String getScheme() {
            return scheme;
        }

        @Override
        public FileSystem create(URI fsUri) {
            return InjectingFileSystem.forScheme(scheme);
        }
    }
}
