package dev.privagg.privacy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An immutable ledger of privacy events, kept composed by count: events of the same mechanism
 * (kind, noiseMultiplier, samplingRate) are held as one event whose count is the sum of theirs, in
 * the order each mechanism first appeared. The ledger is what gets stored; epsilon is always
 * derived from it by an {@link Accountant}, never stored on its own.
 *
 * <p>Merging is exact for every accountant here because each is a function of the multiset of
 * rounds: RDP adds over rounds (Mironov 2017, Prop. 1), basic composition sums per-round epsilons
 * (Dwork and Roth 2014, Thm. 3.16), and the heterogeneous advanced composition bound depends only
 * on the sums of epsilon_i^2 and epsilon_i (e^epsilon_i - 1) and on the number of rounds, with
 * delta split evenly over the rounds (Dwork, Rothblum, Vadhan 2010, Thm. III.3). So a ledger's size
 * depends on how many distinct mechanisms were used, not on how many rounds ran.
 *
 * <p>Unsampled Gaussian events ({@link MechanismKind#GAUSSIAN}) are held as one event even when
 * their noise multipliers differ: Gaussian mechanisms compose into exactly one Gaussian mechanism
 * whose 1/z^2 is the sum of theirs (Dong, Roth, Su 2022, Cor. 3.3: z-noise is exactly 1/z-GDP), so
 * counts c_i at z_i become one event of count sum c_i at z with sum c_i / z^2 = sum c_i / z_i^2.
 * Correlated noise charges each round a different increment of one Gaussian mechanism (see {@code
 * dev.privagg.privacy.CorrelatedNoiseAccounting}); this keeps its ledger one event long. A
 * multiplier of 0 stays 0 (infinite epsilon).
 */
public record PrivacyLedger(List<PrivacyEvent> events) {
  /** The ledger of a job that has released nothing. */
  public static final PrivacyLedger EMPTY = new PrivacyLedger(List.of());

  /**
   * Composes the events by count, so the ledger cannot change after construction and holds one
   * event per mechanism. A total count beyond {@link Long#MAX_VALUE} is refused with an {@link
   * ArithmeticException}.
   */
  public PrivacyLedger {
    events = composeByCount(events);
  }

  /** A ledger holding the given events, composed by count. */
  public static PrivacyLedger of(PrivacyEvent... events) {
    return new PrivacyLedger(List.of(events));
  }

  /** A new ledger with {@code event} added to the count of the same mechanism, or appended. */
  public PrivacyLedger append(PrivacyEvent event) {
    List<PrivacyEvent> longer = new ArrayList<>(events.size() + 1);
    longer.addAll(events);
    longer.add(event);
    return new PrivacyLedger(longer);
  }

  /**
   * The events that cost something: this ledger without its {@link MechanismKind#NO_OP} rounds,
   * which every accountant composes as nothing.
   */
  public PrivacyLedger charged() {
    if (events.stream().noneMatch(e -> e.kind() == MechanismKind.NO_OP)) {
      return this;
    }
    return new PrivacyLedger(events.stream().filter(e -> e.kind() != MechanismKind.NO_OP).toList());
  }

  /** Total number of mechanism applications (rounds) recorded, no-op rounds included. */
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

  /** What makes two events the same mechanism: everything but the count. */
  /**
   * Whether some event's privacy is known only as a Renyi bound (the distributed discrete
   * Gaussian), which only the Renyi accountant may compose.
   */
  public boolean hasRenyiOnlyEvents() {
    return events.stream().anyMatch(e -> e.kind() == MechanismKind.DISTRIBUTED_DISCRETE_GAUSSIAN);
  }

  /** Refuses a ledger with Renyi-only events for an accountant that needs more. */
  static void requireNoRenyiOnlyEvents(PrivacyLedger ledger, String accountant) {
    if (ledger.hasRenyiOnlyEvents()) {
      throw new IllegalArgumentException(
          "the ledger holds DISTRIBUTED_DISCRETE_GAUSSIAN rounds, whose privacy is known only as a"
              + " Renyi bound (Kairouz, Liu, Steinke 2021, Proposition 14): the "
              + accountant
              + " accountant cannot compose them; use the rdp accountant");
    }
  }

  private record Mechanism(MechanismKind kind, double noiseMultiplier, double samplingRate) {}

  private static List<PrivacyEvent> composeByCount(List<PrivacyEvent> events) {
    Map<Mechanism, Long> counts = new LinkedHashMap<>();
    // The Gaussian events' merged (count, sum of count / z^2), under the first one's key.
    Mechanism gaussianKey = null;
    long gaussianCount = 0;
    double gaussianPrecision = 0;
    boolean gaussianSame = true;
    for (PrivacyEvent event : events) {
      if (event == null) {
        throw new IllegalArgumentException("events must not contain null");
      }
      if (event.kind() == MechanismKind.GAUSSIAN) {
        if (gaussianKey == null) {
          gaussianKey = new Mechanism(MechanismKind.GAUSSIAN, event.noiseMultiplier(), 1.0);
          counts.put(gaussianKey, 0L);
        }
        gaussianSame &= event.noiseMultiplier() == gaussianKey.noiseMultiplier();
        gaussianCount = Math.addExact(gaussianCount, event.count());
        double z = event.noiseMultiplier();
        gaussianPrecision += z == 0 ? Double.POSITIVE_INFINITY : event.count() / (z * z);
        continue;
      }
      counts.merge(
          new Mechanism(event.kind(), event.noiseMultiplier(), event.samplingRate()),
          event.count(),
          Math::addExact);
    }
    if (counts.size() == events.size()) {
      return List.copyOf(events); // nothing to merge: keep the given events as they are
    }
    List<PrivacyEvent> composed = new ArrayList<>(counts.size());
    for (Map.Entry<Mechanism, Long> e : counts.entrySet()) {
      Mechanism m = e.getKey();
      if (m == gaussianKey) {
        composed.add(
            PrivacyEvent.gaussian(
                gaussianSame
                    ? m.noiseMultiplier()
                    : mergedMultiplier(gaussianCount, gaussianPrecision),
                gaussianCount));
      } else {
        composed.add(
            new PrivacyEvent(m.kind(), m.noiseMultiplier(), m.samplingRate(), e.getValue()));
      }
    }
    return List.copyOf(composed);
  }

  /** z with count / z^2 = precision: 0 when some merged event had no noise. */
  private static double mergedMultiplier(long count, double precision) {
    return Double.isInfinite(precision) ? 0 : Math.sqrt(count / precision);
  }
}
