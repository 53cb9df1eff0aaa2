package io.github.flinkstate.cluster.job;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Collects result lines and writes them, at the end of the input, to one new file per subtask
 * attempt under a directory on any Flink file system (written to a hidden name, then renamed, so a
 * reader never sees half a file). The job's results are produced only at the end of the input, so a
 * file is written once per finished run; a checker must still accept identical duplicates from an
 * attempt that wrote its file and failed afterwards.
 */
final class ResultFileSink implements Sink<String> {

    private final String directory;

    ResultFileSink(String directory) {
        this.directory = directory;
    }

    @Override
    public SinkWriter<String> createWriter(WriterInitContext context) {
        String name =
                "part-"
                        + context.getTaskInfo().getIndexOfThisSubtask()
                        + "-"
                        + context.getTaskInfo().getAttemptNumber()
                        + "-"
                        + UUID.randomUUID();
        return new Writer(new Path(directory), name);
    }

    private static final class Writer implements SinkWriter<String> {
        private final Path directory;
        private final String name;
        private final List<String> lines = new ArrayList<>();

        Writer(Path directory, String name) {
            this.directory = directory;
            this.name = name;
        }

        @Override
        public void write(String line, Context context) {
            lines.add(line);
        }

        @Override
        public void flush(boolean endOfInput) throws IOException {
            if (!endOfInput || lines.isEmpty()) {
                return;
            }
            FileSystem fs = directory.getFileSystem();
            Path hidden = new Path(directory, "." + name);
            try (OutputStream out = fs.create(hidden, FileSystem.WriteMode.NO_OVERWRITE)) {
                out.write((String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
            }
            if (!fs.rename(hidden, new Path(directory, name))) {
                throw new IOException("could not rename " + hidden + " to " + name);
            }
            lines.clear();
        }

        @Override
        public void close() {}
    }
}
