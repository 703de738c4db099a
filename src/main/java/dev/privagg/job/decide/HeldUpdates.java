package dev.privagg.job.decide;

import dev.privagg.job.DecodedUpdate;
import java.util.List;

/**
 * Updates waiting for event time to reach their broker timestamp, so that a round's members are
 * decided in timestamp order, not in the order partitions happen to be read (design.md invariant
 * 10). Backed by map state in the job, by a sorted map in unit tests.
 */
interface HeldUpdates {
  void hold(long timestamp, DecodedUpdate update);

  /** Removes and returns the updates held at {@code timestamp}; empty when there are none. */
  List<DecodedUpdate> take(long timestamp);

  /** Every timestamp that still has updates held, in no particular order. */
  Iterable<Long> timestamps();

  boolean holdsAt(long timestamp);
}
