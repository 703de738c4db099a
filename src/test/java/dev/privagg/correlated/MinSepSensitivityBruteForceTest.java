package dev.privagg.correlated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The min-separation sensitivity and the streaming noise against brute force. */
class MinSepSensitivityBruteForceTest {
  private static List<BufferedToeplitz> blts() {
    List<BufferedToeplitz> out = new ArrayList<>();
    out.add(BufferedToeplitz.of(new double[] {0.9, 0.4}, new double[] {0.2, 0.15}));
    out.add(BufferedToeplitz.of(new double[] {0.999}, new double[] {1.0}));
    out.add(BufferedToeplitz.of(new double[] {0.5}, new double[] {0.999}));
    out.add(BufferedToeplitz.of(new double[] {0.99, 0.5, 0.1}, new double[] {0.3, 0.3, 0.4}));
    out.add(BufferedToeplitz.of(new double[] {0.01}, new double[] {0.001}));
    Random random = new Random(42);
    while (out.size() < 25) {
      int m = 1 + random.nextInt(4);
      double[] t = new double[m];
      double[] w = new double[m];
      double budget = random.nextDouble();
      for (int j = 0; j < m; j++) {
        t[j] = 0.02 + 0.97 * random.nextDouble();
        w[j] = budget * random.nextDouble() / m + 1e-6;
      }
      try {
        BufferedToeplitz c = BufferedToeplitz.of(t, w);
        c.requireValidForMechanism();
        out.add(c);
      } catch (IllegalArgumentException e) {
        // skip
      }
    }
    return out;
  }

  /** Max over participation patterns (|S| <= k, consecutive gaps >= b) of ||C 1_S||^2. */
  private static double bruteForce(double[] c, int n, int b, int k) {
    double best = 0;
    for (int mask = 1; mask < (1 << n); mask++) {
      if (Integer.bitCount(mask) > k) {
        continue;
      }
      int last = -1;
      boolean ok = true;
      for (int i = 0; i < n && ok; i++) {
        if ((mask & (1 << i)) != 0) {
          if (last >= 0 && i - last < b) {
            ok = false;
          }
          last = i;
        }
      }
      if (!ok) {
        continue;
      }
      double sum = 0;
      for (int row = 0; row < n; row++) {
        double v = 0;
        for (int col = 0; col <= row; col++) {
          if ((mask & (1 << col)) != 0) {
            v += c[row - col];
          }
        }
        sum += v * v;
      }
      best = Math.max(best, sum);
    }
    return best;
  }

  @Test
  void sensitivityAndPrefixSensitivity_matchBruteForceOverAllParticipationPatterns() {
    for (BufferedToeplitz blt : blts()) {
      for (int n = 1; n <= 11; n++) {
        double[] c = blt.toeplitzCoefficients(n);
        for (int b = 1; b <= n; b++) {
          for (int k = 1; k <= n; k++) {
            BltPlan plan = BltPlan.of(new ParticipationSchema(n, b, k), blt);
            double brute = bruteForce(c, n, b, k);
            assertThat(plan.sensitivity() * plan.sensitivity())
                .as("%s n=%d b=%d k=%d", blt, n, b, k)
                .isCloseTo(brute, within(1e-9 * brute));
            for (int t = 1; t <= n; t++) {
              double bruteT = bruteForce(c, t, b, k);
              double s = plan.sensitivityOfFirstRounds(t);
              assertThat(s * s)
                  .as("%s n=%d b=%d k=%d t=%d", blt, n, b, k, t)
                  .isCloseTo(bruteT, within(1e-9 * bruteT));
            }
          }
        }
      }
    }
  }

  @Test
  void prefixSensitivity_neverShrinksWithT_soTheChargeNeverThrows() {
    for (BufferedToeplitz blt : blts()) {
      for (int[] bk : new int[][] {{1, 1}, {1, 5}, {3, 2}, {7, 3}, {50, 10}, {1, 2000}}) {
        int n = 2000;
        BltPlan plan = BltPlan.of(new ParticipationSchema(n, bk[0], bk[1]), blt);
        double previous = 0;
        for (int t = 1; t <= n; t++) {
          double s = plan.sensitivityOfFirstRounds(t);
          assertThat(s)
              .as("%s b=%d k=%d t=%d", blt, bk[0], bk[1], t)
              .isGreaterThanOrEqualTo(previous);
          previous = s;
        }
        assertThat(previous).isEqualTo(plan.sensitivity());
      }
    }
  }

  @Test
  void streamingNoise_isCInverseZ() {
    Random random = new Random(1);
    int n = 200;
    for (BufferedToeplitz blt : blts()) {
      double[] inv = Toeplitz.inverseCoefficients(blt.toeplitzCoefficients(n), n);
      double[] z = new double[n];
      for (int t = 0; t < n; t++) {
        z[t] = random.nextGaussian();
      }
      double[][] buffers = new double[blt.buffers()][1];
      for (int t = 0; t < n; t++) {
        double[] v = {z[t]};
        BufferedToeplitz.correlate(blt, buffers, v);
        double dense = 0;
        for (int s = 0; s <= t; s++) {
          dense += inv[t - s] * z[s];
        }
        assertThat(v[0])
            .as("%s t=%d", blt, t)
            .isCloseTo(dense, within(1e-9 * (1 + Math.abs(dense))));
      }
    }
  }
}
