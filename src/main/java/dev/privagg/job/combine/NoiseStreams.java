package dev.privagg.job.combine;

import dev.privagg.spec.JobSpec;

/**
 * The names of a job's noise streams: one per purpose and round, never one stream shared by several
 * draws. With a shared stream the sum's noise would follow the counts' draws by position, and a
 * restore under a spec with another set of counts (a minimum cohort dropped, say) would put a
 * count's normal, already public through the release decision or the next C, on the sum.
 *
 * <p>Each name starts with its purpose and a colon, which neither a topic name nor a job id can
 * hold, then the models topic and the job id: a keyed source gives the same noise to a replay of a
 * round (same members from the same log), other noise to the same job id published elsewhere, and
 * no two purposes can name one stream.
 */
public final class NoiseStreams {
  private NoiseStreams() {}

  /** The sum's Gaussian noise, drawn by the combiner. */
  public static String sum(JobSpec spec) {
    return named("sum", spec);
  }

  /**
   * Correlated noise's fresh Z of one coordinate block, drawn by that block: its own stream per
   * (job, round, block), so blocks draw in parallel and a replayed round draws the same values.
   */
  public static String correlatedBlock(JobSpec spec, int block, int blocks) {
    return named("correlated-block", spec) + "/" + block + "-of-" + blocks;
  }

  /** The minimum-cohort rule's noisy count, drawn by the decider. */
  public static String minimumCohort(JobSpec spec) {
    return named("minimum-cohort", spec);
  }

  /** Adaptive clipping's noisy count of unclipped members, drawn by the decider. */
  public static String unclippedCount(JobSpec spec) {
    return named("unclipped-count", spec);
  }

  /** Server-side Poisson sampling's draw for one client, drawn by the decider. */
  public static String sampling(JobSpec spec, String clientId) {
    return named("sampling", spec) + "/" + clientId;
  }

  /**
   * The one draw that puts a client in its amplified-banded-MF group: keyed, it is secret, fixed
   * for the deployment and the same in every replay.
   */
  public static String group(JobSpec spec, String clientKey) {
    return named("group", spec) + "/" + clientKey;
  }

  /**
   * A keyed fingerprint of the groups' key for the job's state: a restore under another noise key,
   * deployment, models topic or job id would draw other groups, and must be refused.
   */
  public static String groupFingerprint(JobSpec spec) {
    return named("group-fingerprint", spec);
  }

  private static String named(String purpose, JobSpec spec) {
    return purpose + ":" + spec.topics().models() + "/" + spec.jobId();
  }
}
