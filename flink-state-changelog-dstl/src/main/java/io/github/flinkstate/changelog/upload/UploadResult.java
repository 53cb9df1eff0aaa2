package io.github.flinkstate.changelog.upload;

import javax.annotation.Nullable;
import org.apache.flink.runtime.state.StreamStateHandle;

/**
 * Where one uploaded change set lives: its file and the offset and size of its segment, plus the
 * local-recovery copy of the file (same offsets) when local recovery is enabled, and the record of
 * which checkpoints named the file (shared by every change set in it).
 *
 * <p>Thread safety: immutable (the shared {@link FileNaming} is thread-safe).
 */
public record UploadResult(
        long sequenceNumber,
        StreamStateHandle file,
        long offset,
        long size,
        @Nullable StreamStateHandle localFile,
        FileNaming naming) {}
