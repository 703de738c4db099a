package dev.privagg.client.data;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PartitionerTest {
  private final Datasets.Split digits = Datasets.load("digits", 1);

  @ParameterizedTest
  @ValueSource(doubles = {0.05, 0.5, 100})
  void dirichlet_coversEveryExampleExactlyOnce(double alpha) {
    int[][] parts = Partitioner.dirichlet(digits.train().labels(), 10, 100, alpha, 7);
    assertThat(parts.length).isEqualTo(100);
    int[] all = Arrays.stream(parts).flatMapToInt(Arrays::stream).sorted().toArray();
    assertThat(all).hasSize(digits.train().size());
    for (int i = 0; i < all.length; i++) {
      assertThat(all[i]).isEqualTo(i);
    }
  }

  @Test
  void smallAlpha_skewsLabels_largeAlphaDoesNot() {
    double skewed =
        meanClassesPerClient(Partitioner.dirichlet(digits.train().labels(), 10, 50, 0.05, 3));
    double mixed =
        meanClassesPerClient(Partitioner.dirichlet(digits.train().labels(), 10, 50, 100, 3));
    assertThat(skewed).isLessThan(3);
    assertThat(mixed).isGreaterThan(8);
  }

  @Test
  void iid_coversEveryExampleExactlyOnce_inNearlyEqualShares() {
    int[][] parts = Partitioner.iid(digits.train().size(), 100, 2);
    assertThat(Arrays.stream(parts).flatMapToInt(Arrays::stream).distinct().count())
        .isEqualTo(digits.train().size());
    assertThat(
            Arrays.stream(parts).mapToInt(p -> p.length).max().getAsInt()
                - Arrays.stream(parts).mapToInt(p -> p.length).min().getAsInt())
        .isLessThanOrEqualTo(1);
  }

  @Test
  void shippedDatasets_load() {
    assertThat(digits.train().size() + digits.test().size()).isEqualTo(1797);
    assertThat(digits.train().numFeatures()).isEqualTo(64);
    Datasets.Split cancer = Datasets.load("breast-cancer", 1);
    assertThat(cancer.train().size() + cancer.test().size()).isEqualTo(569);
    assertThat(cancer.train().numFeatures()).isEqualTo(30);
  }

  private double meanClassesPerClient(int[][] parts) {
    int[] labels = digits.train().labels();
    return Arrays.stream(parts)
        .filter(p -> p.length > 0)
        .mapToLong(p -> Arrays.stream(p).map(i -> labels[i]).distinct().count())
        .average()
        .orElse(0);
  }

  @Test
  void fashionMnist_loadsFromDebiansPackage_whenInstalled() {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        java.nio.file.Files.isDirectory(Datasets.FASHION_MNIST),
        "dataset-fashion-mnist is not installed");
    Datasets.Split fashion = Datasets.load("fashion-mnist", 1);
    assertThat(fashion.train().size()).isEqualTo(60_000);
    assertThat(fashion.test().size()).isEqualTo(10_000);
    assertThat(fashion.train().numFeatures()).isEqualTo(784);
    assertThat(Arrays.stream(fashion.test().labels()).distinct().count()).isEqualTo(10);
  }
}
