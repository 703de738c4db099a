package dev.privagg.job.decide;

import dev.privagg.job.combine.NoiseStreams;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.spec.JobSpec;

/** Amplified banded MF's client groups: one keyed uniform draw per client, cut into b groups. */
public final class ClientGroups {
  private ClientGroups() {}

  /** The group in [0, bands) of the client with key {@code clientKey}. */
  public static int groupOf(NoiseSource noiseSource, JobSpec spec, String clientKey, int bands) {
    double u = noiseSource.forRound(NoiseStreams.group(spec, clientKey), 0).nextUniform();
    return Math.min(bands - 1, (int) (u * bands));
  }
}
