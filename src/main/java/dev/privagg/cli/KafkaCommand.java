package dev.privagg.cli;

import dev.privagg.io.KafkaConnection;

/**
 * A command that talks to Kafka: when a Kafka failure ends it, {@link Main} prints one line naming
 * the brokers, the principal, what was refused and the fix, not a stack trace.
 */
interface KafkaCommand {
  /** The connection the command uses, or null when it runs its own in-process broker. */
  KafkaConnection kafka();

  /** What the command was doing, for the message ("send an update"). */
  String attempt();
}
