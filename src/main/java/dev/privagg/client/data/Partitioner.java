package dev.privagg.client.data;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Splits a training set over simulated clients: IID (a shuffled round-robin), or with label skew by
 * Dirichlet(alpha) class proportions per client (Hsu, Qi, Brown 2019): small alpha gives each
 * client few classes, large alpha approaches IID. Every example goes to exactly one client.
 */
public final class Partitioner {
  private Partitioner() {}

  /** Example indices per client, IID. */
  public static int[][] iid(int examples, int clients, long seed) {
    check(examples, clients);
    int[] order = Datasets.permutation(examples, new SplittableRandom(seed));
    List<List<Integer>> parts = lists(clients);
    for (int i = 0; i < order.length; i++) {
      parts.get(i % clients).add(order[i]);
    }
    return arrays(parts);
  }

  /** Example indices per client, class proportions per class drawn from Dirichlet(alpha). */
  public static int[][] dirichlet(
      int[] labels, int numClasses, int clients, double alpha, long seed) {
    check(labels.length, clients);
    if (!(alpha > 0 && Double.isFinite(alpha))) {
      throw new IllegalArgumentException("alpha must be > 0 and finite, was " + alpha);
    }
    SplittableRandom random = new SplittableRandom(seed);
    List<List<Integer>> parts = lists(clients);
    for (int c = 0; c < numClasses; c++) {
      List<Integer> members = new ArrayList<>();
      for (int i = 0; i < labels.length; i++) {
        if (labels[i] == c) {
          members.add(i);
        }
      }
      java.util.Collections.shuffle(members, new java.util.Random(random.nextLong()));
      double[] share = dirichletSample(clients, alpha, random);
      // Cumulative shares turned into cut points, so the class is split without loss or overlap.
      double cumulative = 0;
      int start = 0;
      for (int k = 0; k < clients; k++) {
        cumulative += share[k];
        int end = k == clients - 1 ? members.size() : (int) Math.round(cumulative * members.size());
        parts.get(k).addAll(members.subList(start, Math.max(start, end)));
        start = Math.max(start, end);
      }
    }
    return arrays(parts);
  }

  /** Dirichlet(alpha, ..., alpha) as normalised Gamma(alpha, 1) variates. */
  static double[] dirichletSample(int k, double alpha, SplittableRandom random) {
    double[] g = new double[k];
    double sum = 0;
    for (int i = 0; i < k; i++) {
      g[i] = gamma(alpha, random);
      sum += g[i];
    }
    for (int i = 0; i < k; i++) {
      g[i] = sum > 0 ? g[i] / sum : 1.0 / k;
    }
    return g;
  }

  /** Marsaglia and Tsang 2000 gamma sampler; alpha < 1 via Gamma(alpha + 1) * U^(1/alpha). */
  static double gamma(double alpha, SplittableRandom random) {
    if (alpha < 1) {
      return gamma(alpha + 1, random) * Math.pow(random.nextDouble(), 1 / alpha);
    }
    double d = alpha - 1.0 / 3;
    double c = 1 / Math.sqrt(9 * d);
    while (true) {
      double x = random.nextGaussian();
      double v = 1 + c * x;
      if (v <= 0) {
        continue;
      }
      v = v * v * v;
      double u = random.nextDouble();
      if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) {
        return d * v;
      }
    }
  }

  private static void check(int examples, int clients) {
    if (clients < 1 || clients > examples) {
      throw new IllegalArgumentException(
          "clients must be in [1, " + examples + "] (one example each at least), was " + clients);
    }
  }

  private static List<List<Integer>> lists(int n) {
    List<List<Integer>> lists = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      lists.add(new ArrayList<>());
    }
    return lists;
  }

  private static int[][] arrays(List<List<Integer>> parts) {
    int[][] out = new int[parts.size()][];
    for (int i = 0; i < out.length; i++) {
      out[i] = parts.get(i).stream().mapToInt(Integer::intValue).toArray();
    }
    return out;
  }
}
