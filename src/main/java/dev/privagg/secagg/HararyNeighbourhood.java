package dev.privagg.secagg;

import java.util.Arrays;

/**
 * The neighbourhood rule of the protocol's Harary graph (FCP's {@code SecretSharingHararyGraph}):
 * position q of a cycle of n positions holds node {@code permutation[q]}, and the neighbourhood of
 * a node is the k nodes at positions within {@code (k - 1) / 2} of its own, itself included.
 */
final class HararyNeighbourhood {
  private HararyNeighbourhood() {}

  /** The neighbourhood of {@code node}, itself included, sorted. */
  static int[] of(int node, int degree, int[] permutation) {
    int n = permutation.length;
    validate(degree, permutation);
    if (!(node >= 0 && node < n)) {
      throw new IllegalArgumentException("node must be in [0, " + n + "), was " + node);
    }
    int position = 0;
    while (permutation[position] != node) {
      position++;
    }
    int[] neighbourhood = new int[degree];
    for (int i = 0; i < degree; i++) {
      // Floor mod: positions wrap around the cycle in both directions.
      neighbourhood[i] = permutation[Math.floorMod(position - degree / 2 + i, n)];
    }
    Arrays.sort(neighbourhood);
    return neighbourhood;
  }

  /** Requires an odd degree in [1, n] and a permutation of 0..n-1. */
  static void validate(int degree, int[] permutation) {
    int n = permutation.length;
    if (!(degree >= 1 && degree <= n && degree % 2 == 1)) {
      throw new IllegalArgumentException(
          "degree must be odd and in [1, " + n + "] (the roster's size), was " + degree);
    }
    boolean[] seen = new boolean[n];
    for (int node : permutation) {
      if (!(node >= 0 && node < n) || seen[node]) {
        throw new IllegalArgumentException(
            "permutation must hold each of 0.."
                + (n - 1)
                + " once, found "
                + node
                + " out of place");
      }
      seen[node] = true;
    }
  }
}
