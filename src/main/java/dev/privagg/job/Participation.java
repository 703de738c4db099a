package dev.privagg.job;

/**
 * One client's contributions to a job with correlated noise, kept by the decider under the client's
 * key (its id digest) so that the participation schema holds by construction: at most k rounds,
 * each at least b rounds after the one before. 16 bytes of value per client that ever contributed,
 * for the whole run: these entries are never cleared while the job runs, since a client removed
 * from them could contribute again.
 */
public class Participation {
  /** Rounds this client contributed to. */
  public long count;

  /** The last round it contributed to. */
  public long lastRound;

  public Participation() {}

  public Participation(long count, long lastRound) {
    this.count = count;
    this.lastRound = lastRound;
  }
}
