package dev.privagg.job.kafka;

import dev.privagg.io.KafkaAccess;
import dev.privagg.io.KafkaConnection;
import dev.privagg.io.TopicAdmin;
import dev.privagg.spec.JobSpec;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.common.acl.AclOperation;

/**
 * What the job checks and prepares on Kafka before anything runs: the brokers answer, its principal
 * may do what it will do, and its topics exist with settings a client or a restart cannot exploit.
 */
public final class KafkaPreflight {
  /**
   * Room above the largest update for what an output record adds to it (a reject's reason, detail
   * and position; a model's privacy statement): topic limits and the sink's request size include
   * it.
   */
  public static final long OUTPUT_HEADROOM_BYTES = 1 << 20;

  /** Partitions of the updates topic when the job creates it. */
  public static final int DEFAULT_UPDATE_PARTITIONS = 2;

  private KafkaPreflight() {}

  /**
   * Before anything is defined: checks that the brokers answer and accept the job's credentials,
   * creates or checks its topics ({@link #ensureTopics}), and checks that the job's principal may
   * do on each topic what the job will do there, so that a missing ACL refuses the start in one
   * line instead of failing the running job's tasks over and over.
   *
   * @throws IllegalStateException one line naming the brokers, the principal, what was refused and
   *     the fix
   */
  public static List<String> prepareKafka(
      KafkaConnection kafka, List<JobSpec> specs, int updatePartitions) {
    // Before creating or checking topics (their failures do not name the topic), and again after.
    KafkaAccess.Needs needs = jobAccess(specs);
    KafkaAccess.require(kafka, needs);
    List<String> created;
    try {
      created = ensureTopics(kafka, specs, updatePartitions);
    } catch (IllegalStateException e) {
      throw e;
    } catch (Exception e) {
      throw KafkaAccess.explain(e, kafka, "create or check the job's topics");
    }
    KafkaAccess.require(kafka, needs);
    return created;
  }

  /**
   * What the job's principal does: on each topic, reads updates and writes heartbeat ticks to them;
   * writes releases, ledger and rejects; reads the ledger, releases and public topics at start;
   * checks every topic's configs. It commits its sources' offsets in its consumer groups and writes
   * with transactional ids, both named after {@link #clientPrefix}.
   */
  static KafkaAccess.Needs jobAccess(List<JobSpec> specs) {
    JobSpec.Topics t = specs.get(0).topics();
    Set<AclOperation> readWrite =
        Set.of(AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE_CONFIGS);
    Map<String, Set<AclOperation>> topics = new java.util.LinkedHashMap<>();
    for (String topic : List.of(t.updates(), t.models(), t.rounds(), t.ledger(), t.releases())) {
      topics.put(topic, readWrite);
    }
    topics.put(t.rejects(), Set.of(AclOperation.WRITE, AclOperation.DESCRIBE_CONFIGS));
    if (anySecure(specs)) {
      topics.put(t.secure(), Set.of(AclOperation.WRITE, AclOperation.DESCRIBE_CONFIGS));
    }
    String prefix = clientPrefix(specs);
    List<String> names = List.of(prefix, prefix + "-publisher");
    return new KafkaAccess.Needs(topics, names, names);
  }

  /**
   * The name of the job's consumer groups and transactional id prefixes ({@code privagg-} and a
   * hash of the served job ids), the same for every run of the same jobs.
   */
  public static String clientPrefix(List<JobSpec> specs) {
    return "privagg-" + Integer.toHexString(jobIds(specs).hashCode());
  }

  /**
   * Creates missing topics sized for the jobs' models, and refuses topics that exist with settings
   * a client or a restart could exploit (see {@link TopicAdmin#ensure}).
   */
  public static List<String> ensureTopics(
      KafkaConnection kafka, List<JobSpec> specs, int updatePartitions) throws Exception {
    JobSpec.Topics t = specs.get(0).topics();
    long maxUpdate = specs.stream().mapToLong(JobSpec::maxRecordBytes).max().orElseThrow();
    long maxModel = specs.stream().mapToLong(JobSpec::maxModelRecordBytes).max().orElseThrow();
    List<TopicAdmin.Requirement> updates =
        List.of(
            TopicAdmin.Requirement.exactly(
                "message.timestamp.type",
                "LogAppendTime",
                "round membership is the broker's append time; with CreateTime clients set it"),
            TopicAdmin.Requirement.exactly(
                "compression.type",
                "uncompressed",
                "a compressed batch may carry a record far above max.message.bytes"),
            // Above the job's limit, so oversize records reach the job and get a reject reason.
            TopicAdmin.Requirement.atLeast(
                "max.message.bytes",
                maxUpdate + OUTPUT_HEADROOM_BYTES,
                "records over the job's limit must reach it to be rejected with a reason"));
    // The models and the internal releases topic are compacted by key (job id; topic/job id):
    // each job's latest model (and announcement) stays, and a restart reads them in time
    // proportional to the jobs, not to the rounds ever released.
    List<TopicAdmin.Requirement> latestModels =
        List.of(
            TopicAdmin.Requirement.atLeast(
                "max.message.bytes", maxModel, "a model record over it fails every release"),
            TopicAdmin.Requirement.exactly(
                "cleanup.policy",
                "compact",
                "a restart continues from each job's latest model, which must never expire"));
    List<TopicAdmin.Requirement> ledger =
        List.of(
            TopicAdmin.Requirement.exactly(
                "cleanup.policy", "delete", "compaction would forget spent budget"),
            TopicAdmin.Requirement.exactly(
                "retention.ms", "-1", "expiry would forget spent budget"),
            TopicAdmin.Requirement.exactly(
                "retention.bytes", "-1", "deletion by size would forget spent budget"));
    List<TopicAdmin.Requirement> rejects =
        List.of(
            TopicAdmin.Requirement.atLeast(
                "max.message.bytes",
                maxUpdate + OUTPUT_HEADROOM_BYTES,
                "a reject carries the update's bytes; one the topic refuses fails the job"));
    List<TopicAdmin.TopicPlan> plans =
        new java.util.ArrayList<>(
            List.of(
                new TopicAdmin.TopicPlan(t.updates(), updatePartitions, updates),
                new TopicAdmin.TopicPlan(t.models(), 1, latestModels),
                new TopicAdmin.TopicPlan(t.rounds(), 1, List.of()),
                new TopicAdmin.TopicPlan(t.ledger(), 1, ledger),
                new TopicAdmin.TopicPlan(t.rejects(), 1, rejects),
                new TopicAdmin.TopicPlan(t.releases(), 1, latestModels)));
    if (anySecure(specs)) {
      long maxSecure = specs.stream().mapToLong(JobSpec::maxSecureRecordBytes).max().orElseThrow();
      plans.add(
          new TopicAdmin.TopicPlan(
              t.secure(),
              1,
              List.of(
                  TopicAdmin.Requirement.atLeast(
                      "max.message.bytes",
                      maxSecure,
                      "a round's roster of rounds.maxClients clients is one record"),
                  TopicAdmin.Requirement.exactly(
                      "cleanup.policy",
                      "delete",
                      "compaction keeps one record per job id and would delete a round's Opened"
                          + " and Roster before its clients read them"))));
    }
    return TopicAdmin.ensure(kafka, plans);
  }

  private static boolean anySecure(List<JobSpec> specs) {
    return specs.stream().anyMatch(JobSpec::secureAggregation);
  }

  private static String jobIds(List<JobSpec> specs) {
    return specs.stream().map(JobSpec::jobId).collect(Collectors.joining(","));
  }
}
