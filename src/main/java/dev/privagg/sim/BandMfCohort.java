package dev.privagg.sim;

import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.combine.NoiseStreams;
import dev.privagg.job.decide.ClientGroups;
import dev.privagg.job.decode.ClientKeys;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.spec.JobSpec;
import java.util.stream.IntStream;

/**
 * Who trains in a simulated amplified-banded-MF round: the clients the job will take, those of the
 * round's group whose sampling draw passes, found with the job's own seeded draws. Every client
 * sending would give the same rounds (the job turns the others away or leaves them unsampled); this
 * only spares the simulation their training.
 */
final class BandMfCohort {
  private final JobSpec spec;
  private final NoiseSource jobNoise;
  private final String[] keys;
  private final int[] groups;

  BandMfCohort(JobSpec spec, int clients) {
    JobSpec.Correlated c = spec.privacy().correlated();
    if (!spec.privacy().noise().source().equals("seeded")) {
      throw new IllegalArgumentException("a simulated bandmf run draws with seeded noise");
    }
    this.spec = spec;
    this.jobNoise = NoiseSources.forSpec(spec);
    ClientKeys clientKeys = new ClientKeys();
    this.keys = new String[clients];
    this.groups = new int[clients];
    int bands = c == null ? 1 : c.minSeparation();
    for (int i = 0; i < clients; i++) {
      keys[i] = clientKeys.of(clientId(i));
      groups[i] = ClientGroups.groupOf(jobNoise, spec, keys[i], bands);
    }
  }

  static String clientId(int client) {
    return "client-" + client;
  }

  /** The clients the job admits in {@code round}, in index order. */
  int[] cohort(long round) {
    JobSpec.Correlated c = spec.privacy().correlated();
    int bands = c == null ? 1 : c.minSeparation();
    int roundsGroup = (int) Math.floorMod(round - 1, (long) bands);
    double rate = spec.privacy().sampling().rate();
    return IntStream.range(0, keys.length)
        .filter(i -> groups[i] == roundsGroup)
        .filter(
            i ->
                jobNoise.forRound(NoiseStreams.sampling(spec, clientId(i)), round).nextUniform()
                    < rate)
        .toArray();
  }
}
