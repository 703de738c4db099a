package dev.privagg.secagg;

import java.util.Arrays;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * The graph SecAgg+ shares secrets along: which clients each client shares its keys with and
 * computes pairwise masks with. Port of FCP's {@code SecretSharingHararyGraph} and {@code
 * SecretSharingCompleteGraph} (fcp/secagg/server/secret_sharing_*_graph.h).
 *
 * <p>The Harary graph H(n, k) places the n nodes on a ring and joins each to the k / 2 nodes on
 * either side; node ids are then assigned to ring positions by a permutation, which must be
 * uniformly random and beyond the server's choice for security (see {@link RosterPermutation}). The
 * complete graph joins every pair of nodes and keeps node ids in order.
 *
 * <p>Conventions: {@link #degree()} counts the <em>other</em> nodes a node is joined to (the even k
 * of FCP's graph parameters); {@link #neighbours} lists them and a node is not its own neighbour.
 * FCP additionally gives every node a self-edge, so that a node holds a share of its own secrets:
 * FCP's {@code GetDegree()} is {@code degree() + 1}, and each node has an ordered list of {@code
 * degree() + 1} share slots, itself included. {@link #neighbourAt} and {@link #neighbourIndex}
 * number those slots exactly as FCP does: on the Harary graph the ring from k / 2 positions behind
 * the node to k / 2 ahead (the node itself at slot k / 2); on the complete graph the node ids in
 * order (slot i is node i).
 */
public final class HararyGraph {
  private final int degree;
  private final boolean complete;

  /** The node id at each ring position (FCP's permutation). */
  private final int[] nodeAt;

  /** The ring position of each node id (the inverse permutation). */
  private final int[] positionOf;

  /**
   * The Harary graph with node {@code permutation[i]} at ring position i.
   *
   * @param degree neighbours per node, even and in [0, permutation.length - 1]
   * @param permutation a bijection on [0, n), n >= 1; copied
   */
  public HararyGraph(int degree, int[] permutation) {
    this(checkedPermutation(permutation), checkedDegree(degree, permutation.length), false);
  }

  private HararyGraph(int[] nodeAt, int degree, boolean complete) {
    this.nodeAt = nodeAt;
    this.degree = degree;
    this.complete = complete;
    this.positionOf = new int[nodeAt.length];
    for (int position = 0; position < nodeAt.length; position++) {
      positionOf[nodeAt[position]] = position;
    }
  }

  /**
   * The complete graph on {@code numberOfNodes} nodes (FCP's full-graph SecAgg variant, for cohorts
   * too small for a sparse graph): degree numberOfNodes - 1, share slot i held by node i.
   *
   * @param numberOfNodes at least 1
   */
  public static HararyGraph complete(int numberOfNodes) {
    return new HararyGraph(identity(numberOfNodes), numberOfNodes - 1, true);
  }

  /**
   * The graph a Roster message describes (docs/secure-aggregation.md): neighbourhoods of {@code
   * neighbourhoodSize} nodes, each node itself included. Size n is the complete graph, whatever n's
   * parity; any smaller size is odd, the Harary graph of degree {@code neighbourhoodSize - 1} with
   * node {@code permutation[q]} at ring position q.
   *
   * @throws IllegalArgumentException naming the rule the size or the permutation breaks
   */
  public static HararyGraph ofNeighbourhoodSize(int neighbourhoodSize, int[] permutation) {
    int n = permutation.length;
    checkedPermutation(permutation);
    if (neighbourhoodSize == n) {
      return complete(n);
    }
    if (!(neighbourhoodSize >= 1 && neighbourhoodSize < n && neighbourhoodSize % 2 == 1)) {
      throw new IllegalArgumentException(
          "the neighbourhood size must be odd and in [1, "
              + n
              + "), or "
              + n
              + " (the complete graph), was "
              + neighbourhoodSize);
    }
    return new HararyGraph(neighbourhoodSize - 1, permutation);
  }

  /** The size of each neighbourhood, the node itself included: a Roster's degree. */
  public int neighbourhoodSize() {
    return degree + 1;
  }

  /** {@code node} and the nodes joined to it, in increasing order. */
  public int[] neighbourhood(int node) {
    int[] others = neighbours(node);
    int[] all = Arrays.copyOf(others, others.length + 1);
    all[others.length] = node;
    Arrays.sort(all);
    return all;
  }

  /** The number of nodes n; node ids are [0, n). */
  public int numberOfNodes() {
    return nodeAt.length;
  }

  /** The number of other nodes each node is joined to; FCP's degree is one more (self-edge). */
  public int degree() {
    return degree;
  }

  /** The node id at each ring position; the identity for the complete graph. A copy. */
  public int[] permutation() {
    return nodeAt.clone();
  }

  /** The {@link #degree()} nodes joined to {@code node}, in increasing order, without itself. */
  public int[] neighbours(int node) {
    int self = neighbourIndex(node, node).orElseThrow();
    int[] neighbours = new int[degree];
    int next = 0;
    for (int slot = 0; slot <= degree; slot++) {
      if (slot != self) {
        neighbours[next++] = neighbourAt(node, slot);
      }
    }
    Arrays.sort(neighbours);
    return neighbours;
  }

  /** Whether {@code a} and {@code b} are joined; symmetric, and false when a == b. */
  public boolean areNeighbours(int a, int b) {
    return a != b && neighbourIndex(a, b).isPresent();
  }

  /**
   * The share slot of {@code node} that {@code other} holds (FCP's {@code GetNeighborIndex}): in
   * [0, degree()], with {@code other == node} giving the node's own slot; empty when the two are
   * not joined.
   */
  public OptionalInt neighbourIndex(int node, int other) {
    checkNode(node);
    checkNode(other);
    if (complete) {
      return OptionalInt.of(other);
    }
    int n = nodeAt.length;
    int half = degree / 2;
    int difference = Math.abs(positionOf[node] - positionOf[other]);
    int distance = Math.min(difference, n - difference);
    if (distance > half) {
      return OptionalInt.empty();
    }
    // Nodes behind this one on the ring come before it in its slot list.
    boolean behind = Math.floorMod(positionOf[node] - distance, n) == positionOf[other];
    return OptionalInt.of(behind ? half - distance : half + distance);
  }

  /**
   * The node holding share slot {@code index} of {@code node} (FCP's {@code GetNeighbor}); slot
   * {@code neighbourIndex(node, node)} is the node itself.
   *
   * @param index in [0, degree()]
   */
  public int neighbourAt(int node, int index) {
    checkNode(node);
    Objects.checkIndex(index, degree + 1);
    if (complete) {
      return index;
    }
    return nodeAt[Math.floorMod(positionOf[node] - degree / 2 + index, nodeAt.length)];
  }

  private void checkNode(int node) {
    Objects.checkIndex(node, nodeAt.length);
  }

  private static int[] identity(int numberOfNodes) {
    if (numberOfNodes < 1) {
      throw new IllegalArgumentException("numberOfNodes must be >= 1, was " + numberOfNodes);
    }
    int[] identity = new int[numberOfNodes];
    Arrays.setAll(identity, i -> i);
    return identity;
  }

  private static int[] checkedPermutation(int[] permutation) {
    int n = permutation.length;
    if (n < 1) {
      throw new IllegalArgumentException("permutation must have at least 1 node, was empty");
    }
    int[] copy = permutation.clone();
    boolean[] seen = new boolean[n];
    for (int position = 0; position < n; position++) {
      int node = copy[position];
      if (node < 0 || node >= n) {
        throw new IllegalArgumentException(
            "permutation values must be node ids in [0, "
                + n
                + "), was "
                + node
                + " at position "
                + position);
      }
      if (seen[node]) {
        throw new IllegalArgumentException(
            "permutation must list each node id once, "
                + node
                + " appears again at position "
                + position);
      }
      seen[node] = true;
    }
    return copy;
  }

  private static int checkedDegree(int degree, int numberOfNodes) {
    // Even, so that a node has as many neighbours behind it on the ring as ahead (FCP requires
    // its degree, which counts the self-edge, to be odd).
    if (degree < 0 || degree > numberOfNodes - 1 || degree % 2 != 0) {
      throw new IllegalArgumentException(
          "degree must be even and in [0, numberOfNodes - 1 = "
              + (numberOfNodes - 1)
              + "], was "
              + degree);
    }
    return degree;
  }
}
