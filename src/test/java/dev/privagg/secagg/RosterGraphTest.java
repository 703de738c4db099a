package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The protocol's neighbourhood rule, stated independently: node j is a neighbour of node i when
 * their positions on the cycle (where {@code permutation[q]} sits at position q) are at most {@code
 * (k - 1) / 2} apart, counting around the cycle; i is its own neighbour.
 */
/** The Roster's graph rule (docs/secure-aggregation.md), checked by cycle distance. */
class RosterGraphTest {
  @Test
  void neighbourhood_isTheNodesWithinHalfTheDegreeOnTheCycle_forRandomGraphs() {
    Random random = new Random(3);
    for (int trial = 0; trial < 200; trial++) {
      int n = 1 + random.nextInt(40);
      int degree = 2 * random.nextInt((n + 1) / 2) + 1;
      int[] permutation = permutation(n, random);

      for (int node = 0; node < n; node++) {
        assertThat(HararyGraph.ofNeighbourhoodSize(degree, permutation).neighbourhood(node))
            .as("n %d, k %d, node %d", n, degree, node)
            .containsExactly(byCycleDistance(node, degree, permutation));
      }
    }
  }

  @Test
  void neighbourhood_ofAWorkedExample() {
    // Positions 0..6 hold 3 0 6 1 5 2 4; node 0 sits at 1, so with k = 3 its positions are 0..2.
    int[] permutation = {3, 0, 6, 1, 5, 2, 4};

    assertThat(HararyGraph.ofNeighbourhoodSize(3, permutation).neighbourhood(0))
        .containsExactly(0, 3, 6);
    assertThat(HararyGraph.ofNeighbourhoodSize(3, permutation).neighbourhood(3))
        .containsExactly(0, 3, 4);
    assertThat(HararyGraph.ofNeighbourhoodSize(5, permutation).neighbourhood(4))
        .containsExactly(0, 2, 3, 4, 5);
  }

  @Test
  void sizeN_isTheCompleteGraph_whateverNsParity() {
    for (int n = 1; n <= 8; n++) {
      int[] permutation = permutation(n, new Random(n));
      for (int node = 0; node < n; node++) {
        assertThat(HararyGraph.ofNeighbourhoodSize(n, permutation).neighbourhood(node))
            .containsExactly(IntStream.range(0, n).toArray());
      }
    }
  }

  @Test
  void graph_refusesAnEvenOrOversizedSizeAndANonPermutation() {
    assertThatThrownBy(() -> HararyGraph.ofNeighbourhoodSize(4, new int[] {0, 1, 2, 3, 4}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "the neighbourhood size must be odd and in [1, 5), or 5 (the complete graph), was 4");
    assertThatThrownBy(() -> HararyGraph.ofNeighbourhoodSize(5, new int[] {0, 1, 2}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("was 5");
    assertThatThrownBy(() -> HararyGraph.ofNeighbourhoodSize(1, new int[] {0, 2, 2}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("permutation");
  }

  private static int[] byCycleDistance(int node, int degree, int[] permutation) {
    int n = permutation.length;
    int[] position = new int[n];
    for (int q = 0; q < n; q++) {
      position[permutation[q]] = q;
    }
    return IntStream.range(0, n)
        .filter(
            j -> {
              int apart = Math.abs(position[j] - position[node]);
              return Math.min(apart, n - apart) <= (degree - 1) / 2;
            })
        .toArray();
  }

  static int[] permutation(int n, Random random) {
    List<Integer> nodes = new ArrayList<>(IntStream.range(0, n).boxed().toList());
    Collections.shuffle(nodes, random);
    return nodes.stream().mapToInt(Integer::intValue).toArray();
  }
}
