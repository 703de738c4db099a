package dev.privagg.secagg;

import dev.privagg.secagg.UnmaskShares.RevealedShare;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;

/**
 * The job's side of phase 4: from the shares the survivors reveal, it reconstructs the self-mask
 * seed {@code b_u} of every client u in U3 and the mask private key {@code s_sk_w} of every client
 * w in U2 \ U3, checks each against what the client advertised (the commitment, the public key),
 * and derives the {@link MaskCorrection}: for each u in U3 its self-mask with sign -1, and for each
 * dropped w and each neighbour u of w in U3 whose pair with w is not cut the pair's pairwise mask
 * with sign {@code -sign(u, w)} (u masked with w: both confirmed, in U2, and not cut).
 *
 * <p>Clients may lie in phase 4. A secret is reconstructed from t shares of its holders, sorted by
 * holder; if the result fails its check, the next window of t consecutive holders is tried, then
 * random t-subsets. When a secret is found after a failed try, every other share of it is checked
 * against the polynomial (with t - 1 shares of the subset that passed), and a holder whose share is
 * not on it is a proven liar: its shares of the later secrets are not used. The search of a whole
 * round is bounded: after each secret's first try, at most {@code 2 u + 100 + k} further subsets in
 * all for u secrets (k the largest neighbourhood), and none once a secret is lost (the round has no
 * sum then anyway), since each subset costs an interpolation of O(t^2) products mod l and the job
 * runs it at the round's deadline. The targets that are not recovered are reported, and no
 * correction is made.
 */
public final class Unmasking {
  /** Random t-subsets tried per secret after the windows fail. */
  static final int RANDOM_SUBSETS = 100;

  private Unmasking() {}

  /**
   * The outcome: a correction when every secret was recovered; otherwise the targets that were not
   * (too few shares, or no window of t consistent ones). {@code provenLiars}: the holders whose
   * share was off the polynomial of a secret that passed its check.
   */
  public record Result(
      Optional<MaskCorrection> correction,
      List<Integer> unrecoveredSelfMaskSeeds,
      List<Integer> unrecoveredMaskKeys,
      List<Integer> provenLiars) {
    public Result {
      unrecoveredSelfMaskSeeds = List.copyOf(unrecoveredSelfMaskSeeds);
      unrecoveredMaskKeys = List.copyOf(unrecoveredMaskKeys);
      provenLiars = List.copyOf(provenLiars);
    }
  }

  /**
   * @param roster every admitted client's advertised keys, in index order
   * @param neighbourhoods the neighbourhood of each client, itself included (symmetric)
   * @param threshold t, the shares that determine a secret
   * @param shared U2, the confirmed clients ({@link ShareConfirmation})
   * @param cuts the confirmed pairs that do not mask with each other, {@code {lo, hi}} each
   * @param maskedInput U3, the clients whose masked input is in the sum (within U2)
   * @param responses the phase-4 message of each responding client, by its index
   * @param random picks subsets when lies spoil the windows: a CSPRNG in the job, so that liars
   *     cannot foresee them
   * @throws IllegalArgumentException if the graph or the sets are malformed (the job's own data,
   *     not the clients')
   */
  public static Result reconstruct(
      RoundContext ctx,
      List<AdvertisedKeys> roster,
      int[][] neighbourhoods,
      int threshold,
      int[] shared,
      int[][] cuts,
      int[] maskedInput,
      Map<Integer, UnmaskShares> responses,
      RandomGenerator random) {
    int n = roster.size();
    int[][] sortedCuts = pairs("cuts", cuts, n);
    validateGraph(neighbourhoods, n);
    if (threshold < 1) {
      throw new IllegalArgumentException("threshold must be >= 1, was " + threshold);
    }
    boolean[] inShared = members("shared", shared, n);
    boolean[] inMaskedInput = members("maskedInput", maskedInput, n);
    for (int u : maskedInput) {
      if (!inShared[u]) {
        throw new IllegalArgumentException(
            "maskedInput (U3) must be within shared (U2), but " + u + " is not");
      }
    }

    List<MaskCorrection.Term> terms = new ArrayList<>();
    List<Integer> unrecoveredSeeds = new ArrayList<>();
    List<Integer> unrecoveredKeys = new ArrayList<>();
    int largestNeighbourhood = 0;
    for (int[] neighbourhood : neighbourhoods) {
      largestNeighbourhood = Math.max(largestNeighbourhood, neighbourhood.length);
    }
    Search search =
        new Search(
            threshold,
            random,
            2L * shared.length + RANDOM_SUBSETS + largestNeighbourhood,
            new boolean[n]);
    for (int u : sorted(maskedInput)) {
      List<Shamir.Share> shares =
          search.trusted(sharesOf(u, neighbourhoods[u], responses, UnmaskShares::selfMaskShares));
      byte[] commitment = roster.get(u).selfMaskCommitment();
      Optional<byte[]> seed =
          search.recover(shares, b -> Arrays.equals(DerivedKeys.selfMaskCommitment(b), commitment));
      if (seed.isPresent()) {
        terms.add(new MaskCorrection.Term(DerivedKeys.selfMaskKey(ctx, seed.get(), u), -1));
      } else {
        unrecoveredSeeds.add(u);
      }
    }
    // Each survivor's mask key decoded once: a dropped client's every partner needs it.
    Map<Integer, Edwards25519.Point> maskKeys = new HashMap<>();
    for (int w : sorted(shared)) {
      if (inMaskedInput[w]) {
        continue;
      }
      List<Shamir.Share> shares =
          search.trusted(sharesOf(w, neighbourhoods[w], responses, UnmaskShares::maskKeyShares));
      byte[] publicKey = roster.get(w).maskPublicKey();
      Optional<byte[]> maskKey = search.recover(shares, s -> isMaskKeyOf(s, publicKey));
      if (maskKey.isEmpty()) {
        unrecoveredKeys.add(w);
        continue;
      }
      List<MaskCorrection.Term> pairwise = new ArrayList<>();
      for (int u : neighbourhoods[w]) {
        if (u != w && inMaskedInput[u] && !ShareConfirmation.isCut(sortedCuts, u, w)) {
          Edwards25519.Point keyOfU = maskKeys.computeIfAbsent(u, v -> pointOrNull(roster, v));
          if (keyOfU == null) {
            pairwise = null; // a roster key that is no point (the job admits none): no mask
            break;
          }
          byte[] key = DerivedKeys.pairwiseMaskKey(ctx, maskKey.get(), w, keyOfU, u);
          pairwise.add(new MaskCorrection.Term(key, u < w ? -1 : 1));
        }
      }
      if (pairwise == null) {
        unrecoveredKeys.add(w);
      } else {
        terms.addAll(pairwise);
      }
    }
    boolean complete = unrecoveredSeeds.isEmpty() && unrecoveredKeys.isEmpty();
    List<Integer> liars = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      if (search.liars[i]) {
        liars.add(i);
      }
    }
    return new Result(
        complete ? Optional.of(new MaskCorrection(terms)) : Optional.empty(),
        unrecoveredSeeds,
        unrecoveredKeys,
        liars);
  }

  /** Roster entry {@code u}'s mask public key, decoded, or null if it is no valid point. */
  private static Edwards25519.Point pointOrNull(List<AdvertisedKeys> roster, int u) {
    try {
      return Edwards25519.decode("maskPublicKey", roster.get(u).maskPublicKey());
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** Whether {@code secret} is the mask private key of {@code publicKey} (0 is no key). */
  private static boolean isMaskKeyOf(byte[] secret, byte[] publicKey) {
    return Edwards25519.scalar("mask key", secret).signum() != 0
        && Arrays.equals(MaskKeys.publicKeyOf(secret), publicKey);
  }

  /**
   * The shares of {@code target}'s secret of one kind, one per responding neighbour (its first, if
   * it sent more), at {@code x = holder + 1}, sorted by holder.
   */
  private static List<Shamir.Share> sharesOf(
      int target,
      int[] neighbourhood,
      Map<Integer, UnmaskShares> responses,
      Function<UnmaskShares, List<RevealedShare>> kind) {
    List<Shamir.Share> shares = new ArrayList<>();
    for (int holder : sorted(neighbourhood)) {
      UnmaskShares response = responses.get(holder);
      if (response == null) {
        continue;
      }
      kind.apply(response).stream()
          .filter(share -> share.index() == target)
          .findFirst()
          .ifPresent(share -> shares.add(new Shamir.Share(holder + 1, share.share())));
    }
    return shares;
  }

  /**
   * The search for a round's secrets: the subsets it may still try beyond each secret's first, and
   * the holders proven to have lied.
   */
  private static final class Search {
    private final int threshold;
    private final RandomGenerator random;
    private long subsetsLeft;
    private final boolean[] liars;

    Search(int threshold, RandomGenerator random, long subsets, boolean[] liars) {
      this.threshold = threshold;
      this.random = random;
      this.subsetsLeft = subsets;
      this.liars = liars;
    }

    /** {@code shares} without those of proven liars (a share's holder is {@code x - 1}). */
    List<Shamir.Share> trusted(List<Shamir.Share> shares) {
      List<Shamir.Share> out = new ArrayList<>(shares.size());
      for (Shamir.Share share : shares) {
        if (!liars[share.x() - 1]) {
          out.add(share);
        }
      }
      return out;
    }

    /**
     * A secret that passes {@code check}: from the first t shares, else (within the round's bound)
     * from another window of t consecutive shares or a random t-subset.
     */
    Optional<byte[]> recover(List<Shamir.Share> shares, Predicate<byte[]> check) {
      int m = shares.size();
      if (m < threshold) {
        return Optional.empty();
      }
      Optional<byte[]> first = tryShares(shares.subList(0, threshold), check);
      if (first.isPresent()) {
        return first;
      }
      for (int start = 1; start + threshold <= m && take(); start++) {
        List<Shamir.Share> window = shares.subList(start, start + threshold);
        Optional<byte[]> secret = tryShares(window, check);
        if (secret.isPresent()) {
          findLiars(shares, window, secret.get());
          return secret;
        }
      }
      if (m > threshold) {
        List<Shamir.Share> pool = new ArrayList<>(shares);
        for (int attempt = 0; attempt < RANDOM_SUBSETS && take(); attempt++) {
          // A partial Fisher-Yates shuffle puts a uniform t-subset at the front.
          for (int i = 0; i < threshold; i++) {
            Collections.swap(pool, i, i + random.nextInt(m - i));
          }
          List<Shamir.Share> subset = pool.subList(0, threshold);
          Optional<byte[]> secret = tryShares(subset, check);
          if (secret.isPresent()) {
            findLiars(shares, List.copyOf(subset), secret.get());
            return secret;
          }
        }
      }
      // Lost: the round has no sum, so no later secret is worth more than its first try.
      subsetsLeft = 0;
      return Optional.empty();
    }

    private boolean take() {
      if (subsetsLeft <= 0) {
        return false;
      }
      subsetsLeft--;
      return true;
    }

    /**
     * Marks the holders of the shares that are not on the polynomial through {@code good} (t shares
     * that gave {@code secret}): t - 1 of them and such a share give another secret. The first
     * subset tried failed, so at least one liar is found each time this runs.
     */
    private void findLiars(List<Shamir.Share> shares, List<Shamir.Share> good, byte[] secret) {
      java.util.Set<Integer> used = new java.util.HashSet<>();
      good.forEach(share -> used.add(share.x()));
      List<Shamir.Share> probe = new ArrayList<>(good.subList(1, threshold));
      probe.add(null);
      for (Shamir.Share share : shares) {
        if (used.contains(share.x()) || !take()) {
          continue;
        }
        probe.set(threshold - 1, share);
        Optional<byte[]> other = tryShares(probe, b -> Arrays.equals(b, secret));
        if (other.isEmpty()) {
          liars[share.x() - 1] = true;
        }
      }
    }
  }

  private static Optional<byte[]> tryShares(List<Shamir.Share> shares, Predicate<byte[]> check) {
    try {
      byte[] secret = Shamir.reconstruct(shares, shares.size());
      return check.test(secret) ? Optional.of(secret) : Optional.empty();
    } catch (IllegalArgumentException malformedOrInconsistent) {
      // A lying or malformed share among these: the caller tries others.
      return Optional.empty();
    }
  }

  /**
   * Checks the neighbourhoods in memory of the graph itself (a roster of a million has a few
   * hundred MB of it at most), never a table of n by n.
   */
  private static void validateGraph(int[][] neighbourhoods, int n) {
    if (neighbourhoods.length != n) {
      throw new IllegalArgumentException(
          "neighbourhoods must number the roster's "
              + n
              + " clients, were "
              + neighbourhoods.length);
    }
    int[][] sorted = new int[n][];
    for (int i = 0; i < n; i++) {
      int[] nodes = sorted(neighbourhoods[i]);
      for (int j = 0; j < nodes.length; j++) {
        if (!(nodes[j] >= 0 && nodes[j] < n) || (j > 0 && nodes[j] == nodes[j - 1])) {
          throw new IllegalArgumentException(
              "neighbourhoods["
                  + i
                  + "] must hold distinct roster indices in [0, "
                  + n
                  + "), found "
                  + nodes[j]);
        }
      }
      if (Arrays.binarySearch(nodes, i) < 0) {
        throw new IllegalArgumentException("neighbourhoods[" + i + "] must include " + i);
      }
      sorted[i] = nodes;
    }
    for (int i = 0; i < n; i++) {
      for (int j : sorted[i]) {
        if (Arrays.binarySearch(sorted[j], i) < 0) {
          throw new IllegalArgumentException(
              "neighbourhoods must be symmetric, but "
                  + j
                  + " is in that of "
                  + i
                  + " and not back");
        }
      }
    }
  }

  /**
   * {@code indices} as membership flags over a roster of {@code n}.
   *
   * @throws IllegalArgumentException if an index repeats or lies outside the roster
   */
  static boolean[] members(String name, int[] indices, int n) {
    boolean[] in = new boolean[n];
    for (int i : indices) {
      if (!(i >= 0 && i < n) || in[i]) {
        throw new IllegalArgumentException(
            name + " must hold distinct roster indices in [0, " + n + "), found " + i);
      }
      in[i] = true;
    }
    return in;
  }

  /**
   * {@code pairs} as sorted {@code {lo, hi}} pairs of distinct roster indices.
   *
   * @throws IllegalArgumentException if a pair is not two distinct indices in the roster, or
   *     repeats
   */
  static int[][] pairs(String name, int[][] pairs, int n) {
    int[][] out = new int[pairs.length][];
    for (int i = 0; i < pairs.length; i++) {
      int[] p = pairs[i];
      if (p == null
          || p.length != 2
          || p[0] == p[1]
          || !(p[0] >= 0 && p[0] < n && p[1] >= 0 && p[1] < n)) {
        throw new IllegalArgumentException(
            name
                + " must hold pairs of two distinct roster indices in [0, "
                + n
                + "), found "
                + Arrays.toString(p));
      }
      out[i] = new int[] {Math.min(p[0], p[1]), Math.max(p[0], p[1])};
    }
    Arrays.sort(
        out, (a, b) -> a[0] != b[0] ? Integer.compare(a[0], b[0]) : Integer.compare(a[1], b[1]));
    for (int i = 1; i < out.length; i++) {
      if (Arrays.equals(out[i], out[i - 1])) {
        throw new IllegalArgumentException(name + " repeats the pair " + Arrays.toString(out[i]));
      }
    }
    return out;
  }

  static int[] sorted(int[] indices) {
    int[] copy = indices.clone();
    Arrays.sort(copy);
    return copy;
  }
}
