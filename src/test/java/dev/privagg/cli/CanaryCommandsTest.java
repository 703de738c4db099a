package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.audit.CanarySchedule;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** privagg canaries and privagg audit: bad flags and secret files fail before any Kafka work. */
class CanaryCommandsTest {
  private static final String SPEC = "jobs/digits-softmax.yaml";
  private static final String NO_BROKER = "localhost:1";

  @TempDir Path dir;

  private static CliTest.Run audit(String... more) {
    String[] base = {"audit", "--bootstrap-servers", NO_BROKER, "--spec", SPEC, "--count", "10"};
    String[] args = new String[base.length + more.length];
    System.arraycopy(base, 0, args, 0, base.length);
    System.arraycopy(more, 0, args, base.length, more.length);
    return CliTest.run(args);
  }

  private Path secret(byte[] bytes) throws Exception {
    Path file = dir.resolve("secret");
    Files.write(file, bytes);
    return file;
  }

  @Test
  void audit_seedFileWithBinaryBytes_placesTheByte_withoutItsValue_notACharsetException()
      throws Exception {
    byte[] bytes = ("ff" + "00".repeat(40)).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    bytes[3] = (byte) 0xe9;
    CliTest.Run run = audit("--seed-file", secret(bytes).toString());
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err())
        .contains("--seed-file")
        .contains("hex digits only")
        .contains("byte 3 is neither")
        .doesNotContain("0xe9")
        .doesNotContain("MalformedInputException");
  }

  @Test
  void audit_seedFileWithAnOddDigitCount_saysSo() throws Exception {
    CliTest.Run run = audit("--seed-file", secret("0".repeat(65).getBytes()).toString());
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err()).contains("odd number of hex digits (65)");
  }

  @Test
  void audit_seedFileADirectory_isNotCalledMissing() throws Exception {
    CliTest.Run run = audit("--seed-file", dir.toString());
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err()).contains("is not a regular file").doesNotContain("does not exist");
  }

  @Test
  void audit_missingSeedFile_pointsToTheCommandThatCreatesIt() {
    CliTest.Run run = audit("--seed-file", dir.resolve("none").toString());
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err()).contains("does not exist").contains("privagg canaries --new-seed");
  }

  private static final String HEX_SECRET = "ab".repeat(32);

  /**
   * The seed file says 500 canaries were sent: an audit of 10 would score sent canaries 10 to 19 as
   * unseen. Refused before any Kafka work, naming both counts and the fix.
   */
  @Test
  void audit_countOtherThanTheOneRecordedInTheSeedFile_isRefused_namingBoth() throws Exception {
    Path file = secret((HEX_SECRET + "\ncount: 500\n").getBytes());
    CliTest.Run run = audit("--seed-file", file.toString());
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err())
        .contains("--count 10 differs from the 500 canaries --seed-file " + file)
        .contains("give --count 500");
  }

  @Test
  void canaries_countOtherThanTheOneRecordedInTheSeedFile_isRefused_beforeSending()
      throws Exception {
    Path file = secret((HEX_SECRET + "\ncount: 500\n").getBytes());
    CliTest.Run run =
        CliTest.run(
            "canaries",
            "--bootstrap-servers",
            NO_BROKER,
            "--spec",
            SPEC,
            "--count",
            "10",
            "--seed-file",
            file.toString());
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err()).contains("--count 10 differs from the 500 canaries");
  }

  @Test
  void newSeed_recordsTheCountBesideTheSecret_readableByItsOwnerOnly() throws Exception {
    Path file = dir.resolve("new.key");
    CanarySecretFile.create(file, 250);
    CanarySecretFile.Contents contents = CanarySecretFile.read(file);
    assertThat(contents.secret()).hasSize(32);
    assertThat(contents.count()).isEqualTo(250);
    assertThat(Files.readString(file)).endsWith("\ncount: 250\n");
    assertThat(
            java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
  }

  /**
   * A file from before counts were kept (hex only, here without a final newline) still reads, with
   * no count; privagg canaries records its count on first use, and the secret is unchanged.
   */
  @Test
  void seedFileWithoutACount_isRead_andItsCountRecordedOnFirstUse() throws Exception {
    Path file = secret(HEX_SECRET.getBytes());
    CanarySecretFile.Contents old = CanarySecretFile.read(file);
    assertThat(old.count()).isNull();
    CanarySecretFile.recordCount(file, 40);
    CanarySecretFile.Contents now = CanarySecretFile.read(file);
    assertThat(now.count()).isEqualTo(40);
    assertThat(now.secret()).isEqualTo(old.secret());
    assertThat(Files.readString(file)).isEqualTo(HEX_SECRET + "\ncount: 40\n");
  }

  /** The audit of such a file goes on, with a warning that says how to have the count checked. */
  @Test
  void audit_seedFileWithoutACount_warnsThatTheCountIsTakenOnTrust() throws Exception {
    CanaryOptions options = new CanaryOptions();
    options.seedFile = secret((HEX_SECRET + "\n").getBytes());
    options.count = 10;
    CanaryOptions.Seed seed = options.open();
    assertThat(seed.countRecorded()).isFalse();
    assertThat(seed.canaries().count()).isEqualTo(10);
    assertThat(options.unrecordedCount())
        .contains("records no canary count")
        .contains("--count 10 is taken on trust")
        .contains("'count: K'");
  }

  @Test
  void seedFileWithAnUnreadableCount_namesTheLineAndTheRule() throws Exception {
    Path file = secret((HEX_SECRET + "\ncount: many\n").getBytes());
    assertThatThrownBy(() -> CanarySecretFile.read(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("line 2: the canary count must be a whole number between 2 and")
        .hasMessageContaining("was 'many'");
    Path twice = secret((HEX_SECRET + "\ncount: 5\ncount: 6\n").getBytes());
    assertThatThrownBy(() -> CanarySecretFile.read(twice))
        .hasMessageContaining("line 3: a second count: line");
  }

  @Test
  void audit_unknownStatistic_namesTheFlagAndEveryChoice() {
    CliTest.Run run = audit("--seed-file", dir.resolve("none").toString(), "--statistic", "median");
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err()).contains("--statistic must be one of auto, max, sum, final, was median");
  }

  @Test
  void audit_nonPositiveIdle_isRefused_namingTheFlag() {
    CliTest.Run run = audit("--seed-file", dir.resolve("none").toString(), "--idle", "PT0S");
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err()).contains("--idle must be a positive duration");
  }

  @Test
  void canaries_nonPositiveIdle_isRefused_beforeTheSeedFileIsCreated() {
    Path seed = dir.resolve("new");
    CliTest.Run run =
        CliTest.run(
            "canaries",
            "--bootstrap-servers",
            NO_BROKER,
            "--spec",
            SPEC,
            "--count",
            "10",
            "--seed-file",
            seed.toString(),
            "--new-seed",
            "--idle",
            "PT-5S");
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err()).contains("--idle must be a positive duration");
    assertThat(seed).doesNotExist();
  }

  @Test
  void canaries_help_givesAnIdleExampleThatParses() {
    CliTest.Run run = CliTest.run("canaries", "--help");
    assertThat(run.out()).contains("e.g. 2m");
    assertThat(new DurationConverter().convert("2m")).isEqualTo(java.time.Duration.ofMinutes(2));
  }

  /**
   * 1,000 canaries of a million-parameter model take 8 GB of directions: refused before any work,
   * naming --count, rather than an OutOfMemoryError after drawing them.
   */
  @Test
  void audit_canariesBeyondTheHeap_areRefusedUpFront_namingCount() {
    long fourGiB = 4L << 30;
    assertThat(AuditCommand.tooLargeForHeap(1000, 1_000_000, fourGiB))
        .contains("--count 1000")
        .contains("2000 canary directions of 1000000 parameters take 7629 MiB")
        .contains("-Xmx");
    assertThat(AuditCommand.tooLargeForHeap(1000, 100_000, fourGiB)).isNull();
  }

  private static dev.privagg.spec.JobSpec spec(String from, String to) throws Exception {
    String yaml = Files.readString(Path.of(SPEC));
    assertThat(yaml).contains(from);
    return dev.privagg.spec.JobSpecReader.parse("canaries", yaml.replace(from, to));
  }

  /** 100 clients arrive per round (20 sampled at 0.2); 100 canaries more pass a cap of 150. */
  @Test
  void canaries_beyondTheRoundCap_areAnnouncedAsDisplacingClients() throws Exception {
    dev.privagg.spec.JobSpec job =
        spec("expectedClients: 20 ", "expectedClients: 20\n  maxClients: 150 ");
    List<String> warnings = CanariesCommand.warnings(job, CanariesCommand.schedule(job), 100);
    assertThat(warnings).hasSize(1);
    assertThat(warnings.get(0))
        .contains("about 100 canaries and 100 clients arrive per round")
        .contains("rounds.maxClients (150)")
        .contains("ROUND_FULL");
    assertThat(CanariesCommand.warnings(job, CanariesCommand.schedule(job), 50)).isEmpty();
  }

  /** Early close takes the first m = 20 updates: 30 canaries sent at the opening take them all. */
  @Test
  void canaries_underEarlyClose_areAnnouncedAsTakingPlaces() throws Exception {
    String yaml =
        Files.readString(Path.of(SPEC))
            .replace("closeEarly: false", "closeEarly: true")
            .replace("mode: server-poisson ", "mode: none #")
            .replace("    rate: 0.2\n", "");
    dev.privagg.spec.JobSpec job = dev.privagg.spec.JobSpecReader.parse("canaries", yaml);
    List<String> warnings = CanariesCommand.warnings(job, CanariesCommand.schedule(job), 30);
    assertThat(warnings)
        .singleElement()
        .asString()
        .contains("rounds close at their 20-th update")
        .contains("about 20 canaries take places");
  }

  /**
   * Adaptive clipping aims C at the median (gamma 0.5) of m = 20 expected updates, and the job
   * keeps each arrival at rate 0.2: each canary kept, a clipped update, lowers the noisy fraction
   * by 1/40, and past 2 m (1 - gamma) = 20 kept a round no clients can bring it back, so C would
   * climb to maxClipNorm.
   */
  @Test
  void canaries_underAdaptiveClipping_sayHowTheyMoveC() throws Exception {
    dev.privagg.spec.JobSpec job =
        spec(
            "  clipping: flat\n",
            "  clipping: flat\n  adaptiveClipping:\n    targetQuantile: 0.5\n");
    CanarySchedule schedule = CanariesCommand.schedule(job);
    assertThat(CanariesCommand.warnings(job, schedule, 200))
        .anySatisfy(
            w ->
                assertThat(w)
                    .contains("about 40 per round lower its unclipped fraction by 1.00")
                    .contains("more than the 20 a round can absorb")
                    .contains("up to maxClipNorm"));
    assertThat(CanariesCommand.warnings(job, schedule, 20))
        .anySatisfy(w -> assertThat(w).contains("by 0.10").contains("C settles higher"));
  }
}
