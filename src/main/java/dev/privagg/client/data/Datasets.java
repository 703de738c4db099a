package dev.privagg.client.data;

import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.GZIPInputStream;

/**
 * The real datasets privagg simulates on: Breast Cancer Wisconsin and Digits (shipped in data/, on
 * the classpath as datasets/...), and Fashion-MNIST when Debian's dataset-fashion-mnist package is
 * installed. Features are scaled to comparable ranges: pixels to [0, 1], the breast cancer
 * measurements to z-scores using the training split's mean and std only.
 */
public final class Datasets {
  /** Where Debian's dataset-fashion-mnist package puts its IDX files. */
  public static final Path FASHION_MNIST = Path.of("/usr/share/datasets/fashion-mnist");

  /** Names accepted by {@link #load}. */
  public static final List<String> NAMES = List.of("digits", "breast-cancer", "fashion-mnist");

  private Datasets() {}

  /** A train/test split. */
  public record Split(Dataset train, Dataset test) {}

  /** Loads {@code name} and splits it (20% test, shuffled by {@code seed}). */
  public static Split load(String name, long seed) {
    return switch (name) {
      case "digits" ->
          split(
              scale(readCsv("digits", "datasets/digits.csv.gz", false, 10), 1 / 16.0),
              0.2,
              seed,
              false);
      case "breast-cancer" ->
          split(readCsv("breast-cancer", "datasets/breast_cancer.csv", true, 2), 0.2, seed, true);
      case "fashion-mnist" -> fashionMnist();
      default ->
          throw new IllegalArgumentException(
              "dataset must be one of " + NAMES + ", was '" + name + "'");
    };
  }

  /**
   * Breast Cancer Wisconsin as recorded, in file order: every patient, the features in their own
   * units (the split that training uses standardizes them).
   */
  public static Dataset breastCancerRaw() {
    return readCsv("breast-cancer", "datasets/breast_cancer.csv", true, 2);
  }

  private static Dataset readCsv(String name, String resource, boolean header, int classes) {
    InputStream raw = Datasets.class.getClassLoader().getResourceAsStream(resource);
    if (raw == null) {
      throw new IllegalStateException(
          "dataset resource "
              + resource
              + " is missing from the classpath (data/ in the repository)");
    }
    try (InputStream in = resource.endsWith(".gz") ? new GZIPInputStream(raw) : raw;
        BufferedReader reader =
            new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      List<double[]> rows = new ArrayList<>();
      List<Integer> labels = new ArrayList<>();
      String line = header ? reader.readLine() : null;
      while ((line = reader.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        String[] parts = line.split(",");
        double[] x = new double[parts.length - 1];
        for (int i = 0; i < x.length; i++) {
          x[i] = Double.parseDouble(parts[i]);
        }
        rows.add(x);
        labels.add(Integer.parseInt(parts[parts.length - 1].trim()));
      }
      return new Dataset(
          name,
          rows.toArray(new double[0][]),
          labels.stream().mapToInt(Integer::intValue).toArray(),
          classes);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + resource, e);
    }
  }

  private static Dataset scale(Dataset d, double factor) {
    for (double[] row : d.features()) {
      for (int i = 0; i < row.length; i++) {
        row[i] *= factor;
      }
    }
    return d;
  }

  private static Split split(Dataset all, double testFraction, long seed, boolean standardize) {
    int[] order = permutation(all.size(), new SplittableRandom(seed));
    int test = (int) Math.round(all.size() * testFraction);
    int[] testIdx = java.util.Arrays.copyOfRange(order, 0, test);
    int[] trainIdx = java.util.Arrays.copyOfRange(order, test, order.length);
    Dataset train = copy(all.subset(trainIdx));
    Dataset testSet = copy(all.subset(testIdx));
    if (standardize) {
      int d = train.numFeatures();
      double[] mean = new double[d];
      double[] sd = new double[d];
      for (double[] row : train.features()) {
        for (int i = 0; i < d; i++) {
          mean[i] += row[i] / train.size();
        }
      }
      for (double[] row : train.features()) {
        for (int i = 0; i < d; i++) {
          sd[i] += (row[i] - mean[i]) * (row[i] - mean[i]) / train.size();
        }
      }
      for (Dataset set : List.of(train, testSet)) {
        for (double[] row : set.features()) {
          for (int i = 0; i < d; i++) {
            row[i] = (row[i] - mean[i]) / Math.max(Math.sqrt(sd[i]), 1e-12);
          }
        }
      }
    }
    return new Split(train, testSet);
  }

  private static Dataset copy(Dataset d) {
    double[][] x = new double[d.size()][];
    for (int i = 0; i < x.length; i++) {
      x[i] = d.features()[i].clone();
    }
    return new Dataset(d.name(), x, d.labels().clone(), d.numClasses());
  }

  /** A uniformly random permutation of 0..n-1 (Fisher-Yates). */
  public static int[] permutation(int n, SplittableRandom random) {
    int[] p = new int[n];
    for (int i = 0; i < n; i++) {
      p[i] = i;
    }
    for (int i = n - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
    return p;
  }

  private static Split fashionMnist() {
    if (!Files.isDirectory(FASHION_MNIST)) {
      throw new IllegalArgumentException(
          "fashion-mnist needs Debian's dataset-fashion-mnist package (apt-get install dataset-fashion-mnist); "
              + FASHION_MNIST
              + " does not exist");
    }
    return new Split(
        idx("fashion-mnist", "train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
        idx("fashion-mnist", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"));
  }

  private static Dataset idx(String name, String images, String labels) {
    try (DataInputStream img = new DataInputStream(open(FASHION_MNIST.resolve(images)));
        DataInputStream lab = new DataInputStream(open(FASHION_MNIST.resolve(labels)))) {
      if (img.readInt() != 0x803 || lab.readInt() != 0x801) {
        throw new IllegalStateException("not IDX files: " + images + ", " + labels);
      }
      int n = img.readInt();
      int pixels = img.readInt() * img.readInt();
      lab.readInt();
      double[][] x = new double[n][pixels];
      int[] y = new int[n];
      byte[] buffer = new byte[pixels];
      for (int i = 0; i < n; i++) {
        img.readFully(buffer);
        for (int p = 0; p < pixels; p++) {
          x[i][p] = (buffer[p] & 0xff) / 255.0;
        }
        y[i] = lab.readUnsignedByte();
      }
      return new Dataset(name, x, y, 10);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read Fashion-MNIST from " + FASHION_MNIST, e);
    }
  }

  private static InputStream open(Path plain) throws IOException {
    Path gz = Path.of(plain + ".gz");
    if (Files.exists(gz)) {
      return new GZIPInputStream(Files.newInputStream(gz));
    }
    return Files.newInputStream(plain);
  }
}
