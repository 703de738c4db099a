package dev.privagg.job.decide;

import dev.privagg.job.decode.ClientKeys;

/**
 * The client keys (see {@link ClientKeys}) seen in the open round: backed by map state in the job,
 * by a set in unit tests. {@link RoundStore#clearRound()} empties it when the round closes.
 */
interface SeenClients {
  boolean contains(String clientKey);

  void add(String clientKey);
}
