package dev.privagg.spec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privagg.correlated.BltPlan;
import dev.privagg.correlated.BufferedToeplitz;
import dev.privagg.correlated.ErrorKind;
import dev.privagg.correlated.ParticipationSchema;
import dev.privagg.correlated.Workload;
import dev.privagg.distributed.DistributedNoisePlan;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.AdaptiveClipping;
import dev.privagg.privacy.ClippedSum;
import dev.privagg.privacy.CorrelatedNoiseAccounting;
import dev.privagg.privacy.NoisePlanner;
import dev.privagg.privacy.RoundCharge;
import dev.privagg.secagg.RoundGraph;
import dev.privagg.secagg.RoundThresholds;
import dev.privagg.secagg.ThreatModel;
import dev.privagg.secagg.UnmaskingGate;
import dev.privagg.statistics.StatisticsQuery;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * Reads and validates a YAML job spec (see jobs/ for examples). Every refusal is a {@link
 * SpecException} naming the key and the fix, thrown before any job starts.
 */
public final class JobSpecReader {
  private static final Pattern JOB_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");
  private static final ObjectMapper TREE = new ObjectMapper();

  /** Longest round timeout and start grace: deadlines stay far from overflowing epoch millis. */
  static final long MAX_TIMEOUT_MILLIS = 30L * 24 * 3_600_000;

  /** Most rounds a BLT run is planned for: each round's sensitivity costs O(rounds) to find. */
  static final long MAX_CORRELATED_ROUNDS = 1_000_000;

  /** Noise blocks of a BLT job unless the spec says: enough to spread over a small cluster. */
  static final int DEFAULT_NOISE_BLOCKS = 16;

  static final int MAX_NOISE_BLOCKS = 1024;

  private JobSpecReader() {}

  /** Reads the spec at {@code file}. */
  public static JobSpec read(Path file) {
    String text;
    try {
      text = Files.readString(file);
    } catch (java.nio.file.NoSuchFileException e) {
      throw new SpecException(
          file.toString(),
          "spec",
          "does not exist; pass the path of a YAML job spec such as jobs/digits-softmax.yaml");
    } catch (IOException e) {
      throw new SpecException(file.toString(), "spec", "cannot be read: " + e);
    }
    Path dir = file.toAbsolutePath().getParent();
    return parse(file.toString(), text, InitFiles.relativeTo(dir));
  }

  /** Reads several specs for one Flink job: job ids must differ and topics must agree. */
  public static List<JobSpec> readAll(List<Path> files) {
    List<JobSpec> specs = new ArrayList<>();
    for (Path file : files) {
      specs.add(read(file));
    }
    return checkTogether(specs);
  }

  /** Checks that specs can share one Flink job: distinct job ids, the same topics. */
  public static List<JobSpec> checkTogether(List<JobSpec> specs) {
    Set<String> ids = new HashSet<>();
    for (JobSpec spec : specs) {
      if (!ids.add(spec.jobId())) {
        throw new SpecException(
            spec.jobId(),
            "jobId",
            "'" + spec.jobId() + "' is used by another spec; give each training job its own id");
      }
      if (!specs.get(0).topics().equals(spec.topics())) {
        throw new SpecException(
            spec.jobId(),
            "topics",
            "differ from those of "
                + specs.get(0).jobId()
                + "; all jobs of one Flink job share the same topics");
      }
    }
    return specs;
  }

  /**
   * Parses spec text; {@code source} names it in messages. A {@code model.initFile} is read
   * relative to the working directory.
   */
  public static JobSpec parse(String source, String text) {
    return parse(source, text, InitFiles.relativeTo(Path.of("")));
  }

  /** Parses spec text, reading {@code model.initFile} from {@code initFiles}. */
  public static JobSpec parse(String source, String text, InitFiles initFiles) {
    JsonNode root;
    try {
      // SnakeYAML's safe loader builds only plain maps, lists and scalars, and reads .inf.
      root = TREE.valueToTree(new Yaml(new SafeConstructor(new LoaderOptions())).load(text));
    } catch (YAMLException | IllegalArgumentException e) {
      throw new SpecException(source, "spec", "is not valid YAML: " + e.getMessage());
    }
    YamlSection spec = new YamlSection(source, "", root);
    String jobId = spec.string("jobId", "name the training job, e.g. digits-softmax");
    if (!JOB_ID.matcher(jobId).matches()) {
      throw spec.fail(
          "jobId",
          "must be 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit, was '"
              + jobId
              + "'");
    }
    StatisticsQuery statistics = null;
    JobSpec.Model model;
    if (spec.has("statistics")) {
      if (spec.has("model")) {
        throw spec.fail(
            "statistics",
            "and model are both set: a job either trains a model (model) or releases statistics"
                + " of its clients' rows (statistics); remove one");
      }
      statistics =
          StatisticsSection.read(spec.section("statistics", "list the features to describe"));
      model = StatisticsSection.model(statistics);
    } else {
      String misspelt = spec.has("model") ? null : spec.misspelling("statistics");
      if (misspelt != null) {
        throw spec.fail(misspelt, "is not a known key; did you mean statistics?");
      }
      model =
          model(
              spec.section(
                  "model",
                  "list the model's tensors under model.tensors (or, for a statistics job, the"
                      + " features under statistics.features)"),
              jobId,
              initFiles);
    }
    JobSpec.Rounds rounds =
        rounds(spec.section("rounds", "set rounds.timeout and rounds.expectedClients"));
    YamlSection privacySection =
        spec.section("privacy", "set privacy.clipNorm, noise, delta and budget");
    ServerOptimizer optimizer;
    if (statistics != null) {
      for (String key : List.of("server", "serverLearningRate")) {
        if (spec.has(key)) {
          throw spec.fail(
              key,
              "is read only for model training: a statistics job releases each round's noisy sums"
                  + " as they are, with no server step");
        }
      }
      optimizer = ServerOptimizer.release();
    } else {
      optimizer = serverOptimizer(spec);
    }
    long maxClientIdBytes =
        spec.integerIn(
            "maxClientIdBytes",
            JobSpec.DEFAULT_MAX_CLIENT_ID_BYTES,
            1,
            65536,
            "longest accepted client id in UTF-8 bytes");
    long maxMetadataBytes =
        spec.integerIn(
            "maxMetadataBytes",
            JobSpec.DEFAULT_MAX_METADATA_BYTES,
            0,
            1 << 20,
            "largest accepted update metadata, in encoded bytes");
    // The largest record a well-behaved client sends: the longest id and the fullest metadata.
    long largestValid = largestValidUpdate(jobId, model) + maxClientIdBytes + maxMetadataBytes;
    long defaultMax = Math.max(2L * 4 * model.dimension() + (1 << 20), largestValid);
    long maxRecordBytes =
        spec.integer("maxRecordBytes", defaultMax, "largest accepted update record in bytes");
    if (maxRecordBytes < largestValid || maxRecordBytes > JobSpec.MAX_RECORD_BYTES) {
      throw spec.fail(
          "maxRecordBytes",
          "must be in ["
              + largestValid
              + ", "
              + JobSpec.MAX_RECORD_BYTES
              + "] (at least a full update of this model with the longest client id and the"
              + " largest metadata), was "
              + maxRecordBytes);
    }
    JobSpec.Topics topics = topics(spec.optionalSection("topics"));
    JobSpec.Privacy privacy =
        privacy(
            privacySection,
            rounds,
            model.dimension(),
            optimizer,
            statistics == null ? null : StatisticsSection.clipping(spec));
    JobSpec.Aggregation aggregation =
        aggregation(spec.optionalSection("aggregation"), rounds, privacy, model);
    if (privacy.distributed() && !aggregation.secure()) {
      throw spec.fail(
          "privacy.mechanism",
          "distributed-discrete-gaussian needs aggregation.mode: secure (clients add their noise"
              + " shares before masking; in plaintext mode the job would see each update), was"
              + " plaintext");
    }
    if (aggregation.distributedNoise() != null) {
      privacy = privacy.withNoiseMultiplier(aggregation.distributedNoise().noiseMultiplier());
    }
    long largestMaskedInput = 8L * model.dimension() + 1024 + maxClientIdBytes;
    if (aggregation.secure() && maxRecordBytes < largestMaskedInput) {
      throw spec.fail(
          "maxRecordBytes",
          "must be at least "
              + largestMaskedInput
              + " under aggregation.mode: secure (a masked input is 8 bytes per model coordinate),"
              + " was "
              + maxRecordBytes);
    }
    JobSpec.Sampling sampling = privacy.sampling();
    if (sampling.mode().equals("server-poisson")
        && rounds.maxClients() < Math.ceil(rounds.expectedClients() / sampling.rate())) {
      // Clients the sampling drops count against the cap too: about m / rate arrive per round.
      throw spec.fail(
          "rounds.maxClients",
          "must be at least rounds.expectedClients / privacy.sampling.rate ("
              + (long) Math.ceil(rounds.expectedClients() / sampling.rate())
              + " clients arrive for m sampled), was "
              + rounds.maxClients());
    }
    long declaredRoom = declaredCohortRoom(sampling);
    if (sampling.declared() && rounds.maxClients() < declaredRoom) {
      // The rate claimed is expectedCohort / populationSize: a cap the cohort can reach would cut
      // such rounds to their first arrivals, a selection that is neither Poisson nor charged. A
      // Poisson cohort passes its mean in half the rounds, its mean + 6 sd in 1e-9 of them.
      throw spec.fail(
          "rounds.maxClients",
          "must be at least "
              + declaredRoom
              + " (privacy.sampling.expectedCohort "
              + sampling.expectedCohort()
              + " plus 6 standard deviations: a Poisson cohort that large comes once in 1e9"
              + " rounds), was "
              + rounds.maxClients());
    }
    spec.finish();
    return new JobSpec(
        jobId,
        model,
        rounds,
        privacy,
        optimizer,
        maxRecordBytes,
        (int) maxClientIdBytes,
        (int) maxMetadataBytes,
        topics,
        aggregation,
        statistics);
  }

  /**
   * {@code aggregation}: plaintext by default; secure needs what the clients can do alone (a fixed
   * flat clip norm) and phase windows that fit the round.
   */
  private static JobSpec.Aggregation aggregation(
      YamlSection s, JobSpec.Rounds rounds, JobSpec.Privacy privacy, JobSpec.Model model) {
    if (s == null) {
      return JobSpec.Aggregation.PLAINTEXT;
    }
    String mode = s.choice("mode", "plaintext", List.of("plaintext", "secure"));
    if (!mode.equals("secure")) {
      s.finish();
      return JobSpec.Aggregation.PLAINTEXT;
    }
    double dropout =
        s.number("maxDropoutRate", 0.1, "fraction of a round's roster that may drop out");
    double adversarial =
        s.number("adversarialClientRate", 0.1, "fraction of a round's roster that may collude");
    if (!(dropout >= 0 && dropout < 1)) {
      throw s.fail("maxDropoutRate", "must be in [0, 1), was " + dropout);
    }
    if (!(adversarial >= 0 && adversarial < 1)) {
      throw s.fail("adversarialClientRate", "must be in [0, 1), was " + adversarial);
    }
    String adversary =
        s.choice("adversary", "semi-malicious-server", JobSpec.Aggregation.ADVERSARIES);
    // The rates must leave room for a threshold above what colluders and two survivor lists can
    // reach and below what the survivors, one client short, still hold (RoundThresholds).
    try {
      RoundThresholds.checkRates(RoundGraph.threatModel(dropout, adversarial, adversary));
    } catch (IllegalArgumentException e) {
      throw s.fail("adversarialClientRate", e.getMessage());
    }
    long sixth = rounds.timeoutMillis() / 6;
    YamlSection phases = s.optionalSection("phases");
    long advertise = sixth;
    long share = sixth;
    long confirm = sixth;
    long masked = sixth;
    long consistency = sixth;
    if (phases != null) {
      advertise = phases.has("advertise") ? phases.durationMillis("advertise", "e.g. 5s") : sixth;
      share = phases.has("share") ? phases.durationMillis("share", "e.g. 5s") : sixth;
      confirm = phases.has("confirm") ? phases.durationMillis("confirm", "e.g. 5s") : sixth;
      masked = phases.has("maskedInput") ? phases.durationMillis("maskedInput", "e.g. 10s") : sixth;
      consistency =
          phases.has("consistency") ? phases.durationMillis("consistency", "e.g. 5s") : sixth;
      phases.finish();
    }
    int bits = 0;
    if (privacy.distributed()) {
      bits =
          (int)
              s.integerIn(
                  "bitsPerCoordinate",
                  DEFAULT_BITS_PER_COORDINATE,
                  DistributedNoisePlan.MIN_BITS,
                  DistributedNoisePlan.MAX_BITS,
                  "bits of each masked coordinate, noise included, e.g. 18");
    } else if (s.has("bitsPerCoordinate")) {
      throw s.fail(
          "bitsPerCoordinate",
          "is read only with privacy.mechanism: distributed-discrete-gaussian (other secure rounds"
              + " mask 64-bit words)");
    }
    if (!(advertise > 0 && share > 0 && confirm > 0 && masked > 0 && consistency > 0)
        || advertise + share + confirm + masked + consistency >= rounds.timeoutMillis()) {
      throw s.fail(
          "phases",
          "advertise, share, confirm, maskedInput and consistency must each be > 0 and leave time"
              + " for the unmask phase within rounds.timeout ("
              + rounds.timeoutMillis()
              + " ms), were "
              + List.of(advertise, share, confirm, masked, consistency)
              + " ms (a phase not given takes a sixth of the timeout)");
    }
    s.finish();
    if (rounds.closeEarly()) {
      throw s.fail(
          "mode",
          "secure cannot be combined with rounds.closeEarly: the job never sees which updates"
              + " arrived before unmasking; remove it or use plaintext");
    }
    ThreatModel threat = RoundGraph.threatModel(dropout, adversarial, adversary);
    // Whether a round is unmasked must itself be a noisy, charged decision (design.md 12): the
    // count of masked inputs must keep rosters too small for a graph below it but for 2^-40.
    if (rounds.minimumCohort() == 0
        || rounds.minimumCohort()
            < UnmaskingGate.minimumCount(threat, rounds.minimumCohortNoiseStd())) {
      String suggested =
          rounds.minimumCohort() > 0
              ? UnmaskingGate.spec(
                  UnmaskingGate.minimumCount(threat, rounds.minimumCohortNoiseStd()),
                  rounds.minimumCohortNoiseStd())
              : UnmaskingGate.suggestedSpec(threat, rounds.expectedClients());
      throw s.fail(
          "mode",
          "secure needs rounds.minimumCohort, a noisy count of masked inputs below which a round"
              + " is not unmasked, so that whether it is never switches on one client: count >="
              + " (the size from which on every roster gets a graph at these rates, "
              + RoundThresholds.smallestRoster(threat)
              + ", less one) + "
              + String.format(java.util.Locale.ROOT, "%.2f", UnmaskingGate.DEVIATE)
              + " noiseStd, e.g. rounds.minimumCohort: "
              + suggested
              + " (docs/secure-aggregation.md); was "
              + (rounds.minimumCohort() > 0
                  ? UnmaskingGate.spec(rounds.minimumCohort(), rounds.minimumCohortNoiseStd())
                  : "absent"));
    }
    if (privacy.adaptiveClipping() != null || !privacy.clipping().equals("flat")) {
      throw s.fail(
          "mode",
          "secure needs privacy.clipping: flat with a fixed privacy.clipNorm (clients clip"
              + " themselves, to the C the job announces), was "
              + privacy.clipping()
              + (privacy.adaptiveClipping() != null ? " with adaptive clipping" : ""));
    }
    // Beyond the graph finder's range a roster would get the complete graph, where every client
    // shares with every other: no round of that size could finish.
    long maxRoster =
        Math.min(
            RoundThresholds.MAX_NUMBER_OF_CLIENTS,
            (JobSpec.MAX_RECORD_BYTES - (1 << 20)) / JobSpec.SECURE_ROSTER_ENTRY_BYTES);
    if (rounds.maxClients() > maxRoster) {
      throw s.fail(
          "mode",
          "secure needs rounds.maxClients <= "
              + maxRoster
              + " (SecAgg+'s neighbour graph is chosen for at most that many clients, and a"
              + " round's roster is one record on the secure topic), was "
              + rounds.maxClients());
    }
    JobSpec.Aggregation aggregation =
        new JobSpec.Aggregation(
            mode,
            dropout,
            adversarial,
            adversary,
            advertise,
            share,
            confirm,
            masked,
            consistency,
            null);
    if (!privacy.distributed()) {
      return aggregation;
    }
    int honest =
        UnmaskingGate.fewestHonestInputs(
            threat, rounds.minimumCohort(), rounds.minimumCohortNoiseStd());
    if (honest < 1) {
      throw s.fail(
          "mode",
          "distributed noise needs the gate to keep honest clients in every unmasked round: with"
              + " rounds.minimumCohort "
              + UnmaskingGate.spec(rounds.minimumCohort(), rounds.minimumCohortNoiseStd())
              + " a round may be unmasked with "
              + UnmaskingGate.fewestMaskedInputs(
                  rounds.minimumCohort(), rounds.minimumCohortNoiseStd())
              + " masked inputs, none of them surely honest at these rates; raise"
              + " rounds.minimumCohort.count or lower its noiseStd");
    }
    DistributedNoisePlan plan;
    try {
      plan =
          DistributedNoisePlan.plan(
              privacy.noiseMultiplier(), model.dimension(), bits, honest, rounds.maxClients());
    } catch (IllegalArgumentException e) {
      throw s.fail("bitsPerCoordinate", e.getMessage());
    }
    // The job tops each release up to maxClients shares, drawing the ones missing senders did not
    // bring: bounded here so that clients who stay away cannot stall the combiner.
    long missing =
        rounds.maxClients()
            - UnmaskingGate.fewestMaskedInputs(
                rounds.minimumCohort(), rounds.minimumCohortNoiseStd());
    if (missing * plan.paddedDimension() > MAX_TOP_UP_SHARES) {
      throw s.failAt(
          "rounds.maxClients",
          rounds.maxClients()
              + " is too far above the fewest masked inputs the gate unmasks ("
              + (rounds.maxClients() - missing)
              + "): with distributed noise every release holds maxClients noise shares, and the"
              + " job would draw up to "
              + missing * plan.paddedDimension()
              + " discrete Gaussians per round (at most 2^25); lower rounds.maxClients toward"
              + " rounds.expectedClients");
    }
    return aggregation.withDistributedNoise(plan);
  }

  /** The most discrete Gaussians the job draws to top up one distributed-noise release. */
  static final long MAX_TOP_UP_SHARES = 1L << 25;

  /** Bits per masked coordinate under distributed noise unless the spec says otherwise. */
  static final int DEFAULT_BITS_PER_COORDINATE = 18;

  /**
   * An upper bound on an update's encoded size with an empty client id and no metadata: header,
   * fields, and each tensor's name, shape and float32 data, with every varint at its widest.
   */
  private static long largestValidUpdate(String jobId, JobSpec.Model model) {
    long size = 10 + 5 + jobId.length() + 10 + 5 + 1; // header, job id, round, id length, union
    return size + model.maxEncodedTensorBytes();
  }

  private static JobSpec.Model model(YamlSection s, String jobId, InitFiles initFiles) {
    List<JobSpec.TensorSpec> tensors = new ArrayList<>();
    Set<String> names = new HashSet<>();
    long dimension = 0;
    for (YamlSection t :
        s.sections(
            "tensors", "each with a name and a shape, e.g. {name: weights, shape: [64, 10]}")) {
      String name = t.string("name", "a unique tensor name");
      if (!names.add(name)) {
        throw t.fail("name", "'" + name + "' is used twice; tensor names must be unique");
      }
      int[] shape = t.intList("shape", "the tensor's dimensions, e.g. [64, 10]");
      t.finish();
      JobSpec.TensorSpec tensor = new JobSpec.TensorSpec(name, shape);
      long size = JobSpec.TensorSpec.sizeOf(shape);
      dimension += Math.max(size, 0);
      if (size < 0 || dimension > JobSpec.MAX_DIMENSION) {
        throw t.fail(
            "shape",
            "makes the model larger than "
                + JobSpec.MAX_DIMENSION
                + " parameters (2^27, 512 MiB of float32 per update), was "
                + java.util.Arrays.toString(shape));
      }
      tensors.add(tensor);
    }
    String init = s.choice("init", "zeros", List.of("zeros", "random", "file"));
    String initFile = null;
    float[] initValues = null;
    if (init.equals("file")) {
      initFile =
          s.string(
              "initFile",
              "the .safetensors or .npz file of the round-0 weights, relative to the spec's"
                  + " directory");
      initValues = InitialWeights.read(s, jobId, initFile, tensors, initFiles);
    } else if (s.has("initFile")) {
      throw s.fail("initFile", "is read only with model.init: file, was set with init: " + init);
    }
    long seed = s.integer("initSeed", 0, "seed of the random initial weights");
    double std = s.number("initStd", 0.01, "std of the random initial weights");
    if (!(std > 0 && Double.isFinite(std))) {
      throw s.fail("initStd", "must be > 0 and finite, was " + std);
    }
    s.finish();
    return new JobSpec.Model(List.copyOf(tensors), init, seed, std, initFile, initValues);
  }

  // rounds.startAt's range: a typo in the year fails here rather than parking a job for centuries.
  private static final long EARLIEST_START =
      java.time.Instant.parse("2000-01-01T00:00:00Z").toEpochMilli();
  private static final long LATEST_START =
      java.time.Instant.parse("2100-01-01T00:00:00Z").toEpochMilli();

  private static JobSpec.Rounds rounds(YamlSection s) {
    long timeout = s.durationMillis("timeout", "how long each round stays open, e.g. 30s");
    if (timeout < 100 || timeout > MAX_TIMEOUT_MILLIS) {
      throw s.fail("timeout", "must be in [100ms, 30 days], was " + timeout + "ms");
    }
    long grace =
        s.has("startGrace")
            ? s.durationMillis("startGrace", "extra time for round 1, e.g. 5s")
            : 5_000;
    if (grace < 0 || grace > MAX_TIMEOUT_MILLIS) {
      throw s.fail("startGrace", "must be in [0ms, 30 days], was " + grace + "ms");
    }
    long startAt =
        s.has("startAt")
            ? s.instantMillis("startAt", "when round 1 opens, announced to no one in advance")
            : 0;
    if (s.has("startAt") && !(startAt >= EARLIEST_START && startAt < LATEST_START)) {
      throw s.fail(
          "startAt",
          "must be in [2000-01-01T00:00:00Z, 2100-01-01T00:00:00Z), was "
              + java.time.Instant.ofEpochMilli(startAt));
    }
    long maxClients =
        s.integerIn(
            "maxClients",
            JobSpec.DEFAULT_MAX_CLIENTS_PER_ROUND,
            1,
            ClippedSum.MAX_CONTRIBUTIONS,
            "most clients one round takes (at most the exact range of its fixed-point sum)");
    long m = s.integer("expectedClients", "the expected cohort size m, the average's denominator");
    if (m < 1 || m > Integer.MAX_VALUE) {
      throw s.fail("expectedClients", "must be >= 1, was " + m);
    }
    if (maxClients < m) {
      throw s.fail(
          "maxClients",
          "must be at least rounds.expectedClients ("
              + m
              + "), and well above it: a full round turns clients away, was "
              + maxClients);
    }
    boolean closeEarly = s.bool("closeEarly", false);
    boolean nextRoundAtEarlyClose = s.bool("nextRoundAtEarlyClose", false);
    if (nextRoundAtEarlyClose && !closeEarly) {
      throw s.fail(
          "nextRoundAtEarlyClose", "needs rounds.closeEarly: true; remove it or close early");
    }
    YamlSection cohort = s.optionalSection("minimumCohort");
    double minimum = 0;
    double countStd = 0;
    if (cohort != null) {
      // A threshold for a noisy count: a whole number or not, as the gate's arithmetic needs.
      double count = cohort.number("count", "release only when the noisy count reaches this");
      if (!(count >= 1 && count <= Integer.MAX_VALUE)) {
        throw cohort.fail("count", "must be >= 1, was " + count);
      }
      countStd = cohort.number("noiseStd", "std of the Gaussian noise on the count, e.g. 2.0");
      if (!(countStd > 0 && Double.isFinite(countStd))) {
        throw cohort.fail(
            "noiseStd",
            "must be > 0 and finite (the count is charged to the budget), was " + countStd);
      }
      cohort.finish();
      minimum = count;
    }
    s.finish();
    return new JobSpec.Rounds(
        timeout,
        grace,
        (int) m,
        closeEarly,
        nextRoundAtEarlyClose,
        minimum,
        countStd,
        maxClients,
        startAt);
  }

  /**
   * {@code privacy}. {@code statisticsClipping} is null for model training; for a statistics job it
   * is the clipping the job uses, at clip norm 1, and the clipping keys are refused.
   */
  private static JobSpec.Privacy privacy(
      YamlSection s,
      JobSpec.Rounds rounds,
      int dimension,
      ServerOptimizer optimizer,
      String statisticsClipping) {
    double clipNorm;
    String clipping;
    String split;
    if (statisticsClipping != null) {
      StatisticsSection.requireMechanism(s);
      clipNorm = 1.0;
      clipping = statisticsClipping;
      split = "equal";
    } else {
      clipNorm = s.number("clipNorm", "the L2 bound each update is clipped to, e.g. 1.0");
      if (!(clipNorm > 0 && Double.isFinite(clipNorm))) {
        throw s.fail("clipNorm", "must be > 0 and finite, was " + clipNorm);
      }
      requireSummableClipNorm(s, "clipNorm", clipNorm);
      clipping = s.choice("clipping", "flat", List.of("flat", "per-layer"));
      split = s.choice("layerSplit", "equal", List.of("equal", "sqrt-size"));
    }
    double delta = s.number("delta", "e.g. 1e-5, well below 1 / number of clients");
    if (!(delta > 0 && delta < 1)) {
      throw s.fail("delta", "must be in (0, 1), was " + delta);
    }
    double budget =
        s.number(
            "budgetEpsilon", "total epsilon the job may spend, or .inf for a non-private baseline");
    if (!(budget > 0)) {
      throw s.fail("budgetEpsilon", "must be > 0 (or .inf), was " + budget);
    }
    String accountant = s.choice("accountant", "rdp", Accountant.NAMES);
    if (rounds.nextRoundAtEarlyClose() && (Double.isFinite(budget) || s.has("targetEpsilon"))) {
      // Opening round r + 1 at r's m-th update moves every later window with one client's
      // timing: which later updates count would depend on it, and no per-round charge covers it.
      throw s.fail(
          "budgetEpsilon",
          "must be .inf (with privacy.noiseMultiplier, not targetEpsilon) when"
              + " rounds.nextRoundAtEarlyClose is true: that schedule depends on the data, so no"
              + " epsilon covers it and every round states epsilon Infinity; remove"
              + " rounds.nextRoundAtEarlyClose for a private run (early close then releases early"
              + " and the next round still opens at the deadline), was "
              + budget);
    }
    JobSpec.Sampling sampling = sampling(s.optionalSection("sampling"));
    AdaptiveClipping adaptive =
        adaptiveClipping(s.optionalSection("adaptiveClipping"), clipNorm, clipping, rounds);
    JobSpec.Noise noise = noise(s.optionalSection("noise"));

    String mechanism =
        s.choice(
            "mechanism",
            "independent",
            List.of("independent", "blt", "bandmf", "distributed-discrete-gaussian"));
    boolean distributed = mechanism.equals("distributed-discrete-gaussian");
    if (distributed) {
      requireDistributable(s, accountant, sampling, adaptive);
    }
    YamlSection bandSection = s.optionalSection("bandmf");
    if (mechanism.equals("bandmf")) {
      if (s.has("blt")) {
        throw s.fail("blt", "is read only with privacy.mechanism: blt, was set with bandmf");
      }
      return BandMfSection.read(
          s,
          bandSection,
          rounds,
          clipNorm,
          clipping,
          split,
          delta,
          budget,
          accountant,
          sampling,
          adaptive,
          noise,
          dimension,
          Workload.ofServerMomentum(optimizer.linearMomentum()));
    }
    if (bandSection != null) {
      throw s.fail(
          "bandmf", "is read only with privacy.mechanism: bandmf, was set with " + mechanism);
    }
    YamlSection bltSection = s.optionalSection("blt");
    if (mechanism.equals("blt")) {
      return correlatedPrivacy(
          s,
          bltSection,
          rounds,
          clipNorm,
          clipping,
          split,
          delta,
          budget,
          accountant,
          sampling,
          adaptive,
          noise);
    }
    if (bltSection != null) {
      throw s.fail("blt", "is read only with privacy.mechanism: blt, was set with independent");
    }
    boolean hasZ = s.has("noiseMultiplier");
    boolean hasTarget = s.has("targetEpsilon");
    double targetEpsilon = Double.NaN;
    long plannedRounds = 0;
    double z;
    RoundCharge charge =
        new RoundCharge(
            sampling.accountingRate(),
            rounds.closeEarly(),
            rounds.nextRoundAtEarlyClose(),
            rounds.minimumCohort() > 0 ? rounds.minimumCohortNoiseStd() : 0,
            adaptive == null ? 0 : adaptive.countNoiseMultiplier(),
            distributed);
    if (hasZ == hasTarget) {
      throw s.fail(
          "noiseMultiplier",
          "or privacy.targetEpsilon (with privacy.plannedRounds): set exactly one of them");
    }
    if (hasZ) {
      z = s.number("noiseMultiplier", "noise std / clipNorm, e.g. 1.1");
      if (!(z >= 0 && Double.isFinite(z))) {
        throw s.fail("noiseMultiplier", "must be >= 0 and finite, was " + z);
      }
      if (z == 0 && distributed) {
        throw s.fail(
            "noiseMultiplier",
            "must be > 0 with mechanism distributed-discrete-gaussian: the clients' shares carry"
                + " all of a round's noise; for a non-private baseline use mechanism independent");
      }
      if (z == 0 && Double.isFinite(budget)) {
        throw s.fail(
            "noiseMultiplier",
            "is 0, which spends infinite epsilon; set privacy.budgetEpsilon: .inf for a non-private baseline, or use a positive noise multiplier");
      }
    } else {
      targetEpsilon = s.number("targetEpsilon", "epsilon the planned rounds may spend");
      if (!(targetEpsilon > 0 && Double.isFinite(targetEpsilon))) {
        throw s.fail("targetEpsilon", "must be > 0 and finite, was " + targetEpsilon);
      }
      plannedRounds = s.integer("plannedRounds", "how many rounds targetEpsilon must cover");
      if (plannedRounds < 1) {
        throw s.fail("plannedRounds", "must be >= 1, was " + plannedRounds);
      }
      try {
        z =
            new NoisePlanner(Accountant.named(accountant))
                .plan(targetEpsilon, delta, plannedRounds, charge)
                .noiseMultiplier();
      } catch (IllegalArgumentException e) {
        throw s.fail("targetEpsilon", "cannot be reached: " + e.getMessage());
      }
    }
    requireFiniteNoise(s, z, adaptive == null ? clipNorm : adaptive.maxClipNorm(), 1);
    s.finish();
    return new JobSpec.Privacy(
        clipNorm,
        clipping,
        split,
        z,
        targetEpsilon,
        plannedRounds,
        delta,
        budget,
        accountant,
        sampling,
        noise,
        adaptive,
        null,
        distributed);
  }

  /**
   * What the distributed discrete Gaussian's accounting rests on: Renyi DP only (KLS21 give no
   * PLD), no amplification by sampling (the clients would have to size noise for a sample they must
   * not see), and a fixed clip norm (clients scale to it).
   */
  private static void requireDistributable(
      YamlSection s, String accountant, JobSpec.Sampling sampling, AdaptiveClipping adaptive) {
    if (!accountant.equals("rdp")) {
      throw s.fail(
          "accountant",
          "must be rdp with mechanism distributed-discrete-gaussian: a sum of discrete Gaussian"
              + " shares has a Renyi bound (Kairouz, Liu, Steinke 2021, Proposition 14), no known"
              + " privacy-loss distribution or (epsilon, delta) curve; was "
              + accountant);
    }
    if (!sampling.mode().equals("none")) {
      throw s.fail(
          "sampling",
          "must be absent with mechanism distributed-discrete-gaussian: its amplification by"
              + " sampling is not accounted here (the clients' shares would have to be sized for"
              + " a sample kept secret from them); was mode "
              + sampling.mode());
    }
    if (adaptive != null) {
      throw s.fail(
          "adaptiveClipping",
          "cannot be combined with mechanism distributed-discrete-gaussian: clients scale their"
              + " updates to a fixed privacy.clipNorm");
    }
  }

  /**
   * {@code privacy.mechanism: blt}: DP-FTRL with BLT correlated noise over plannedRounds rounds
   * under an enforced participation schema (docs/privacy.md, "Correlated noise"). The whole run is
   * one Gaussian mechanism, so z is planned for it at once; what the accounting assumes is refused
   * here when the spec would break it.
   */
  private static JobSpec.Privacy correlatedPrivacy(
      YamlSection s,
      YamlSection b,
      JobSpec.Rounds rounds,
      double clipNorm,
      String clipping,
      String split,
      double delta,
      double budget,
      String accountant,
      JobSpec.Sampling sampling,
      AdaptiveClipping adaptive,
      JobSpec.Noise noise) {
    if (b == null) {
      throw s.fail(
          "blt", "is needed with mechanism blt: minSeparation, maxParticipations (and buffers)");
    }
    if (!sampling.mode().equals("none")) {
      throw s.fail(
          "sampling.mode",
          "must be none with mechanism blt (was "
              + sampling.mode()
              + "): blt claims no amplification by sampling, it bounds participation instead");
    }
    long n = matrixMechanismRounds(s, "blt", rounds, adaptive, noise, accountant);
    int minSep =
        (int)
            b.integerIn(
                "minSeparation",
                1,
                1,
                n,
                "rounds between a client's contributions: r' - r >= minSeparation");
    int maxPart =
        (int) b.integerIn("maxParticipations", 1, 1, n, "contributions per client in the run");
    int buffers = (int) b.integerIn("buffers", 3, 1, 8, "BLT buffers, each one model in size");
    String error = b.choice("error", "max", List.of("max", "mean"));
    int noiseBlocks =
        (int)
            b.integerIn(
                "noiseBlocks",
                DEFAULT_NOISE_BLOCKS,
                1,
                MAX_NOISE_BLOCKS,
                "coordinate blocks that generate the noise in parallel; fixed for the run");
    ParticipationSchema schema = new ParticipationSchema(n, minSep, maxPart);
    BltPlan plan;
    if (b.has("theta") || b.has("omega")) {
      double[] theta = b.numberList("theta", "the BLT's buffer decays, each in (0, 1)");
      double[] omega = b.numberList("omega", "the BLT's output scales, each > 0");
      try {
        plan = BltPlan.of(schema, BufferedToeplitz.of(theta, omega));
      } catch (IllegalArgumentException e) {
        throw b.fail("theta", "and omega do not give a usable BLT: " + e.getMessage());
      }
      if (plan.strategy().buffers() != buffers && b.has("buffers")) {
        throw b.fail("buffers", "must match theta's length " + theta.length + ", was " + buffers);
      }
    } else {
      plan =
          BltPlan.optimized(schema, buffers, error.equals("max") ? ErrorKind.MAX : ErrorKind.MEAN);
    }
    b.finish();
    double z;
    double targetEpsilon = Double.NaN;
    if (s.has("noiseMultiplier") == s.has("targetEpsilon")) {
      throw s.fail(
          "noiseMultiplier",
          "or privacy.targetEpsilon: set exactly one of them (blt plans z for"
              + " the whole run of plannedRounds)");
    }
    if (s.has("noiseMultiplier")) {
      z = s.number("noiseMultiplier", "noise std / (clipNorm * sensitivity), e.g. 1.0");
      if (!(z > 0 && Double.isFinite(z))) {
        throw s.fail("noiseMultiplier", "must be > 0 and finite with mechanism blt, was " + z);
      }
    } else {
      targetEpsilon = s.number("targetEpsilon", "epsilon the planned rounds may spend");
      if (!(targetEpsilon > 0 && Double.isFinite(targetEpsilon))) {
        throw s.fail("targetEpsilon", "must be > 0 and finite, was " + targetEpsilon);
      }
      try {
        z =
            CorrelatedNoiseAccounting.noiseMultiplierFor(
                Accountant.named(accountant), targetEpsilon, delta);
      } catch (IllegalArgumentException e) {
        throw s.fail("targetEpsilon", "cannot be reached: " + e.getMessage());
      }
    }
    requireFiniteNoise(s, z, clipNorm, plan.sensitivity());
    s.finish();
    JobSpec.Correlated correlated =
        new JobSpec.Correlated(
            minSep,
            maxPart,
            error,
            plan.strategy().theta(),
            plan.strategy().omega(),
            plan.sensitivity(),
            noiseBlocks);
    return new JobSpec.Privacy(
        clipNorm,
        clipping,
        split,
        z,
        targetEpsilon,
        n,
        delta,
        budget,
        accountant,
        sampling,
        noise,
        null,
        correlated,
        false);
  }

  /**
   * What every matrix-factorization mechanism (blt, bandmf) needs, checked alike: one fixed C (no
   * adaptive clipping), no early close or noisy cohort (neither is covered by the strategy's
   * sensitivity), reproducible noise (a replayed round must draw the same Z into the buffers), an
   * accountant exact on Gaussians; returns plannedRounds n.
   */
  static long matrixMechanismRounds(
      YamlSection s,
      String mechanism,
      JobSpec.Rounds rounds,
      AdaptiveClipping adaptive,
      JobSpec.Noise noise,
      String accountant) {
    if (adaptive != null) {
      throw s.fail(
          "adaptiveClipping",
          "cannot be used with mechanism "
              + mechanism
              + ": the sensitivity of the whole run assumes one C; remove adaptiveClipping and set"
              + " clipNorm");
    }
    // A non-private throughput run (rounds.nextRoundAtEarlyClose, budget .inf) may close early:
    // every round is then charged as unbounded, as with independent noise.
    if ((rounds.closeEarly() && !rounds.nextRoundAtEarlyClose()) || rounds.minimumCohort() > 0) {
      throw s.fail(
          "mechanism",
          mechanism
              + " cannot be combined with rounds.closeEarly or rounds.minimumCohort: an early close"
              + " lets one client displace another and a noisy count is a second mechanism per"
              + " round, neither covered by the matrix mechanism's sensitivity; remove them");
    }
    if (!noise.source().equals("keyed") && !noise.source().equals("seeded")) {
      throw s.fail(
          "noise.source",
          "must be keyed with mechanism "
              + mechanism
              + " (seeded for experiments), was "
              + noise.source()
              + ": a round replayed after a failure must draw the same noise into the strategy's"
              + " buffers, which needs reproducible noise");
    }
    if (!accountant.equals("pld") && !accountant.equals("rdp")) {
      throw s.fail(
          "accountant",
          "must be pld or rdp with mechanism "
              + mechanism
              + " (was "
              + accountant
              + "): its charges are Gaussians, which both account exactly");
    }
    long n =
        s.integer(
            "plannedRounds", "n, the rounds the strategy is built for; no round runs past it");
    if (n < 1 || n > MAX_CORRELATED_ROUNDS) {
      throw s.fail("plannedRounds", "must be in [1, " + MAX_CORRELATED_ROUNDS + "], was " + n);
    }
    return n;
  }

  /**
   * Adaptive clipping (Andrew et al. 2021): privacy.clipNorm is the initial C. Only flat clipping:
   * per-layer bounds would need one unclipped count per layer, each charged.
   */
  private static AdaptiveClipping adaptiveClipping(
      YamlSection s, double clipNorm, String clipping, JobSpec.Rounds rounds) {
    if (s == null) {
      return null;
    }
    if (!clipping.equals("flat")) {
      throw s.fail(
          "",
          "needs privacy.clipping: flat (was "
              + clipping
              + "): per-layer bounds would each need their own charged count");
    }
    double quantile =
        s.number("targetQuantile", "fraction of updates C should leave unclipped, e.g. 0.5");
    if (!(quantile > 0 && quantile < 1)) {
      throw s.fail("targetQuantile", "must be in (0, 1), was " + quantile);
    }
    double rate =
        s.number(
            "learningRate",
            AdaptiveClipping.DEFAULT_LEARNING_RATE,
            "step of the geometric update of C");
    if (!(rate > 0 && Double.isFinite(rate))) {
      throw s.fail("learningRate", "must be > 0 and finite, was " + rate);
    }
    double countStd =
        s.number(
            "countNoiseStd",
            AdaptiveClipping.defaultCountNoiseStd(rounds.expectedClients()),
            "std of the noise on the count of unclipped updates");
    if (!(countStd > 0 && Double.isFinite(countStd))) {
      throw s.fail(
          "countNoiseStd",
          "must be > 0 and finite (the count is charged with the sum), was " + countStd);
    }
    // The defaults stay within the clip norms the fixed-point sum takes.
    double min =
        s.number(
            "minClipNorm",
            Math.max(clipNorm / 1000, ClippedSum.MIN_CLIP_NORM),
            "the smallest C the update may reach");
    double max =
        s.number(
            "maxClipNorm",
            Math.min(clipNorm * 1000, ClippedSum.MAX_CLIP_NORM),
            "the largest C the update may reach");
    if (!(min > 0 && min <= clipNorm)) {
      throw s.fail(
          "minClipNorm", "must be in (0, privacy.clipNorm = " + clipNorm + "], was " + min);
    }
    if (!(max >= clipNorm && Double.isFinite(max))) {
      throw s.fail(
          "maxClipNorm", "must be >= privacy.clipNorm (" + clipNorm + ") and finite, was " + max);
    }
    requireSummableClipNorm(s, "minClipNorm", min);
    requireSummableClipNorm(s, "maxClipNorm", max);
    s.finish();
    return new AdaptiveClipping(quantile, rate, clipNorm, countStd, min, max);
  }

  /**
   * A C the fixed-point sum can hold ({@link ClippedSum#MIN_CLIP_NORM} to {@link
   * ClippedSum#MAX_CLIP_NORM}): outside it the sum's scale or its decoded value overflows a double,
   * and a clipped update could weigh more than C.
   */
  private static void requireSummableClipNorm(YamlSection s, String key, double clipNorm) {
    if (!(clipNorm >= ClippedSum.MIN_CLIP_NORM && clipNorm <= ClippedSum.MAX_CLIP_NORM)) {
      throw s.fail(
          key,
          "must be in ["
              + ClippedSum.MIN_CLIP_NORM
              + ", "
              + ClippedSum.MAX_CLIP_NORM
              + "] (the range the exact fixed-point sum holds; rescale the model's updates"
              + " instead), was "
              + clipNorm);
    }
  }

  /** Largest noise std a round may draw: noise and sum then stay finite doubles. */
  static final double MAX_NOISE_STD = 1e300;

  /**
   * The noise std of a round, z * C (at the largest C adaptive clipping may reach; times the BLT's
   * sensitivity), must be a finite double: an infinite std would be refused when the first round's
   * noise is drawn, and the job would restart into the same refusal.
   */
  static void requireFiniteNoise(
      YamlSection s, double noiseMultiplier, double maxClipNorm, double sensitivity) {
    double sigma = noiseMultiplier * maxClipNorm * sensitivity;
    if (!(sigma <= MAX_NOISE_STD)) {
      throw s.fail(
          s.has("targetEpsilon") ? "targetEpsilon" : "noiseMultiplier",
          "gives a noise std of "
              + sigma
              + " (noise multiplier "
              + noiseMultiplier
              + " x clip norm "
              + maxClipNorm
              + (sensitivity == 1 ? "" : " x sensitivity " + sensitivity)
              + "), above "
              + MAX_NOISE_STD
              + ", where the noisy sum would overflow a double; lower the noise multiplier or"
              + " the clip norm");
    }
  }

  /**
   * The server optimizer: the {@code server} section, or the older top-level serverLearningRate
   * (plain SGD); not both.
   */
  private static ServerOptimizer serverOptimizer(YamlSection spec) {
    YamlSection s = spec.optionalSection("server");
    if (s == null) {
      double lr =
          spec.number("serverLearningRate", 1.0, "the factor applied to the noisy average update");
      if (!(lr > 0 && Double.isFinite(lr))) {
        throw spec.fail("serverLearningRate", "must be > 0 and finite, was " + lr);
      }
      return ServerOptimizer.sgd(lr);
    }
    if (spec.has("serverLearningRate")) {
      throw spec.fail(
          "serverLearningRate", "and server are both set: move the rate to server.learningRate");
    }
    String name = s.choice("optimizer", "sgd", List.of("sgd", "avgm", "adam", "yogi"));
    ServerOptimizer.Kind kind = ServerOptimizer.Kind.parse(name);
    double lr =
        s.number(
            "learningRate",
            kind == ServerOptimizer.Kind.SGD || kind == ServerOptimizer.Kind.AVGM ? 1.0 : 0.01,
            "server step size");
    if (!(lr > 0 && Double.isFinite(lr))) {
      throw s.fail("learningRate", "must be > 0 and finite, was " + lr);
    }
    ServerOptimizer optimizer =
        switch (kind) {
          case SGD -> ServerOptimizer.sgd(lr);
          case AVGM ->
              ServerOptimizer.avgm(
                  lr, unitInterval(s, "momentum", ServerOptimizer.DEFAULT_MOMENTUM));
          case ADAM, YOGI -> {
            double beta1 = unitInterval(s, "beta1", ServerOptimizer.DEFAULT_BETA1);
            double beta2 = unitInterval(s, "beta2", ServerOptimizer.DEFAULT_BETA2);
            double tau = s.number("tau", ServerOptimizer.DEFAULT_TAU, "adaptivity, e.g. 1e-3");
            if (!(tau > 0 && Double.isFinite(tau))) {
              throw s.fail("tau", "must be > 0 and finite, was " + tau);
            }
            yield kind == ServerOptimizer.Kind.ADAM
                ? ServerOptimizer.adam(lr, beta1, beta2, tau)
                : ServerOptimizer.yogi(lr, beta1, beta2, tau);
          }
          case RELEASE -> throw new IllegalStateException("parse never names release");
        };
    s.finish();
    return optimizer;
  }

  private static double unitInterval(YamlSection s, String name, double fallback) {
    double value = s.number(name, fallback, "in [0, 1)");
    if (!(value >= 0 && value < 1)) {
      throw s.fail(name, "must be in [0, 1), was " + value);
    }
    return value;
  }

  /** Room for a declared Poisson cohort in all but 1e-9 of rounds: its mean plus 6 sd. */
  static long declaredCohortRoom(JobSpec.Sampling sampling) {
    double mean = sampling.expectedCohort();
    return (long) Math.ceil(mean + 6 * Math.sqrt(mean));
  }

  private static JobSpec.Sampling sampling(YamlSection s) {
    if (s == null) {
      return new JobSpec.Sampling("none", 1.0, 0, 0);
    }
    String mode =
        s.choice("mode", "none", List.of("none", "server-poisson", "declared-client-poisson"));
    double rate = 1.0;
    long population = 0;
    long cohort = 0;
    if (mode.equals("server-poisson")) {
      rate = s.number("rate", "probability the job keeps each arriving update, e.g. 0.2");
      if (!(rate > 0 && rate <= 1)) {
        throw s.fail("rate", "must be in (0, 1], was " + rate);
      }
    } else if (mode.equals("declared-client-poisson")) {
      population = s.integer("populationSize", "number of clients that sample themselves");
      cohort = s.integer("expectedCohort", "expected number of clients per round");
      if (population < 1) {
        throw s.fail("populationSize", "must be >= 1, was " + population);
      }
      if (cohort < 1 || cohort > population) {
        throw s.fail("expectedCohort", "must be in [1, populationSize], was " + cohort);
      }
    }
    s.finish();
    return new JobSpec.Sampling(mode, rate, population, cohort);
  }

  private static JobSpec.Noise noise(YamlSection s) {
    if (s == null) {
      return new JobSpec.Noise("secure", 0, null, null);
    }
    String source = s.choice("source", "secure", List.of("secure", "keyed", "seeded"));
    long seed = 0;
    String keyFile = null;
    String keyEnv = null;
    if (source.equals("seeded")) {
      seed = s.integer("seed", "the public seed (tests and experiments only)");
    } else if (source.equals("keyed")) {
      keyFile = s.string("keyFile", null, "file holding the secret noise key");
      keyEnv = s.string("keyEnv", null, "environment variable holding the secret noise key");
      if ((keyFile == null) == (keyEnv == null)) {
        throw s.fail("keyFile", "or privacy.noise.keyEnv: set exactly one for source keyed");
      }
    }
    s.finish();
    return new JobSpec.Noise(source, seed, keyFile, keyEnv);
  }

  private static JobSpec.Topics topics(YamlSection s) {
    if (s == null) {
      return new JobSpec.Topics(
          "privagg.updates",
          "privagg.models",
          "privagg.rounds",
          "privagg.ledger",
          "privagg.rejects",
          "privagg.releases",
          "privagg.secure");
    }
    String models = s.string("models", "privagg.models", "public topic of GlobalModel records");
    JobSpec.Topics topics =
        new JobSpec.Topics(
            s.string("updates", "privagg.updates", "topic clients write ClientUpdate records to"),
            models,
            s.string("rounds", "privagg.rounds", "public topic of RoundAnnouncement records"),
            s.string("ledger", "privagg.ledger", "operator-internal privacy ledger topic"),
            s.string("rejects", "privagg.rejects", "operator-internal rejects topic"),
            s.string(
                "releases",
                models.equals("privagg.models") ? "privagg.releases" : models + ".releases",
                "operator-internal topic of committed releases, copied to models and rounds"),
            s.string(
                "secure",
                "privagg.secure",
                "the job's secure-aggregation phase messages, read by clients"));
    s.finish();
    List<String> names = new java.util.ArrayList<>(topics.all());
    names.add(topics.secure());
    if (new HashSet<>(names).size() != 7) {
      throw s.fail("", "must name seven different topics, was " + names);
    }
    return topics;
  }
}
