package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.OptionalInt;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HararyGraphTest {
  /** FCP's kNumNodes = 10 and kDegree = 5, which counts the self-edge. */
  private static final int NODES = 10;

  private static final int DEGREE = 4;

  private static final int[] IDENTITY = IntStream.range(0, NODES).toArray();

  /**
   * FCP's adjacency list of H(10, 4) before renaming, as share slots: ring positions from two
   * behind to two ahead, the node itself in the middle (secret_sharing_harary_graph_test.cc).
   */
  private static final int[][] RING_SLOTS = {
    {8, 9, 0, 1, 2},
    {9, 0, 1, 2, 3},
    {0, 1, 2, 3, 4},
    {1, 2, 3, 4, 5},
    {2, 3, 4, 5, 6},
    {3, 4, 5, 6, 7},
    {4, 5, 6, 7, 8},
    {5, 6, 7, 8, 9},
    {6, 7, 8, 9, 0},
    {7, 8, 9, 0, 1}
  };

  // secret_sharing_harary_graph.h, the worked example: permutation (3, 2, 5, 4, 1, 8, 9, 0, 6, 7)
  // turns the list above into "3 -> 6, 7, 3, 2, 5", "2 -> 7, 3, 2, 5, 4", ... The header's last
  // row reads "7 -> 0, 6, 7, 3, 1", a typo: ring slot 1 holds p[1] = 2.
  @Test
  void neighbourAt_reproducesFcpsWorkedExample() {
    var graph = new HararyGraph(DEGREE, new int[] {3, 2, 5, 4, 1, 8, 9, 0, 6, 7});
    int[][] expected = {
      {3, 6, 7, 3, 2, 5},
      {2, 7, 3, 2, 5, 4},
      {5, 3, 2, 5, 4, 1},
      {4, 2, 5, 4, 1, 8},
      {1, 5, 4, 1, 8, 9},
      {8, 4, 1, 8, 9, 0},
      {9, 1, 8, 9, 0, 6},
      {0, 8, 9, 0, 6, 7},
      {6, 9, 0, 6, 7, 3},
      {7, 0, 6, 7, 3, 2}
    };
    for (int[] row : expected) {
      assertThat(slots(graph, row[0])).as("node %d", row[0]).containsExactly(tail(row));
    }
    // FCP's example also gives the inverse permutation (7, 4, 1, 0, 3, 2, 8, 9, 5, 6): the slot of
    // node v in its own list is degree / 2 and its ring position is where v sits in permutation().
    int[] inverse = {7, 4, 1, 0, 3, 2, 8, 9, 5, 6};
    for (int node = 0; node < NODES; node++) {
      assertThat(graph.permutation()[inverse[node]]).isEqualTo(node);
      assertThat(graph.neighbourIndex(node, node)).hasValue(DEGREE / 2);
    }
  }

  // secret_sharing_harary_graph_test.cc, GetNeighborsIsCorrectInDeterministicHararyGraph and
  // AreNeighborsIsCorrectInDeterministicHararyGraph
  @Test
  void identityPermutation_givesFcpsDeterministicAdjacency() {
    var graph = new HararyGraph(DEGREE, IDENTITY);
    assertThat(graph.permutation()).containsExactly(IDENTITY);
    assertThat(graph.numberOfNodes()).isEqualTo(NODES);
    assertThat(graph.degree()).isEqualTo(DEGREE);
    for (int node = 0; node < NODES; node++) {
      assertThat(slots(graph, node)).as("node %d", node).containsExactly(RING_SLOTS[node]);
      for (int other = 0; other < NODES; other++) {
        boolean listed = other != node && contains(RING_SLOTS[node], other);
        assertThat(graph.areNeighbours(node, other)).as("%d, %d", node, other).isEqualTo(listed);
      }
    }
  }

  // secret_sharing_harary_graph_test.cc, GetNeighborsIsCorrectInRandomHararyGraph and
  // AreNeighborsIsCorrectInRandomHararyGraph: node p[i] has the slots p[RING_SLOTS[i]].
  @Test
  void shuffledGraph_givesFcpsAdjacencyRenamedByItsPermutation() {
    var graph = TestGraphs.shuffled(NODES, DEGREE, new SplittableRandom(7));
    int[] p = graph.permutation();
    for (int position = 0; position < NODES; position++) {
      int[] renamed = Arrays.stream(RING_SLOTS[position]).map(i -> p[i]).toArray();
      assertThat(slots(graph, p[position])).containsExactly(renamed);
      for (int other = 0; other < NODES; other++) {
        boolean listed = other != p[position] && contains(renamed, other);
        assertThat(graph.areNeighbours(p[position], other)).isEqualTo(listed);
      }
    }
  }

  // secret_sharing_harary_graph_test.cc, GetNeighborIndexIsCorrectInHararyGraph; FCP's degrees
  // 1, 3, 5, 23, 43 and 301 count the self-edge.
  @ParameterizedTest(name = "{0} nodes, degree {1}")
  @CsvSource({"10, 0", "10, 2", "10, 4", "100, 22", "1000, 42", "10000, 300"})
  void neighbourIndex_invertsNeighbourAt(int nodes, int degree) {
    var graph = TestGraphs.shuffled(nodes, degree, new SplittableRandom(nodes + degree));
    assertThat(graph.numberOfNodes()).isEqualTo(nodes);
    assertThat(graph.degree()).isEqualTo(degree);
    for (int node = 0; node < nodes; node++) {
      for (int index = 0; index <= degree; index++) {
        assertThat(graph.neighbourIndex(node, graph.neighbourAt(node, index))).hasValue(index);
      }
    }
  }

  @ParameterizedTest(name = "{0} nodes, degree {1}, seed {2}")
  @CsvSource({
    "1, 0, 1",
    "3, 2, 1",
    "4, 2, 2",
    "9, 8, 3",
    "10, 8, 4",
    "11, 6, 5",
    "64, 12, 6",
    "101, 40, 7",
    "257, 100, 8"
  })
  void everyNode_hasDegreeDistinctOtherNeighbours_symmetrically(int nodes, int degree, long seed) {
    var graph = TestGraphs.shuffled(nodes, degree, new SplittableRandom(seed));
    int[] timesNamed = new int[nodes];
    for (int node = 0; node < nodes; node++) {
      int[] neighbours = graph.neighbours(node);
      assertThat(neighbours).hasSize(degree).doesNotHaveDuplicates().doesNotContain(node);
      assertThat(neighbours).isSorted();
      for (int other = 0; other < nodes; other++) {
        boolean listed = contains(neighbours, other);
        assertThat(graph.areNeighbours(node, other)).isEqualTo(listed);
        assertThat(graph.areNeighbours(other, node)).isEqualTo(listed);
        assertThat(graph.neighbourIndex(node, other).isPresent())
            .isEqualTo(listed || other == node);
      }
      for (int neighbour : neighbours) {
        timesNamed[neighbour]++;
      }
    }
    // Regular: every node is named by exactly degree others.
    assertThat(timesNamed).containsOnly(degree);
  }

  @Test
  void neighbours_areTheRingNeighboursOfTheNodesPosition() {
    var graph = TestGraphs.shuffled(30, 6, new SplittableRandom(11));
    int[] p = graph.permutation();
    for (int position = 0; position < 30; position++) {
      int[] expected = new int[6];
      for (int step = 1; step <= 3; step++) {
        expected[2 * step - 2] = p[Math.floorMod(position - step, 30)];
        expected[2 * step - 1] = p[Math.floorMod(position + step, 30)];
      }
      Arrays.sort(expected);
      assertThat(graph.neighbours(p[position])).containsExactly(expected);
    }
  }

  @Test
  void largestEvenDegree_onAnOddRing_isTheCompleteGraph() {
    var graph = TestGraphs.shuffled(9, 8, new SplittableRandom(1));
    for (int node = 0; node < 9; node++) {
      int self = node;
      assertThat(graph.neighbours(node))
          .containsExactly(IntStream.range(0, 9).filter(v -> v != self).toArray());
    }
  }

  // secret_sharing_harary_graph_test.cc, ConstructionFailsOnEvenDegree: FCP's even degrees 4 and
  // 20 (with the self-edge) are the odd degrees 3 and 19 here.
  @ParameterizedTest(name = "{0} nodes, degree {1}")
  @CsvSource({"10, 3", "50, 19", "10, -2", "10, 10"})
  void constructor_rejectsOddOrOutOfRangeDegrees(int nodes, int degree) {
    assertThatThrownBy(() -> TestGraphs.shuffled(nodes, degree, new SplittableRandom(0)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "degree must be even and in [0, numberOfNodes - 1 = "
                + (nodes - 1)
                + "], was "
                + degree);
  }

  @Test
  void constructor_rejectsPermutationsThatAreNotBijections() {
    assertThatThrownBy(() -> new HararyGraph(2, new int[] {0, 1, 1, 3}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("permutation must list each node id once, 1 appears again at position 2");
    assertThatThrownBy(() -> new HararyGraph(2, new int[] {0, 1, 4, 3}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("permutation values must be node ids in [0, 4), was 4 at position 2");
    assertThatThrownBy(() -> new HararyGraph(0, new int[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("permutation must have at least 1 node, was empty");
  }

  @Test
  void constructor_copiesThePermutation() {
    int[] permutation = IDENTITY.clone();
    var graph = new HararyGraph(DEGREE, permutation);
    permutation[0] = 1;
    graph.permutation()[1] = 0;
    assertThat(graph.permutation()).containsExactly(IDENTITY);
  }

  @Test
  void nodeAndSlotArguments_areBoundsChecked() {
    var graph = new HararyGraph(DEGREE, IDENTITY);
    assertThatThrownBy(() -> graph.neighbours(NODES)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> graph.areNeighbours(0, -1))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> graph.neighbourAt(0, DEGREE + 1))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void neighbourIndex_isEmpty_forNodesBeyondHalfTheDegreeOnTheRing() {
    var graph = new HararyGraph(DEGREE, IDENTITY);
    assertThat(graph.neighbourIndex(0, 3)).isEqualTo(OptionalInt.empty());
    assertThat(graph.neighbourIndex(0, 8)).hasValue(0);
    assertThat(graph.neighbourIndex(0, 2)).hasValue(4);
  }

  // secret_sharing_complete_graph_test.cc: 10 nodes; FCP's degree 10 counts the self-edge. FCP's
  // AreNeighbors(0, 0) is true; here a node is not its own neighbour.
  @Test
  void complete_reproducesFcpsCompleteGraph() {
    var graph = HararyGraph.complete(NODES);
    assertThat(graph.numberOfNodes()).isEqualTo(NODES);
    assertThat(graph.degree()).isEqualTo(NODES - 1);
    for (int index = 0; index < NODES; index++) {
      assertThat(graph.neighbourAt(0, index)).isEqualTo(index);
      assertThat(graph.areNeighbours(0, index)).isEqualTo(index != 0);
    }
    for (int node = 0; node < NODES; node++) {
      for (int other = 0; other < NODES; other++) {
        assertThat(graph.neighbourIndex(node, other)).hasValue(other);
      }
      int self = node;
      assertThat(graph.neighbours(node))
          .containsExactly(IntStream.range(0, NODES).filter(v -> v != self).toArray());
    }
    assertThatThrownBy(() -> graph.neighbourAt(0, -1))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> graph.neighbourAt(0, NODES))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> graph.areNeighbours(0, -1))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> graph.areNeighbours(0, NODES))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void complete_coversEvenCohorts_whichNoEvenDegreeRingCan() {
    var graph = HararyGraph.complete(4);
    assertThat(graph.degree()).isEqualTo(3);
    assertThat(graph.neighbours(2)).containsExactly(0, 1, 3);
    assertThatThrownBy(() -> HararyGraph.complete(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("numberOfNodes must be >= 1, was 0");
  }

  /** The node's degree() + 1 share slots, in FCP's order. */
  private static int[] slots(HararyGraph graph, int node) {
    return IntStream.rangeClosed(0, graph.degree()).map(i -> graph.neighbourAt(node, i)).toArray();
  }

  private static int[] tail(int[] row) {
    return Arrays.copyOfRange(row, 1, row.length);
  }

  private static boolean contains(int[] values, int value) {
    return Arrays.stream(values).anyMatch(v -> v == value);
  }
}
