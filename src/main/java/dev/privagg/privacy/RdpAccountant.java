package dev.privagg.privacy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Renyi DP accountant for Poisson-subsampled Gaussian rounds (Mironov, Talwar, Zhang 2019),
 * converted to (epsilon, delta) with the hypothesis-testing bound of Balle, Barthe, Gaboardi, Hsu,
 * Sato 2020 (Theorem 21), in the form used by Opacus and Google's dp_accounting.
 *
 * <p>RDP composes additively, so the ledger's RDP at each order is the count-weighted sum of its
 * events' RDP; epsilon is the minimum of the converted bound over the orders.
 *
 * <p>The per-round RDP of a mechanism at every order is a pure function of (samplingRate,
 * noiseMultiplier, orders) but costs about a millisecond over the default orders (a series per
 * fractional order). Each accountant memoises it for the last {@value #MEMO_CAPACITY} mechanisms it
 * saw, so epsilon of a ledger composed by count costs one multiply-add per event and order. The
 * memo is thread-safe; the accountant over the default orders is one shared instance, so its memo
 * outlives the lookups by name that a streaming operator makes every round.
 */
public final class RdpAccountant implements Accountant {
  /** Orders 1.1 to 10.9 by 0.1, 11 to 63, then 128, 256, 512, 1024. */
  public static final double[] DEFAULT_ORDERS = defaultOrders();

  /** Mechanisms whose per-round RDP each accountant remembers; a job uses one or two. */
  static final int MEMO_CAPACITY = 64;

  private static final RdpAccountant DEFAULT = new RdpAccountant(DEFAULT_ORDERS.clone());

  private final double[] orders;

  /** Per-round RDP at each order, by mechanism; least recently used evicted first. */
  private final Map<Mechanism, double[]> memo =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Mechanism, double[]> eldest) {
          return size() > MEMO_CAPACITY;
        }
      };

  private RdpAccountant(double[] orders) {
    this.orders = orders;
  }

  /** The accountant over {@link #DEFAULT_ORDERS}: one shared instance. */
  public static RdpAccountant withDefaultOrders() {
    return DEFAULT;
  }

  /** The accountant over the given orders, each of which must be finite and > 1. */
  public static RdpAccountant withOrders(double... orders) {
    if (orders == null || orders.length == 0) {
      throw new IllegalArgumentException("orders must hold at least one order > 1");
    }
    for (double order : orders) {
      if (!(order > 1 && Double.isFinite(order))) {
        throw new IllegalArgumentException("every order must be > 1 and finite, was " + order);
      }
    }
    return new RdpAccountant(orders.clone());
  }

  /** A copy of the orders this accountant searches. */
  public double[] orders() {
    return orders.clone();
  }

  @Override
  public String name() {
    return "rdp";
  }

  /** The ledger's total RDP at each of this accountant's orders. */
  public double[] rdp(PrivacyLedger ledger) {
    double[] total = new double[orders.length];
    for (PrivacyEvent event : ledger.events()) {
      double[] perRound = perRoundRdp(event.samplingRate(), event.noiseMultiplier());
      for (int i = 0; i < orders.length; i++) {
        total[i] += perRound[i] * event.count();
      }
    }
    return total;
  }

  /**
   * One round's RDP at each order, from the memo or computed and remembered. Never handed out: the
   * caller must not change it. Two threads missing at once both compute the same values.
   */
  private double[] perRoundRdp(double samplingRate, double noiseMultiplier) {
    Mechanism mechanism = new Mechanism(samplingRate, noiseMultiplier);
    synchronized (memo) {
      double[] known = memo.get(mechanism);
      if (known != null) {
        return known;
      }
    }
    double[] perRound = new double[orders.length];
    for (int i = 0; i < orders.length; i++) {
      perRound[i] = SampledGaussianRdp.rdp(samplingRate, noiseMultiplier, orders[i]);
    }
    synchronized (memo) {
      memo.put(mechanism, perRound);
    }
    return perRound;
  }

  /** The memo's key: the kind adds nothing, as rate 1 is the plain Gaussian either way. */
  private record Mechanism(double samplingRate, double noiseMultiplier) {}

  @Override
  public PrivacySpent epsilon(PrivacyLedger all, double delta) {
    Checks.openUnitInterval("delta", delta);
    // No-op rounds compose as nothing.
    PrivacyLedger ledger = all.charged();
    double[] rdp = rdp(ledger);
    double best = Double.POSITIVE_INFINITY;
    double bestOrder = orders[0];
    for (int i = 0; i < orders.length; i++) {
      double eps = epsilonFromRdp(orders[i], rdp[i], delta);
      if (eps < best) {
        best = eps;
        bestOrder = orders[i];
      }
    }
    return new PrivacySpent(Math.max(0, best), delta, bestOrder);
  }

  @Override
  public double delta(PrivacyLedger all, double epsilon) {
    Checks.nonNegativeFinite("epsilon", epsilon);
    PrivacyLedger ledger = all.charged();
    double[] rdp = rdp(ledger);
    double bestLogDelta = Double.POSITIVE_INFINITY;
    for (int i = 0; i < orders.length; i++) {
      bestLogDelta = Math.min(bestLogDelta, logDeltaFromRdp(orders[i], rdp[i], epsilon));
    }
    return Math.min(Math.exp(bestLogDelta), 1.0);
  }

  /**
   * Balle et al. 2020, Thm. 21: eps = rdp + log1p(-1/a) - log(delta * a) / (a - 1). When delta^2 +
   * expm1(-rdp) >= 0 the pair is already (0, delta)-DP. Orders at or below 1.01 are skipped because
   * the bound is numerically unstable there.
   */
  static double epsilonFromRdp(double order, double rdp, double delta) {
    if (Double.isInfinite(rdp)) {
      return Double.POSITIVE_INFINITY;
    }
    if (delta * delta + Math.expm1(-rdp) >= 0) {
      return 0;
    }
    if (order <= 1.01) {
      return Double.POSITIVE_INFINITY;
    }
    return rdp + Math.log1p(-1 / order) - Math.log(delta * order) / (order - 1);
  }

  /**
   * log delta for a target epsilon: the minimum of the KL (Pinsker-type) bound 0.5 log(1 -
   * exp(-rdp)) and the inverse of Thm. 21, as dp_accounting computes it.
   */
  static double logDeltaFromRdp(double order, double rdp, double epsilon) {
    if (Double.isInfinite(rdp)) {
      return 0;
    }
    double logDelta = rdp == 0 ? Double.NEGATIVE_INFINITY : 0.5 * Math.log1p(-Math.exp(-rdp));
    if (order > 1.01) {
      double rdpBound = (order - 1) * (rdp - epsilon + Math.log1p(-1 / order)) - Math.log(order);
      logDelta = Math.min(logDelta, rdpBound);
    }
    return logDelta;
  }

  private static double[] defaultOrders() {
    List<Double> list = new ArrayList<>();
    for (int tenths = 11; tenths <= 109; tenths++) {
      list.add(tenths / 10.0);
    }
    for (int order = 11; order <= 63; order++) {
      list.add((double) order);
    }
    list.addAll(List.of(128.0, 256.0, 512.0, 1024.0));
    return list.stream().mapToDouble(Double::doubleValue).toArray();
  }

  @Override
  public String toString() {
    return "RdpAccountant" + Arrays.toString(orders);
  }
}
