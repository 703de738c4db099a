package dev.privagg.job.combine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.job.ledger.Deployment;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.NoiseStream;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class NoiseSourcesTest {
  private static final String WHERE = "job j: environment variable K (privacy.noise.keyEnv)";
  private static final String HOW =
      "; generate one with `openssl rand -hex 32` or `head -c 32 /dev/urandom | base64`";

  /** Bytes 0..31, as hex and as base64 (what `openssl rand -hex 32` and `base64` print). */
  private static final byte[] KEY = HexFormat.of().parseHex(hex(32));

  private static final String KEY_BASE64 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

  @ParameterizedTest
  @ValueSource(
      strings = {
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
        "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F\n",
        "  000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\r\n",
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\n",
        "AAECAwQFBgcICQoLDA0ODxAR\nEhMUFRYXGBkaGxwdHh8=\n", // wrapped, as base64 -w prints it
      })
  void decodeSecret_acceptsHexAndBase64OfAtLeast32Bytes_ignoringWhitespace(String text) {
    assertThat(NoiseSources.decodeSecret(WHERE, text)).isEqualTo(KEY);
  }

  @Test
  void decodeSecret_acceptsUrlSafeBase64_andLongerKeys() {
    byte[] urlSafe =
        NoiseSources.decodeSecret(WHERE, "yMnKy8zNzs_Q0dLT1NXW19jZ2tvc3d7f4OHi4-Tl5uc=");
    assertThat(urlSafe).hasSize(32).startsWith((byte) 200);
    assertThat(NoiseSources.decodeSecret(WHERE, hex(48))).hasSize(48);
    assertThat(
            NoiseSources.decodeSecret(
                WHERE, "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4v"))
        .hasSize(48);
  }

  @Test
  void decodeSecret_refusesShortKeys_sayingHowToGenerateOne() {
    String shortHex = hex(31);
    assertThatThrownBy(() -> NoiseSources.decodeSecret(WHERE, shortHex))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            WHERE
                + " must hold a noise key of at least 32 bytes as hex (64+ hex digits) or base64,"
                + " was 62 hex digits (31 bytes)"
                + HOW);
    assertThatThrownBy(
            () -> NoiseSources.decodeSecret(WHERE, "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHg=="))
        .hasMessageEndingWith("was base64 of 31 bytes" + HOW);
    assertThatThrownBy(() -> NoiseSources.decodeSecret(WHERE, hex(32).substring(1)))
        .hasMessageEndingWith("was 63 hex digits, an odd count" + HOW);
  }

  @Test
  void decodeSecret_refusesPassphrasesAndMalformedBase64_withoutPrintingThem() {
    String passphrase = "correct horse battery staple, long enough to fill 32 bytes";
    assertThatThrownBy(() -> NoiseSources.decodeSecret(WHERE, passphrase))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageEndingWith(
            "was 49 characters (whitespace ignored) that are neither hex nor base64 (a passphrase?)"
                + HOW)
        .message()
        .doesNotContain("horse");
    // The last character before the padding carries bits that must be zero.
    String nonCanonical = KEY_BASE64.replace("Hh8=", "Hh9=");
    assertThatThrownBy(() -> NoiseSources.decodeSecret(WHERE, nonCanonical))
        .hasMessageEndingWith("was 44 characters that are not canonical base64" + HOW)
        .message()
        .doesNotContain("Hh9");
    assertThatThrownBy(() -> NoiseSources.decodeSecret(WHERE, KEY_BASE64 + "="))
        .hasMessageEndingWith("was 45 characters that are not valid base64" + HOW);
    assertThatThrownBy(() -> NoiseSources.decodeSecret(WHERE, " \n"))
        .hasMessageEndingWith("was empty" + HOW);
  }

  @Test
  void keyFile_holdingHexWithANewline_givesTheKeyedSourceOfItsBytes(@TempDir Path dir)
      throws Exception {
    Path file = dir.resolve("noise.key");
    Files.writeString(file, hex(32) + "\n");
    NoiseSource source = NoiseSources.forSpec(spec("keyFile: " + file), name -> null);
    assertThat(source.kind()).isEqualTo("keyed");
    assertThat(head(source.forRound("j", 3)))
        .isEqualTo(head(NoiseSource.keyed(KEY).forRound("j", 3)));
  }

  @Test
  void keyFile_holdingRawBytesOrMissing_isRefused(@TempDir Path dir) throws Exception {
    Path raw = dir.resolve("raw.key");
    Files.write(raw, KEY);
    assertThatThrownBy(() -> NoiseSources.forSpec(spec("keyFile: " + raw), name -> null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("job j: privacy.noise.keyFile " + raw + " must hold a noise key");
    Path missing = dir.resolve("missing.key");
    assertThatThrownBy(() -> NoiseSources.forSpec(spec("keyFile: " + missing), name -> null))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("job j: privacy.noise.keyFile " + missing + " cannot be read");
  }

  @Test
  void checkVisibleSecrets_refusesAWeakKeyFileHere_andLeavesAbsentOnesToTheTaskManagers(
      @TempDir Path dir) throws Exception {
    Path weak = dir.resolve("weak.key");
    Files.writeString(weak, "correct horse battery staple");
    assertThatThrownBy(() -> NoiseSources.checkVisibleSecrets(List.of(spec("keyFile: " + weak))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must hold a noise key of at least 32 bytes");
    NoiseSources.checkVisibleSecrets(List.of(spec("keyFile: " + dir.resolve("only-on-tms.key"))));
  }

  /**
   * Recreated topics are a new deployment with a fresh nonce: keyed noise must differ there (else a
   * reader who kept a round's old model subtracts its noise from the new one), and stay the same
   * within a deployment (replays release the same bytes).
   */
  @Test
  void keyedNoise_mixesTheDeploymentNonce_sameWithinADeployment_otherAcrossThem() {
    JobSpec spec = spec("keyEnv: K");
    java.util.function.UnaryOperator<String> env = Map.of("K", KEY_BASE64)::get;
    String first = Deployment.fresh();
    String second = Deployment.fresh();
    assertThat(first).matches("[0-9a-f]{32}").isNotEqualTo(second);
    assertThat(Deployment.isNonce(first)).isTrue();
    assertThat(Deployment.isNonce("not-a-nonce")).isFalse();
    double[] round1 = head(NoiseSources.forSpec(spec, first, env).forRound("j", 1));
    assertThat(head(NoiseSources.forSpec(spec, first, env).forRound("j", 1))).isEqualTo(round1);
    assertThat(head(NoiseSources.forSpec(spec, second, env).forRound("j", 1))).isNotEqualTo(round1);
    // The derived key is HMAC-SHA256(secret, "privagg/deployment/" + nonce) (RFC 2104), as
    // Python's hmac module computes it; a change would re-noise every running deployment.
    assertThat(
            HexFormat.of().formatHex(Deployment.noiseKey(KEY, "00112233445566778899aabbccddeeff")))
        .isEqualTo("c9e9a2792ee7e8f52eef721f3f58c595c7b51ae13761a7b1c177b150492b992a");
    assertThat(head(NoiseSources.forSpec(spec, first, env).forRound("j", 1)))
        .isEqualTo(head(NoiseSource.keyed(Deployment.noiseKey(KEY, first)).forRound("j", 1)));
  }

  @Test
  void seededNoise_staysReproducibleAcrossDeployments() {
    JobSpec seeded =
        JobSpecReader.parse(
            "t",
            """
            jobId: j
            model:
              tensors:
                - {name: w, shape: [2]}
            rounds: {timeout: 2s, expectedClients: 2}
            privacy:
              clipNorm: 1.0
              noiseMultiplier: 1.0
              delta: 1e-5
              budgetEpsilon: 10
              noise: {source: seeded, seed: 4}
            """);
    assertThat(head(NoiseSources.forSpec(seeded, Deployment.fresh()).forRound("j", 1)))
        .isEqualTo(head(NoiseSources.forSpec(seeded, Deployment.fresh()).forRound("j", 1)));
  }

  @Test
  void keyEnv_readsBase64_andRefusesAnUnsetVariable() {
    JobSpec spec = spec("keyEnv: PRIVAGG_NOISE_KEY");
    NoiseSource source = NoiseSources.forSpec(spec, Map.of("PRIVAGG_NOISE_KEY", KEY_BASE64)::get);
    assertThat(head(source.forRound("j", 1)))
        .isEqualTo(head(NoiseSource.keyed(KEY).forRound("j", 1)));
    assertThatThrownBy(() -> NoiseSources.forSpec(spec, name -> null))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "job j: environment variable PRIVAGG_NOISE_KEY (privacy.noise.keyEnv) is not set"
                + HOW);
  }

  private static JobSpec spec(String keySetting) {
    return JobSpecReader.parse(
        "t",
        """
        jobId: j
        model:
          tensors:
            - {name: w, shape: [4]}
        rounds:
          timeout: 2s
          expectedClients: 2
        privacy:
          clipNorm: 1.0
          noiseMultiplier: 1.0
          delta: 1e-5
          budgetEpsilon: 10
          noise: {source: keyed, %s}
        """
            .formatted(keySetting));
  }

  /** Hex of the bytes 0..n-1. */
  private static String hex(int n) {
    byte[] bytes = new byte[n];
    for (int i = 0; i < n; i++) {
      bytes[i] = (byte) i;
    }
    return HexFormat.of().formatHex(bytes);
  }

  private static double[] head(NoiseStream stream) {
    double[] x = new double[8];
    for (int i = 0; i < x.length; i++) {
      x[i] = stream.nextStandardNormal();
    }
    return x;
  }
}
