package dev.privagg.secagg;

import java.util.random.RandomGenerator;

/** Harary graphs on a ring shuffled by a test's own generator (the job derives its permutation). */
final class TestGraphs {
  private TestGraphs() {}

  /**
   * The Harary graph of this degree with a Fisher-Yates shuffle of the ring from {@code random}.
   */
  static HararyGraph shuffled(int numberOfNodes, int degree, RandomGenerator random) {
    int[] permutation = new int[numberOfNodes];
    for (int i = 0; i < numberOfNodes; i++) {
      permutation[i] = i;
    }
    for (int i = numberOfNodes - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int swap = permutation[i];
      permutation[i] = permutation[j];
      permutation[j] = swap;
    }
    return new HararyGraph(degree, permutation);
  }
}
