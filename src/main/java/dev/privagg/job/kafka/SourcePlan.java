package dev.privagg.job.kafka;

import dev.privagg.io.KafkaConnection;
import dev.privagg.io.TopicAdmin;

/**
 * How many readers the updates source runs: the job's parallelism, but no more than the updates
 * topic has partitions, so that every reader owns at least one partition.
 */
public record SourcePlan(String topic, int partitions, int jobParallelism) {
  public SourcePlan {
    if (!(partitions >= 1 && jobParallelism >= 1)) {
      throw new IllegalArgumentException(
          "partitions and jobParallelism must be >= 1, were "
              + partitions
              + " and "
              + jobParallelism);
    }
  }

  public int parallelism() {
    return Math.min(jobParallelism, partitions);
  }

  /** One line for logs and the CLI: what the source runs at, and why. */
  public String describe() {
    if (parallelism() < jobParallelism) {
      return ("updates source runs at %d subtasks, the rest of the job at %d: topic %s has %d"
              + " partitions, and a reader without a partition would hold event time back so no"
              + " round could close")
          .formatted(parallelism(), jobParallelism, topic, partitions);
    }
    return "updates source runs at %d subtasks (topic %s has %d partitions)"
        .formatted(parallelism(), topic, partitions);
  }

  /** Reads the updates topic's partition count now (the topic must exist). */
  public static SourcePlan read(KafkaConnection kafka, String updatesTopic, int jobParallelism) {
    return new SourcePlan(
        updatesTopic, TopicAdmin.partitionCount(kafka, updatesTopic), jobParallelism);
  }
}
