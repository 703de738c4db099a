package dev.privagg.job.decide;

import dev.privagg.job.Participation;

/**
 * Every client's contributions so far, by client key, for jobs with correlated noise: backed by map
 * state in the job (never cleared during the run), by a map in unit tests.
 */
interface Participations {
  /** The client's participation, or null if it never contributed. */
  Participation get(String clientKey);

  void put(String clientKey, Participation participation);
}
