package dev.privagg.privacy;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An iterative radix-2 complex FFT and the linear convolution of non-negative sequences built on
 * it, for composing privacy loss distributions (Koskela, Jälkö, Honkela AISTATS 2020).
 *
 * <p>Twiddle factors come from {@link StrictMath}, and Java 17 arithmetic is strict, so a
 * convolution gives the same bits on every JVM and machine: the accountants built on it must decide
 * the same after a restore.
 */
final class Fft {
  /** Below this many multiply-adds a direct convolution is both faster and exact. */
  private static final long DIRECT_LIMIT = 1L << 16;

  /** cos and sin of 2 pi k / n for k < n / 2, by length n; a handful of lengths ever occur. */
  private static final Map<Integer, double[][]> TWIDDLES = new ConcurrentHashMap<>();

  private Fft() {}

  private static double[][] twiddles(int n) {
    double[] cos = new double[n / 2];
    double[] sin = new double[n / 2];
    for (int k = 0; k < n / 2; k++) {
      double angle = 2 * Math.PI * k / n;
      cos[k] = StrictMath.cos(angle);
      sin[k] = StrictMath.sin(angle);
    }
    return new double[][] {cos, sin};
  }

  /**
   * The linear convolution of {@code a} and {@code b} (length {@code a.length + b.length - 1}). FFT
   * round-off leaves entries of order 1e-16 times the largest one, some negative where the true
   * value is 0 or tiny; negative entries are clamped to 0, so the result is a measure again.
   */
  static double[] convolve(double[] a, double[] b) {
    int outLength = a.length + b.length - 1;
    if ((long) a.length * b.length <= DIRECT_LIMIT) {
      double[] out = new double[outLength];
      for (int i = 0; i < a.length; i++) {
        double ai = a[i];
        for (int j = 0; j < b.length; j++) {
          out[i + j] += ai * b[j];
        }
      }
      return out;
    }
    int n = Integer.highestOneBit(outLength - 1) << 1;
    double[] re = new double[n];
    double[] im = new double[n];
    System.arraycopy(a, 0, re, 0, a.length);
    if (a == b) {
      transform(re, im, false);
      for (int k = 0; k < n; k++) {
        double r = re[k];
        double i = im[k];
        re[k] = r * r - i * i;
        im[k] = 2 * r * i;
      }
    } else {
      // Both real inputs in one transform: c = a + i b, A_k = (C_k + conj C_{n-k}) / 2 and
      // B_k = (C_k - conj C_{n-k}) / 2i, so A_k B_k = (C_k^2 - conj(C_{n-k})^2) / 4i.
      System.arraycopy(b, 0, im, 0, b.length);
      transform(re, im, false);
      double[] outRe = new double[n];
      double[] outIm = new double[n];
      for (int k = 0; k < n; k++) {
        int m = (n - k) & (n - 1);
        double cr = re[k];
        double ci = im[k];
        double dr = re[m];
        double di = -im[m];
        double pr = cr * cr - ci * ci - (dr * dr - di * di);
        double pi = 2 * cr * ci - 2 * dr * di;
        // divide by 4i: (pr + i pi) / (4i) = (pi - i pr) / 4
        outRe[k] = pi / 4;
        outIm[k] = -pr / 4;
      }
      re = outRe;
      im = outIm;
    }
    transform(re, im, true);
    double[] out = new double[outLength];
    for (int k = 0; k < outLength; k++) {
      double value = re[k] / n;
      out[k] = value > 0 ? value : 0;
    }
    return out;
  }

  /** In-place FFT of {@code (re, im)}, whose length must be a power of 2; unscaled inverse. */
  static void transform(double[] re, double[] im, boolean inverse) {
    int n = re.length;
    if (Integer.bitCount(n) != 1 || im.length != n) {
      throw new IllegalArgumentException("FFT length must be a power of 2, was " + n);
    }
    for (int i = 1, j = 0; i < n; i++) {
      int bit = n >> 1;
      for (; (j & bit) != 0; bit >>= 1) {
        j ^= bit;
      }
      j ^= bit;
      if (i < j) {
        double t = re[i];
        re[i] = re[j];
        re[j] = t;
        t = im[i];
        im[i] = im[j];
        im[j] = t;
      }
    }
    double[][] twiddles = TWIDDLES.computeIfAbsent(n, Fft::twiddles);
    double[] cos = twiddles[0];
    double[] sin = twiddles[1];
    double sign = inverse ? 1 : -1;
    for (int len = 2; len <= n; len <<= 1) {
      int half = len >> 1;
      int step = n / len;
      for (int start = 0; start < n; start += len) {
        for (int k = 0; k < half; k++) {
          double wr = cos[k * step];
          double wi = sign * sin[k * step];
          int p = start + k;
          int q = p + half;
          double xr = re[q] * wr - im[q] * wi;
          double xi = re[q] * wi + im[q] * wr;
          re[q] = re[p] - xr;
          im[q] = im[p] - xi;
          re[p] += xr;
          im[p] += xi;
        }
      }
    }
  }
}
