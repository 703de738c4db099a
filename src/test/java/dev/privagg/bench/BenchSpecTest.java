package dev.privagg.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.spec.JobSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The job spec each setting writes, read back as the job reads it. */
class BenchSpecTest {
  @TempDir Path dir;

  @Test
  void bltSetting_writesACorrelatedSpec_withKAsLargeAsN_andAKeyedSourceBesideIt() throws Exception {
    BenchSetting setting =
        new BenchSetting(8_000_000, 10, 2, 1000, StateBackendKind.HASHMAP, NoiseMechanismKind.BLT);
    JobSpec spec = BenchRunner.writeSpec(setting, dir.resolve("spec.yaml"));

    assertThat(spec.jobId()).isEqualTo("bench-d8000000-m10-p2-c1000-hashmap-blt");
    assertThat(spec.correlated()).isTrue();
    JobSpec.Privacy privacy = spec.privacy();
    assertThat(privacy.plannedRounds()).isEqualTo(1_000_000);
    assertThat(privacy.correlated().maxParticipations()).isEqualTo(1_000_000);
    assertThat(privacy.correlated().minSeparation()).isEqualTo(1);
    assertThat(privacy.correlated().theta()).containsExactly(0.99, 0.6);
    assertThat(privacy.correlated().omega()).containsExactly(0.05, 0.3);
    assertThat(privacy.correlated().noiseBlocks()).isEqualTo(16);
    assertThat(privacy.accountant()).isEqualTo("rdp");
    assertThat(privacy.budgetEpsilon()).isInfinite();
    assertThat(spec.rounds().expectedClients()).isEqualTo(10);
    assertThat(spec.rounds().nextRoundAtEarlyClose()).isTrue();

    Path key = dir.resolve(BenchRunner.NOISE_KEY_FILE);
    assertThat(privacy.noise().source()).isEqualTo("keyed");
    assertThat(Path.of(privacy.noise().keyFile())).isEqualTo(key.toAbsolutePath());
    assertThat(Files.readString(key).trim()).matches("[0-9a-f]{64}");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(key)))
        .isEqualTo("rw-------");
  }

  @Test
  void independentSetting_writesTheSpecAsBefore_withSecureNoiseAndNoKey() throws Exception {
    JobSpec spec = BenchRunner.writeSpec(new BenchSetting(10_000, 10), dir.resolve("spec.yaml"));

    assertThat(spec.jobId()).isEqualTo("bench-d10000-m10-p1-c1000-hashmap");
    assertThat(spec.correlated()).isFalse();
    assertThat(spec.privacy().correlated()).isNull();
    assertThat(spec.privacy().noise().source()).isEqualTo("secure");
    assertThat(dir.resolve(BenchRunner.NOISE_KEY_FILE)).doesNotExist();
  }

  @Test
  void bltSetting_getsANewKeyEachRun() throws Exception {
    BenchSetting setting =
        new BenchSetting(1000, 5, 1, 1000, StateBackendKind.HASHMAP, NoiseMechanismKind.BLT);
    BenchRunner.writeSpec(setting, dir.resolve("spec.yaml"));
    String first = Files.readString(dir.resolve(BenchRunner.NOISE_KEY_FILE));
    BenchRunner.writeSpec(setting, dir.resolve("spec.yaml"));
    assertThat(Files.readString(dir.resolve(BenchRunner.NOISE_KEY_FILE))).isNotEqualTo(first);
  }

  @Test
  void mechanism_isParsedByItsSpecName_andAnUnknownOneIsRefused() {
    assertThat(NoiseMechanismKind.of(" BLT")).isEqualTo(NoiseMechanismKind.BLT);
    assertThat(NoiseMechanismKind.of("independent")).isEqualTo(NoiseMechanismKind.INDEPENDENT);
    assertThatThrownBy(() -> NoiseMechanismKind.of("laplace"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("mechanism must be independent or blt, was 'laplace'");
  }
}
