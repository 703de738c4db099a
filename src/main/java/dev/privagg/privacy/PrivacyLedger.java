package dev.privagg.privacy;

import java.util.ArrayList;
import java.util.List;

/**
 * An immutable, append-only list of privacy events. The ledger is what gets stored; epsilon is
 * always derived from it by an {@link Accountant}, never stored on its own.
 */
public record PrivacyLedger(List<PrivacyEvent> events) {
  /** The ledger of a job that has released nothing. */
  public static final PrivacyLedger EMPTY = new PrivacyLedger(List.of());

  /** Copies the events so the ledger cannot change after construction. */
  public PrivacyLedger {
    events = List.copyOf(events);
  }

  /** A ledger holding the given events. */
  public static PrivacyLedger of(PrivacyEvent... events) {
    return new PrivacyLedger(List.of(events));
  }

  /** A new ledger with {@code event} appended. */
  public PrivacyLedger append(PrivacyEvent event) {
    List<PrivacyEvent> longer = new ArrayList<>(events.size() + 1);
    longer.addAll(events);
    longer.add(event);
    return new PrivacyLedger(longer);
  }

  /** Total number of mechanism applications (rounds) recorded. */
  public long totalCount() {
    long total = 0;
    for (PrivacyEvent event : events) {
      total = Math.addExact(total, event.count());
    }
    return total;
  }

  /** True when no event was recorded. */
  public boolean isEmpty() {
    return events.isEmpty();
  }
}
