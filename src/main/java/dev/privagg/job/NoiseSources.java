package dev.privagg.job;

import dev.privagg.privacy.NoiseSource;
import dev.privagg.spec.JobSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** The noise source a spec asks for; keyed sources read their secret here, never from the spec. */
final class NoiseSources {
  private NoiseSources() {}

  static NoiseSource forSpec(JobSpec spec) {
    JobSpec.Noise noise = spec.privacy().noise();
    return switch (noise.source()) {
      case "seeded" -> NoiseSource.seeded(noise.seed());
      case "keyed" -> NoiseSource.keyed(secret(spec.jobId(), noise));
      default -> NoiseSource.secure();
    };
  }

  private static byte[] secret(String jobId, JobSpec.Noise noise) {
    if (noise.keyEnv() != null) {
      String value = System.getenv(noise.keyEnv());
      if (value == null || value.isEmpty()) {
        throw new IllegalStateException(
            "job "
                + jobId
                + ": environment variable "
                + noise.keyEnv()
                + " (privacy.noise.keyEnv) is not set");
      }
      return value.getBytes(StandardCharsets.UTF_8);
    }
    try {
      return Files.readAllBytes(Path.of(noise.keyFile()));
    } catch (IOException e) {
      throw new IllegalStateException(
          "job "
              + jobId
              + ": cannot read privacy.noise.keyFile "
              + noise.keyFile()
              + ": "
              + e.getMessage(),
          e);
    }
  }
}
