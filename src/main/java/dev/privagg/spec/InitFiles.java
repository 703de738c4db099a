package dev.privagg.spec;

import dev.privagg.io.ModelFile;
import dev.privagg.io.Safetensors;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Map;

/**
 * Where a spec's {@code model.initFile} is read from: the file system, relative to the spec's
 * directory, or the values a submitting machine sent with the spec (a job's {@code main()} on a
 * cluster, where the file does not exist).
 */
@FunctionalInterface
public interface InitFiles {
  /**
   * The model file {@code initFile} of job {@code jobId}, with at most {@code maxValues} values.
   *
   * @throws java.nio.file.NoSuchFileException when there is no such file
   */
  ModelFile read(String jobId, String initFile, long maxValues) throws IOException;

  /** Where the file is on disk, for messages; null when it was not read from disk. */
  default Path location(String initFile) {
    return null;
  }

  /** Files relative to {@code dir} (absolute paths as they are). */
  static InitFiles relativeTo(Path dir) {
    return new InitFiles() {
      @Override
      public ModelFile read(String jobId, String initFile, long maxValues) throws IOException {
        return ModelFile.read(location(initFile), maxValues);
      }

      @Override
      public Path location(String initFile) {
        return dir.resolve(initFile).toAbsolutePath().normalize();
      }
    };
  }

  /**
   * The safetensors bytes sent for each job id ({@code privagg submit} sends them), else {@code
   * otherwise}.
   */
  static InitFiles sent(Map<String, byte[]> safetensorsByJobId, InitFiles otherwise) {
    return new InitFiles() {
      @Override
      public ModelFile read(String jobId, String initFile, long maxValues) throws IOException {
        byte[] sent = safetensorsByJobId.get(jobId);
        if (sent == null) {
          return otherwise.read(jobId, initFile, maxValues);
        }
        return Safetensors.read(
            initFile + " (as sent for job " + jobId + ")", ByteBuffer.wrap(sent), maxValues);
      }

      @Override
      public Path location(String initFile) {
        return otherwise.location(initFile);
      }
    };
  }
}
