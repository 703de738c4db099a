package dev.privagg.audit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The seeded draws of the one-shot reference tests (audit/one-shot-epe-samples.csv): numpy's
 * default_rng(0xBAD5EED) standard normals z and uniforms u, from which the tests' samples are
 * {@code loc + scale * z} and {@code low + (high - low) * u}, bit for bit as numpy computes them.
 */
final class OneShotSamples {
  private static final double[] Z;
  private static final double[] U;

  static {
    List<Double> z = new ArrayList<>();
    List<Double> u = new ArrayList<>();
    try (InputStream in =
            OneShotSamples.class.getResourceAsStream("/audit/one-shot-epe-samples.csv");
        BufferedReader reader =
            new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = reader.readLine()) != null) {
        if (line.startsWith("#") || line.startsWith("i,")) {
          continue;
        }
        String[] cells = line.split(",", -1);
        z.add(Double.parseDouble(cells[1]));
        if (!cells[2].isEmpty()) {
          u.add(Double.parseDouble(cells[2]));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Z = z.stream().mapToDouble(Double::doubleValue).toArray();
    U = u.stream().mapToDouble(Double::doubleValue).toArray();
  }

  private OneShotSamples() {}

  /** The first rng.normal(loc, scale, 100) of a fresh generator. */
  static double[] firstNormals(double loc, double scale) {
    return affine(0, loc, scale);
  }

  /** The second rng.normal(loc, scale, 100) of a fresh generator. */
  static double[] secondNormals(double loc, double scale) {
    return affine(100, loc, scale);
  }

  /** The first rng.uniform(low, high, n) of a fresh generator. */
  static double[] uniforms(double low, double high, int n) {
    double[] out = new double[n];
    for (int i = 0; i < n; i++) {
      out[i] = low + (high - low) * U[i];
    }
    return out;
  }

  private static double[] affine(int from, double loc, double scale) {
    double[] out = new double[100];
    for (int i = 0; i < 100; i++) {
      out[i] = loc + scale * Z[from + i];
    }
    return out;
  }
}
